/**
 * Storage layouts checked with OpenZeppelin's upgrades-core on Hardhat's build info (the compiler output includes
 * `storageLayout`: hardhat.config.ts). SecurityToken and StoEscrow are upgrade-safe UUPS implementations; the V2 mocks
 * the upgrade test moves to are layout-compatible with them; and a mock that inserts a field at the head of
 * SecurityToken's namespaced struct is refused, so an incompatible layout fails this test.
 *
 * Namespaced (ERC-7201) structs only appear in a storage layout when the compiler sees a state variable of their type:
 * as OpenZeppelin's Hardhat plugin does, the sources are rewritten with upgrades-core's `makeNamespacedInput` and
 * compiled again (storage layout only) with the same solc, and that output is given to `validate`.
 */
import { expect } from "chai";
import hre, { ethers } from "hardhat";
import {
  type SolcInput,
  type SolcOutput,
  type StorageLayout,
  type ValidationRunData,
  assertStorageUpgradeSafe,
  getContractVersion,
  getErrors,
  getStorageLayout,
  getStorageUpgradeErrors,
  makeNamespacedInput,
  solcInputOutputDecoder,
  validate,
} from "@openzeppelin/upgrades-core";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { SECURITY_TOKEN_STORAGE, TOKEN_SLOT, TOKENS, tokenFixture, tokenMappingWord } from "./helpers";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc: { compile(input: string): string; version(): string } = require("solc");

const NAMES = {
  token: "contracts/tokenization/SecurityToken.sol:SecurityToken",
  escrow: "contracts/tokenization/StoEscrow.sol:StoEscrow",
  tokenV2: "contracts/mocks/SecurityTokenV2Mock.sol:SecurityTokenV2Mock",
  escrowV2: "contracts/mocks/StoEscrowV2Mock.sol:StoEscrowV2Mock",
  badLayout: "contracts/mocks/SecurityTokenBadLayoutMock.sol:SecurityTokenBadLayoutMock",
};
const TOKEN_NAMESPACE = "erc7201:tak.storage.SecurityToken";

/** upgrades-core's validation of each build info, by build info id (Hardhat may split a project into several). */
const validations = new Map<string, ValidationRunData>();

async function validationOf(fullyQualifiedName: string): Promise<ValidationRunData> {
  const buildInfo = await hre.artifacts.getBuildInfo(fullyQualifiedName);
  if (!buildInfo) throw new Error(`no build info for ${fullyQualifiedName}: run npx hardhat compile`);
  const cached = validations.get(buildInfo.id);
  if (cached) return cached;
  const [source, name] = fullyQualifiedName.split(":");
  const output = buildInfo.output as unknown as SolcOutput;
  const input = buildInfo.input as unknown as SolcInput;
  expect(output.contracts[source][name].storageLayout, "storageLayout in the build info (hardhat.config.ts)").to.not.equal(
    undefined,
  );
  expect(solc.version()).to.match(new RegExp(`^${buildInfo.solcVersion.replace(/\./g, "\\.")}\\+`));
  const namespacedOutput = JSON.parse(solc.compile(JSON.stringify(makeNamespacedInput(input, output, buildInfo.solcVersion))));
  const errors = (namespacedOutput.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  expect(errors, "the namespaced compilation").to.deep.equal([]);
  const run = validate(output, solcInputOutputDecoder(input, output), buildInfo.solcVersion, input, namespacedOutput);
  validations.set(buildInfo.id, run);
  return run;
}

async function versionOf(fullyQualifiedName: string) {
  const run = await validationOf(fullyQualifiedName);
  return { run, version: getContractVersion(run, fullyQualifiedName) };
}

async function layoutOf(fullyQualifiedName: string): Promise<StorageLayout> {
  const { run, version } = await versionOf(fullyQualifiedName);
  return getStorageLayout([run], version);
}

describe("Storage layouts (OpenZeppelin upgrades-core)", function () {
  this.timeout(300_000);

  it("SecurityToken, StoEscrow and their V2 mocks are upgrade-safe UUPS implementations", async function () {
    for (const name of Object.values(NAMES).filter((n) => n !== NAMES.badLayout)) {
      const { run, version } = await versionOf(name);
      const errors = getErrors([run], version, { kind: "uups" });
      expect(
        errors.map((e) => `${e.kind} at ${e.src}`),
        name,
      ).to.deep.equal([]);
    }
  });

  it("keep everything in ERC-7201 namespaces: no plain storage slot is used", async function () {
    const token = await layoutOf(NAMES.token);
    expect(token.storage).to.deep.equal([]);
    expect(Object.keys(token.namespaces ?? {}).sort()).to.deep.equal([
      "erc7201:openzeppelin.storage.AccessControl",
      "erc7201:openzeppelin.storage.AccessControlDefaultAdminRules",
      "erc7201:openzeppelin.storage.ERC20",
      "erc7201:openzeppelin.storage.Initializable",
      "erc7201:openzeppelin.storage.Pausable",
      "erc7201:tak.storage.DelayedUpgrades",
      TOKEN_NAMESPACE,
    ]);
    const escrow = await layoutOf(NAMES.escrow);
    expect(escrow.storage).to.deep.equal([]);
    expect(Object.keys(escrow.namespaces ?? {}).sort()).to.deep.equal([
      "erc7201:openzeppelin.storage.Initializable",
      "erc7201:tak.storage.DelayedUpgrades",
      "erc7201:tak.storage.StoEscrow",
    ]);
  });

  it("the V2 mocks are layout-compatible with the implementations they upgrade", async function () {
    const [token, tokenV2, escrow, escrowV2] = await Promise.all(
      [NAMES.token, NAMES.tokenV2, NAMES.escrow, NAMES.escrowV2].map(layoutOf),
    );
    expect(getStorageUpgradeErrors(token, tokenV2)).to.deep.equal([]);
    expect(getStorageUpgradeErrors(escrow, escrowV2)).to.deep.equal([]);
    expect(() => assertStorageUpgradeSafe(token, tokenV2, false)).to.not.throw();
  });

  it("refuses a layout with a field inserted in SecurityToken's namespaced struct", async function () {
    const [token, bad] = await Promise.all([NAMES.token, NAMES.badLayout].map(layoutOf));
    const errors = getStorageUpgradeErrors(token, bad);
    expect(errors[0]).to.include({ kind: "insert" });
    expect(errors[0]).to.have.nested.property("updated.label", "inserted");
    // Every field after it would be read from the wrong slot.
    const moved = errors.filter((e) => e.kind === "layoutchange").map((e) => (e as { updated: { label: string } }).updated.label);
    expect(moved).to.include.members(["escrow", "frozenTokens", "investorOf", "corrections", "recoveries"]);
    expect(() => assertStorageUpgradeSafe(token, bad, false)).to.throw(/Inserted `inserted`/);
  });

  it("the tests' direct storage reads (helpers.ts) use the compiler's slots", async function () {
    const token = await layoutOf(NAMES.token);
    const slots = Object.fromEntries(token.namespaces![TOKEN_NAMESPACE].map((item) => [item.label, BigInt(item.slot!)]));
    for (const [label, slot] of Object.entries(TOKEN_SLOT)) expect(slots[label], label).to.equal(slot);
    // And the namespace's root: mappings read through it agree with the token's views.
    const { token: deployed, tokenizer, alice, bob } = await loadFixture(tokenFixture);
    await deployed.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(3));
    expect(await tokenMappingWord(deployed, TOKEN_SLOT.frozenTokens, alice.address)).to.equal(TOKENS(3));
    expect(await tokenMappingWord(deployed, TOKEN_SLOT.investorOf, bob.address)).to.equal(BigInt(await deployed.investorOf(bob.address)));
    expect(
      BigInt(await ethers.provider.getStorage(deployed.target, SECURITY_TOKEN_STORAGE + 1n)),
      "paymentToken in slot 1",
    ).to.equal(BigInt(await deployed.paymentToken()));
  });
});
