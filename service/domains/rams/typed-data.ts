import { TypedDataEncoder, verifyTypedData } from "ethers";

/**
 * The EIP-712 payloads of the four signable RAMS operations (ERC-8226; the type strings and their typehashes are pinned
 * in test/contracts/rams/helpers.ts): domain RAMS / 1 / chainId / the registry. `types` holds only the primary type (no
 * EIP712Domain), so ethers `signTypedData(domain, types, message)` signs a payload exactly as this service returns it.
 */

export const RAMS_TYPES = {
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
  RevokeMandate: [
    { name: "agent", type: "address" },
    { name: "principal", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
  ExtendMandate: [
    { name: "agent", type: "address" },
    { name: "principal", type: "address" },
    { name: "newValidUntil", type: "uint48" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
  SetOperator: [
    { name: "principal", type: "address" },
    { name: "operator", type: "address" },
    { name: "approved", type: "bool" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
} as const;

export type RamsPrimaryType = keyof typeof RAMS_TYPES;

/** The operations of GET /rams/typed-data/{operation} and their primary types. */
export const SIGNED_OPERATIONS = {
  "grant-mandate": "GrantMandate",
  "revoke-mandate": "RevokeMandate",
  "extend-mandate": "ExtendMandate",
  "set-operator": "SetOperator",
} as const satisfies Record<string, RamsPrimaryType>;
export type SignedOperation = keyof typeof SIGNED_OPERATIONS;

export interface RamsTypedData {
  domain: { name: "RAMS"; version: "1"; chainId: number; verifyingContract: string };
  types: Record<string, { name: string; type: string }[]>;
  primaryType: RamsPrimaryType;
  /** Integers as decimal strings (caps may exceed 2^53), booleans and addresses as such. */
  message: Record<string, string | boolean | string[]>;
}

export function ramsTypedData(
  primaryType: RamsPrimaryType,
  chainId: number,
  registry: string,
  message: Record<string, string | boolean | string[]>,
): RamsTypedData {
  return {
    domain: { name: "RAMS", version: "1", chainId, verifyingContract: registry },
    types: { [primaryType]: RAMS_TYPES[primaryType].map((f) => ({ ...f })) },
    primaryType,
    message,
  };
}

/** The EIP-712 digest the principal signs; also the payload's stable id (typedDataId). */
export function typedDataDigest(t: RamsTypedData): string {
  return TypedDataEncoder.hash(t.domain, t.types, t.message);
}

/** The account whose ECDSA signature `signature` is over `t`; undefined when it is not a recoverable signature. */
export function recoverSigner(t: RamsTypedData, signature: string): string | undefined {
  try {
    return verifyTypedData(t.domain, t.types, t.message, signature);
  } catch {
    return undefined;
  }
}
