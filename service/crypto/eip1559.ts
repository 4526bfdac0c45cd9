import { keccak256 } from "ethers";
import { checksumAddress } from "./checksum-address";

/**
 * The EIP-1559 (type 2) transactions the relayer and the settlement wallet sign, serialized without ethers' Transaction:
 * its setters and RLP encoder read hex one byte at a time through getBytes (~0.3 ms per signed transaction, about a
 * thirtieth of a paid operation's CPU). Only the plain form is taken here: type 2, a recipient, no access list, fields
 * given as numbers, bigints, or decimal or 0x-hex strings; `eip1559Fields` answers undefined for anything else and the
 * caller lets ethers do it. Held to ethers' bytes by test/engine/secp256k1.test.ts. The signed transactions clients
 * send are decoded the same way (decodeSigned: test/engine/signed-checks.test.ts).
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

/** A signed plain type-2 transaction, decoded: its fields, and its signature as r ‖ s (64 bytes) with its parity. */
export interface SignedEip1559 {
  fields: Eip1559Fields;
  rs: Buffer;
  yParity: 0 | 1;
}

/** An RLP item: a byte string, or a list of items. */
type RlpItem = Buffer | RlpItem[];

/**
 * The RLP item starting at `at` and where it ends; undefined when malformed or past the end. Lists are decoded only to
 * `depth` levels (a transaction's fields are one list, its access list another inside it).
 */
function rlpItemAt(buf: Buffer, at: number, depth: number): { item: RlpItem; end: number } | undefined {
  if (at >= buf.length) return undefined;
  const head = buf[at];
  if (head < 0x80) return { item: buf.subarray(at, at + 1), end: at + 1 };
  const isList = head >= 0xc0;
  const short = head - (isList ? 0xc0 : 0x80);
  let start = at + 1;
  let length = short;
  if (short > 55) {
    const size = short - 55;
    if (size > 4 || start + size > buf.length) return undefined;
    length = buf.readUIntBE(start, size);
    start += size;
  }
  const end = start + length;
  if (end > buf.length) return undefined;
  if (!isList) return { item: buf.subarray(start, end), end };
  if (depth === 0) return undefined;
  const list: RlpItem[] = [];
  for (let p = start; p < end;) {
    const inner = rlpItemAt(buf, p, depth - 1);
    if (!inner || inner.end > end) return undefined;
    list.push(inner.item);
    p = inner.end;
  }
  return { item: list, end };
}

const bigintOf = (bytes: Buffer): bigint => (bytes.length ? BigInt("0x" + bytes.toString("hex")) : 0n);

/**
 * A signed transaction's bytes (0x-hex) decoded, when they are a plain type-2 transaction (a recipient, an empty access
 * list) in the canonical encoding, the one serializeSigned writes: undefined for anything else (the caller lets ethers
 * judge it). Several times faster than ethers' Transaction.from, which reads each field through its setters.
 */
export function decodeSigned(raw: string): SignedEip1559 | undefined {
  if (raw.length < 4 || raw.length % 2 || !HEX_BYTES.test(raw)) return undefined;
  const bytes = Buffer.from(raw.slice(2), "hex");
  if (bytes[0] !== 2) return undefined;
  const outer = rlpItemAt(bytes, 1, 2);
  if (!outer || outer.end !== bytes.length || !Array.isArray(outer.item) || outer.item.length !== 12) return undefined;
  const [accessList] = outer.item.splice(8, 1);
  if (!Array.isArray(accessList) || accessList.length || outer.item.some((item) => Array.isArray(item)))
    return undefined;
  const [chainId, nonce, tip, feeCap, gasLimit, to, value, data, yParity, r, s] = outer.item as Buffer[];
  if (to.length !== 20 || r.length > 32 || s.length > 32 || yParity.length > 1 || (yParity.length && yParity[0] !== 1))
    return undefined;
  const fields: Eip1559Fields = {
    chainId: bigintOf(chainId),
    nonce: bigintOf(nonce),
    maxPriorityFeePerGas: bigintOf(tip),
    maxFeePerGas: bigintOf(feeCap),
    gasLimit: bigintOf(gasLimit),
    to: checksumAddress("0x" + to.toString("hex")),
    value: bigintOf(value),
    data: Buffer.from(data),
  };
  const rs = Buffer.alloc(64);
  r.copy(rs, 32 - r.length);
  s.copy(rs, 64 - s.length);
  const parity = yParity.length ? 1 : 0;
  // Canonical: the bytes are exactly what serializing the decoded fields gives (no padded integer, no long form).
  if (serializeSigned(fields, rs, parity) !== raw.toLowerCase()) return undefined;
  return { fields, rs, yParity: parity };
}
