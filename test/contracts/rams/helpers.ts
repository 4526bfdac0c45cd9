import { expect } from "chai";
import hre from "hardhat";
import type { Signer, TypedDataField } from "ethers";
import type { IAgentMandate } from "../../../typechain-types";

const { ethers } = hre;

/** IComplianceProvider.ReasonCode, in declaration order. */
export const ReasonCode = {
  COMPLIANT: 0,
  KYC_EXPIRED: 1,
  AML_FLAG: 2,
  NOT_ACCREDITED: 3,
  NOT_QUALIFIED: 4,
  JURISDICTION_BLOCKED: 5,
  IDENTITY_NOT_FOUND: 6,
  ATTESTATION_REVOKED: 7,
  OTHER: 8,
} as const;

/** The ERC-20 transferFrom selector and its RAMS action label (selector left-aligned in a bytes32). */
export const TRANSFER_FROM = "0x23b872dd";
export const APPROVE = "0x095ea7b3";
export const label = (selector: string): string => ethers.zeroPadBytes(selector, 32);
export const ACTION = label(TRANSFER_FROM);
/** bytes32(uint256(0xdead)), the reference tests' label that is never enabled. */
export const OTHER_ACTION = ethers.toBeHex(0xdead, 32);
export const MAX = ethers.MaxUint256;
export const DAY = 24 * 3600;

/**
 * The ERC-165 id of a compiled interface: the XOR of its own function selectors. Functions inherited from IERC165
 * appear in the artifact's ABI but are not part of `type(I).interfaceId`, so supportsInterface is left out.
 */
export async function interfaceIdOf(name: string): Promise<string> {
  const iface = new ethers.Interface((await hre.artifacts.readArtifact(name)).abi);
  let id = 0n;
  iface.forEachFunction((fn) => {
    if (fn.name !== "supportsInterface") id ^= BigInt(fn.selector);
  });
  return ethers.toBeHex(id, 4);
}

/**
 * Asserts that every function and event of the compiled interface `iface` appears, entry for entry (names, types,
 * indexed flags, output names, mutability), in the ABI of the compiled contract `impl`.
 */
export async function expectAbiSubset(iface: string, impl: string): Promise<void> {
  type Entry = { type: string; name?: string };
  const implAbi = (await hre.artifacts.readArtifact(impl)).abi as Entry[];
  const ifaceAbi = (await hre.artifacts.readArtifact(iface)).abi as Entry[];
  for (const entry of ifaceAbi.filter((e) => e.type === "function" || e.type === "event")) {
    const match = implAbi.find((e) => e.type === entry.type && e.name === entry.name);
    expect(match, `${impl} has ${entry.type} ${entry.name}`).to.deep.equal(entry);
  }
}

/** ERC-8226 EIP-712 types, exactly as the standard writes them. */
export const TYPES: Record<string, Record<string, TypedDataField[]>> = {
  GrantMandate: {
    GrantMandate: [
      { name: "agent", type: "address" },
      { name: "validFrom", type: "uint48" },
      { name: "validUntil", type: "uint48" },
      { name: "principal", type: "address" },
      { name: "complianceProvider", type: "address" },
      { name: "identityRef", type: "bytes32" },
      { name: "asset", type: "address" },
      { name: "maxTransactionValue", type: "uint256" },
      { name: "maxCumulativeValue", type: "uint256" },
      { name: "metadata", type: "bytes32" },
      { name: "actions", type: "bytes32[]" },
      { name: "nonce", type: "uint256" },
      { name: "deadline", type: "uint256" },
    ],
  },
  RevokeMandate: {
    RevokeMandate: [
      { name: "agent", type: "address" },
      { name: "principal", type: "address" },
      { name: "nonce", type: "uint256" },
      { name: "deadline", type: "uint256" },
    ],
  },
  ExtendMandate: {
    ExtendMandate: [
      { name: "agent", type: "address" },
      { name: "principal", type: "address" },
      { name: "newValidUntil", type: "uint48" },
      { name: "nonce", type: "uint256" },
      { name: "deadline", type: "uint256" },
    ],
  },
  SetOperator: {
    SetOperator: [
      { name: "principal", type: "address" },
      { name: "operator", type: "address" },
      { name: "approved", type: "bool" },
      { name: "nonce", type: "uint256" },
      { name: "deadline", type: "uint256" },
    ],
  },
};

/** The type strings ERC-8226 fixes, and the keccak256 of each, written out rather than computed from TYPES. */
export const TYPE_STRINGS: Record<string, { typeString: string; typehash: string }> = {
  GrantMandate: {
    typeString:
      "GrantMandate(address agent,uint48 validFrom,uint48 validUntil,address principal,address complianceProvider,bytes32 identityRef,address asset,uint256 maxTransactionValue,uint256 maxCumulativeValue,bytes32 metadata,bytes32[] actions,uint256 nonce,uint256 deadline)",
    typehash: "0x7d01769725671d85165a84e94a3afcba0a23a33398bdbc594398420c2518d2fe",
  },
  RevokeMandate: {
    typeString: "RevokeMandate(address agent,address principal,uint256 nonce,uint256 deadline)",
    typehash: "0x47fb4e59dfb5cf21fa2db3965d4bbcff79be451425d54b20a666ba60f443e041",
  },
  ExtendMandate: {
    typeString: "ExtendMandate(address agent,address principal,uint48 newValidUntil,uint256 nonce,uint256 deadline)",
    typehash: "0xea6ad4af4f984bb3909c7cde143ec5f5fd8efdd62fd18ff9f716851a26988a3d",
  },
  SetOperator: {
    typeString: "SetOperator(address principal,address operator,bool approved,uint256 nonce,uint256 deadline)",
    typehash: "0x3cd2ecd58a6dd42bb805dad60456f4925ef010b13e67f4d884d52b2e5c44cc19",
  },
};

/** The registry's EIP-712 domain. */
export async function domainOf(mandate: { getAddress(): Promise<string> }) {
  const { chainId } = await ethers.provider.getNetwork();
  return { name: "RAMS", version: "1", chainId, verifyingContract: await mandate.getAddress() };
}

export type GrantParams = IAgentMandate.GrantMandateParamsStruct;

/** Signs a GrantMandate for `params` with the given nonce (the registry's current one by default). */
export async function signGrant(
  signer: Signer,
  mandate: IAgentMandate,
  params: GrantParams,
  nonce?: bigint,
): Promise<string> {
  const n = nonce ?? (await mandate.nonces(await resolve(params.principal)));
  return signer.signTypedData(await domainOf(mandate), TYPES.GrantMandate, { ...params, nonce: n });
}

export async function signRevoke(
  signer: Signer,
  mandate: IAgentMandate,
  value: { agent: string; principal: string; deadline: bigint | number },
  nonce?: bigint,
): Promise<string> {
  const n = nonce ?? (await mandate.nonces(value.principal));
  return signer.signTypedData(await domainOf(mandate), TYPES.RevokeMandate, { ...value, nonce: n });
}

export async function signExtend(
  signer: Signer,
  mandate: IAgentMandate,
  value: { agent: string; principal: string; newValidUntil: bigint | number; deadline: bigint | number },
  nonce?: bigint,
): Promise<string> {
  const n = nonce ?? (await mandate.nonces(value.principal));
  return signer.signTypedData(await domainOf(mandate), TYPES.ExtendMandate, { ...value, nonce: n });
}

export async function signSetOperator(
  signer: Signer,
  mandate: IAgentMandate,
  value: { principal: string; operator: string; approved: boolean; deadline: bigint | number },
  nonce?: bigint,
): Promise<string> {
  const n = nonce ?? (await mandate.nonces(value.principal));
  return signer.signTypedData(await domainOf(mandate), TYPES.SetOperator, { ...value, nonce: n });
}

async function resolve(address: GrantParams["principal"]): Promise<string> {
  return ethers.resolveAddress(address);
}
