/**
 * Holds the rule "a test for every revert path" to the tokenization contracts: every custom error that SecurityToken,
 * StoEscrow and TokenFactory can revert with (their own, DelayedUpgrades', and those of the OpenZeppelin code they
 * run) is asserted by name in at least one test of this folder (or the RAMS test on our token, or a model-checked
 * property), or is listed below as unreachable with the reason. A new error without a test fails here; so does an
 * entry below that a test now reaches, or that no contract declares any more.
 */
import { expect } from "chai";
import fs from "node:fs";
import path from "node:path";
import { artifacts } from "hardhat";

const CONTRACTS = ["SecurityToken", "StoEscrow", "TokenFactory"];

/** Errors in the ABIs that no call can reach, and why. */
const UNREACHABLE: Record<string, string> = {
  AddressEmptyCode:
    "Address.functionDelegateCall in upgradeToAndCall: the target is an implementation the factory published, which has code (publishing checks it) and answered proxiableUUID before",
  NotInitializing: "only internal __*_init functions carry onlyInitializing, and only initialize() calls them",
  ZeroRegistry: "the registry is initialize()'s msg.sender, which is never the zero address",
  ERC20InvalidApprover: "approvals are only made by msg.sender, which is never the zero address",
  SafeCastOverflowedIntToUint:
    "a magnified entitlement (pps x balance + correction) is never negative: the property tests check it after every step",
  SafeCastOverflowedUintToInt:
    "pps x amount stays below 2^255 for any realistic payment token: it needs about 2^127 payment units distributed per supply (see the report on issue 48)",
};

function testSources(): string {
  const here = __dirname;
  const files = fs
    .readdirSync(here)
    .filter((f) => f.endsWith(".ts") && f !== path.basename(__filename))
    .map((f) => path.join(here, f));
  files.push(path.join(here, "..", "rams", "security-token-execution.test.ts"));
  return files.map((f) => fs.readFileSync(f, "utf8")).join("\n");
}

/** Error names a test asserts: revertedWithCustomError(x, "Name"), a model's { name: "Name" }, failsWith(tx, "Name"). */
function assertedErrors(source: string): Set<string> {
  const names = new Set<string>();
  for (const pattern of [
    /revertedWithCustomError\(\s*[\w.]+\s*,\s*"(\w+)"/g,
    /\{ name: "(\w+)"/g,
    /name: [^,]*\? "(\w+)" : "(\w+)"/g,
    /failsWith\([^,]+,\s*"(\w+)"/g,
  ]) {
    for (const m of source.matchAll(pattern)) for (const name of m.slice(1)) if (name) names.add(name);
  }
  return names;
}

describe("Every revert path of the tokenization contracts has a test", function () {
  it("each custom error of SecurityToken, StoEscrow and TokenFactory is asserted by a test, or unreachable for a stated reason", async function () {
    const asserted = assertedErrors(testSources());
    const declared = new Set<string>();
    const missing: string[] = [];
    for (const name of CONTRACTS) {
      const { abi } = await artifacts.readArtifact(name);
      for (const item of abi) {
        if (item.type !== "error") continue;
        declared.add(item.name);
        if (!asserted.has(item.name) && !(item.name in UNREACHABLE)) missing.push(`${name}.${item.name}`);
      }
    }
    expect(missing, "errors no test asserts").to.deep.equal([]);
    for (const name of Object.keys(UNREACHABLE)) {
      expect(declared.has(name), `${name} is declared by a contract`).to.equal(true);
      expect(asserted.has(name), `${name} is asserted by a test: remove it from UNREACHABLE`).to.equal(false);
    }
  });

  it("each guarded function of SecurityToken is refused to a caller without its role by the role matrix", async function () {
    const source = fs.readFileSync(path.join(__dirname, "..", "..", "..", "contracts", "tokenization", "SecurityToken.sol"), "utf8");
    const guarded = [...source.matchAll(/function (\w+)\([^)]*\)[^{]*onlyRole\((\w+)\)/g)].map((m) => m[1]);
    const matrix = fs.readFileSync(path.join(__dirname, "roles.test.ts"), "utf8");
    const covered = new Set([...matrix.matchAll(/name: "(\w+)"/g)].map((m) => m[1]));
    // unpause is checked beside the matrix (it needs a paused token to succeed).
    const notCovered = guarded.filter((f) => !covered.has(f) && f !== "unpause");
    expect(guarded.length).to.be.greaterThan(10);
    expect(notCovered, "onlyRole functions missing from roles.test.ts' restrictedCalls").to.deep.equal([]);
  });
});
