import { ethers } from "hardhat";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { AddressLike, ContractTransactionReceipt } from "ethers";
import type { ITokenFactory, SecurityToken, StoEscrow, TokenFactory } from "../../../typechain-types";

export const USDC = (n: number | bigint) => BigInt(n) * 10n ** 6n;
export const TOKENS = (n: number | bigint) => BigInt(n) * 10n ** 18n;
export const MAGNITUDE = 2n ** 128n;
export const DAY = 24 * 3600;
/** SecurityToken's default recovery delay and DelayedUpgrades' upgrade delay. */
export const RECOVERY_DELAY = 2 * DAY;
export const UPGRADE_DELAY = 7 * DAY;

export const ROLE = {
  ADMIN: ethers.ZeroHash,
  MINTER: ethers.id("MINTER_ROLE"),
  WHITELISTER: ethers.id("WHITELISTER_ROLE"),
  FREEZER: ethers.id("FREEZER_ROLE"),
  ENFORCER: ethers.id("ENFORCER_ROLE"),
  RECOVERY: ethers.id("RECOVERY_ROLE"),
  PAUSER: ethers.id("PAUSER_ROLE"),
};

/** The restriction codes of contracts/tokenization/TransferRestrictions.sol. */
export const CODE = {
  SUCCESS: 0n,
  PAUSED: 1n,
  SENDER_NOT_WHITELISTED: 2n,
  RECEIVER_NOT_WHITELISTED: 3n,
  SENDER_FROZEN: 4n,
  RECEIVER_FROZEN: 5n,
  INSUFFICIENT_BALANCE: 6n,
  INSUFFICIENT_UNFROZEN_BALANCE: 7n,
  SUPPLY_CAP_EXCEEDED: 8n,
};

/** The investor id a wallet is bound to by default in these tests: one investor per wallet. */
export const investorIdOf = (wallet: string) => ethers.id(`investor:${wallet.toLowerCase()}`);
/** A named investor, for tests that bind several wallets to one investor. */
export const INVESTOR = (name: string) => ethers.id(`investor:${name}`);

/**
 * Implementations, a factory owned by `deployer` (the platform, which publishes implementations) and a 6-decimal
 * payment token; no tokenization yet.
 */
export async function deployFactoryFixture() {
  const [deployer, tokenizer, alice, bob, carol, dave, outsider] = await ethers.getSigners();
  const usdc = await ethers.deployContract("TestERC20", ["USD Coin", "USDC", 6]);
  const tokenImpl = await ethers.deployContract("SecurityToken");
  const escrowImpl = await ethers.deployContract("StoEscrow");
  const factory = await ethers.deployContract("TokenFactory", [tokenImpl.target, escrowImpl.target, deployer.address]);
  return { deployer, tokenizer, alice, bob, carol, dave, outsider, usdc, tokenImpl, escrowImpl, factory };
}

/**
 * Tokenization parameters; each initial holder is bound to its own investor (`investorIdOf`) unless
 * `initialInvestorIds` is given.
 */
export function tokenizationParams(
  paymentToken: string,
  overrides: Partial<ITokenFactory.TokenizationParamsStruct> = {},
): ITokenFactory.TokenizationParamsStruct {
  const initialHolders = (overrides.initialHolders ?? []) as string[];
  return {
    name: "Harbour Office Building",
    symbol: "HOB",
    decimals: 18,
    supplyCap: 0n,
    paymentToken,
    preMints: initialHolders.map(() => 0n),
    initialInvestorIds: initialHolders.map(investorIdOf),
    ...overrides,
    initialHolders,
  };
}

/** Calls the factory as `caller` and returns the typed token and escrow from the TokenCreated event. */
export async function createTokenization(
  factory: TokenFactory,
  caller: HardhatEthersSigner,
  params: ITokenFactory.TokenizationParamsStruct,
): Promise<{ token: SecurityToken; escrow: StoEscrow; receipt: ContractTransactionReceipt }> {
  const receipt = await (await factory.connect(caller).newTokenization(params)).wait();
  if (!receipt) throw new Error("no receipt");
  for (const log of receipt.logs) {
    const parsed = factory.interface.parseLog(log);
    if (parsed?.name === "TokenCreated") {
      return {
        token: await ethers.getContractAt("SecurityToken", parsed.args.token as string),
        escrow: await ethers.getContractAt("StoEscrow", parsed.args.escrow as string),
        receipt,
      };
    }
  }
  throw new Error("TokenCreated not emitted");
}

/**
 * A tokenization by `tokenizer` with alice (1000 tokens) and bob (500 tokens) preminted and whitelisted, carol
 * whitelisted with no balance (each bound to an investor of its own), and dave / outsider not whitelisted.
 */
export async function tokenFixture() {
  const base = await deployFactoryFixture();
  const { factory, tokenizer, alice, bob, carol, usdc } = base;
  const { token, escrow } = await createTokenization(
    factory,
    tokenizer,
    tokenizationParams(await usdc.getAddress(), {
      initialHolders: [alice.address, bob.address, carol.address],
      preMints: [TOKENS(1000), TOKENS(500), 0n],
    }),
  );
  return { ...base, token, escrow };
}

/**
 * An ERC-1967 proxy of `implementation` left uninitialized, to reach the initializer checks the factory never
 * triggers (it always passes non-zero addresses). Whoever initializes it becomes its registry. OpenZeppelin's
 * ERC1967Proxy refuses empty construction data (ERC1967ProxyUninitialized), so it is given a view call
 * (`implementation()`, which both SecurityToken and StoEscrow have), which initializes nothing.
 */
export async function deployRawProxy(implementation: AddressLike): Promise<string> {
  const view = ethers.id("implementation()").slice(0, 10);
  const proxy = await ethers.deployContract("ERC1967Proxy", [implementation, view]);
  return proxy.getAddress();
}

/** keccak256(abi.encode(uint256(keccak256("tak.storage.SecurityToken")) - 1)) & ~0xff: SecurityToken's namespace. */
export const SECURITY_TOKEN_STORAGE = BigInt(
  ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(["uint256"], [BigInt(ethers.id("tak.storage.SecurityToken")) - 1n])),
) & ~0xffn;

/**
 * Slots of SecurityToken's namespaced struct (in declaration order; `escrow`, `decimals` and `recoveryDelay` share
 * the first). storage-layout.test.ts checks these offsets against the compiler's layout.
 */
export const TOKEN_SLOT = {
  magnifiedDividendPerShare: 4n,
  carriedRemainder: 5n,
  flags: 7n,
  frozenTokens: 8n,
  investorOf: 9n,
  corrections: 10n,
  withdrawn: 11n,
};

function mappingSlot(field: bigint, key: string): string {
  return ethers.keccak256(
    ethers.AbiCoder.defaultAbiCoder().encode(["address", "uint256"], [key, SECURITY_TOKEN_STORAGE + field]),
  );
}

/**
 * A holder's whole dividend entitlement as the token keeps it, magnified by MAGNITUDE and not floored:
 * magnifiedDividendPerShare × balance + correction. `accumulativeDividendOf` is this divided by MAGNITUDE.
 */
export async function magnifiedEntitlementOf(token: SecurityToken, holder: string): Promise<bigint> {
  const address = await token.getAddress();
  const pps = BigInt(await ethers.provider.getStorage(address, SECURITY_TOKEN_STORAGE + TOKEN_SLOT.magnifiedDividendPerShare));
  const correction = BigInt.asIntN(256, BigInt(await ethers.provider.getStorage(address, mappingSlot(TOKEN_SLOT.corrections, holder))));
  return pps * (await token.balanceOf(holder)) + correction;
}

/** The raw storage word of `field[holder]` in SecurityToken's namespace (for the layout checks). */
export async function tokenMappingWord(token: SecurityToken, field: bigint, holder: string): Promise<bigint> {
  return BigInt(await ethers.provider.getStorage(await token.getAddress(), mappingSlot(field, holder)));
}
