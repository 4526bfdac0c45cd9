import { keccak256 } from "ethers";
import { checksumAddress } from "./checksum-address";

/**
 * The EIP-1559 (type 2) transactions the relayer and the settlement wallet sign, serialized without ethers' Transaction:
 * its setters and RLP encoder read hex one byte at a time through getBytes (~0.3 ms per signed transaction, about a
 * thirtieth of a paid operation's CPU). Only the plain form is taken here: type 2, a recipient, no access list, fields
 * given as numbers, bigints, or decimal or 0x-hex strings; `eip1559Fields` answers undefined for anything else and the
 * caller lets ethers do it. Held to ethers' bytes by test/engine/secp256k1.test.ts.
 */
export interface Eip1559Fields {
  chainId: bigint;
  nonce: bigint;
  maxPriorityFeePerGas: bigint;
  maxFeePerGas: bigint;
  gasLimit: bigint;
  /** Checksummed. */
  to: string;
  value: bigint;
  data: Buffer;
}

const KEYS = new Set([
  "type",
  "chainId",
  "nonce",
  "maxPriorityFeePerGas",
  "maxFeePerGas",
  "gasLimit",
  "to",
  "value",
  "data",
  "from",
]);
const UINT256_LIMIT = 2n ** 256n;
const HEX_BYTES = /^0x([0-9a-fA-F]{2})*$/;
const INTEGER = /^(0x[0-9a-fA-F]+|[0-9]+)$/;

/** A non-negative integer below 2^256, or undefined when `value` is not given in one of the plain forms. */
function uint(value: unknown, absent?: bigint): bigint | undefined {
  if (value === undefined || value === null) return absent;
  let n: bigint;
  if (typeof value === "bigint") n = value;
  else if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) return undefined;
    n = BigInt(value);
  } else if (typeof value === "string" && INTEGER.test(value)) n = BigInt(value);
  else return undefined;
  return n >= 0n && n < UINT256_LIMIT ? n : undefined;
}

/** The request's fields when it is a plain type-2 transaction this module serializes; undefined otherwise. */
export function eip1559Fields(request: Record<string, unknown>): Eip1559Fields | undefined {
  if (request.type !== 2 && request.type !== "0x2" && request.type !== "0x02") return undefined;
  for (const key of Object.keys(request)) if (!KEYS.has(key) && request[key] !== undefined) return undefined;
  const data = request.data ?? "0x";
  if (typeof request.to !== "string" || typeof data !== "string" || !HEX_BYTES.test(data)) return undefined;
  const fields = {
    chainId: uint(request.chainId),
    nonce: uint(request.nonce, 0n),
    maxPriorityFeePerGas: uint(request.maxPriorityFeePerGas),
    maxFeePerGas: uint(request.maxFeePerGas),
    gasLimit: uint(request.gasLimit),
    value: uint(request.value, 0n),
  };
  if (Object.values(fields).some((v) => v === undefined) || fields.nonce! > BigInt(Number.MAX_SAFE_INTEGER))
    return undefined;
  // ethers refuses a tip above the fee cap: so does the caller, through ethers.
  if (fields.maxPriorityFeePerGas! > fields.maxFeePerGas!) return undefined;
  return {
    ...(fields as { [K in keyof typeof fields]: bigint }),
    to: checksumAddress(request.to),
    data: Buffer.from(data.slice(2), "hex"),
  };
}

/** The big-endian bytes of `n` without leading zeros (zero is no bytes), as RLP encodes an integer. */
function integerBytes(n: bigint): Buffer {
  if (n === 0n) return Buffer.alloc(0);
  const hex = n.toString(16);
  return Buffer.from(hex.length % 2 ? "0" + hex : hex, "hex");
}

/** An RLP length prefix: `offset` + length when short, else `offset` + 55 + the length's own byte count, then it. */
function prefix(length: number, offset: number): Buffer {
  if (length <= 55) return Buffer.from([offset + length]);
  const size = integerBytes(BigInt(length));
  return Buffer.concat([Buffer.from([offset + 55 + size.length]), size]);
}

function rlpBytes(bytes: Buffer): Buffer {
  if (bytes.length === 1 && bytes[0] < 0x80) return bytes;
  return Buffer.concat([prefix(bytes.length, 0x80), bytes]);
}

function rlpList(items: Buffer[]): Buffer {
  const payload = Buffer.concat(items);
  return Buffer.concat([prefix(payload.length, 0xc0), payload]);
}

const EMPTY_ACCESS_LIST = Buffer.from([0xc0]);

function fieldItems(f: Eip1559Fields): Buffer[] {
  return [
    rlpBytes(integerBytes(f.chainId)),
    rlpBytes(integerBytes(f.nonce)),
    rlpBytes(integerBytes(f.maxPriorityFeePerGas)),
    rlpBytes(integerBytes(f.maxFeePerGas)),
    rlpBytes(integerBytes(f.gasLimit)),
    rlpBytes(Buffer.from(f.to.slice(2), "hex")),
    rlpBytes(integerBytes(f.value)),
    rlpBytes(f.data),
    EMPTY_ACCESS_LIST,
  ];
}

/** The digest the sender signs: keccak256(0x02 ‖ rlp([chainId, nonce, tip, fee cap, gas, to, value, data, []])). */
export function unsignedDigest(f: Eip1559Fields): Buffer {
  return Buffer.from(keccak256(Buffer.concat([Buffer.from([2]), rlpList(fieldItems(f))])).slice(2), "hex");
}

/** The signed transaction's bytes as 0x-hex: 0x02 ‖ rlp([...fields, yParity, r, s]) (r and s are 32 bytes each). */
export function serializeSigned(f: Eip1559Fields, rs: Uint8Array, yParity: 0 | 1): string {
  const r = BigInt("0x" + Buffer.from(rs.subarray(0, 32)).toString("hex"));
  const s = BigInt("0x" + Buffer.from(rs.subarray(32, 64)).toString("hex"));
  const items = [
    ...fieldItems(f),
    rlpBytes(integerBytes(BigInt(yParity))),
    rlpBytes(integerBytes(r)),
    rlpBytes(integerBytes(s)),
  ];
  return "0x02" + rlpList(items).toString("hex");
}
