import { ethers } from "hardhat";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { ContractTransactionReceipt } from "ethers";
import type { ITokenFactory, SecurityToken, StoEscrow, TokenFactory } from "../../../typechain-types";

export const USDC = (n: number | bigint) => BigInt(n) * 10n ** 6n;
export const TOKENS = (n: number | bigint) => BigInt(n) * 10n ** 18n;
export const MAGNITUDE = 2n ** 128n;

/** Implementations, factory and a 6-decimal payment token; no tokenization yet. */
export async function deployFactoryFixture() {
  const [deployer, tokenizer, alice, bob, carol, dave, outsider] = await ethers.getSigners();
  const usdc = await ethers.deployContract("TestERC20", ["USD Coin", "USDC", 6]);
  const tokenImpl = await ethers.deployContract("SecurityToken");
  const escrowImpl = await ethers.deployContract("StoEscrow");
  const factory = await ethers.deployContract("TokenFactory", [tokenImpl.target, escrowImpl.target]);
  return { deployer, tokenizer, alice, bob, carol, dave, outsider, usdc, tokenImpl, escrowImpl, factory };
}

export function tokenizationParams(
  paymentToken: string,
  overrides: Partial<ITokenFactory.TokenizationParamsStruct> = {},
): ITokenFactory.TokenizationParamsStruct {
  return {
    name: "Harbour Office Building",
    symbol: "HOB",
    decimals: 18,
    supplyCap: 0n,
    paymentToken,
    initialHolders: [],
    preMints: [],
    ...overrides,
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
 * whitelisted with no balance, and dave / outsider not whitelisted.
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
 * Deploys a bare EIP-1167 clone of `implementation` without initializing it, to reach initializer checks the factory
 * never triggers (it always passes non-zero addresses).
 */
export async function deployRawClone(deployer: HardhatEthersSigner, implementation: string): Promise<string> {
  const initCode =
    "0x3d602d80600a3d3981f3363d3d373d3d3d363d73" +
    implementation.slice(2).toLowerCase() +
    "5af43d82803e903d91602b57fd5bf3";
  const receipt = await (await deployer.sendTransaction({ data: initCode })).wait();
  if (!receipt?.contractAddress) throw new Error("clone not deployed");
  return receipt.contractAddress;
}
