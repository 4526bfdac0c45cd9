import { checksumAddress } from "../crypto/checksum-address";

/**
 * ABI encoding of the few calls and structs every paid relayed operation builds (transferWithAuthorization's calldata,
 * its EIP-712 struct, settleAndCall, createAgentToken), and decoding of the event it ends with: ethers' general coder
 * spends ~150 µs on each, these are string concatenation and slicing.
 * Each value is checked as ethers checks it (an address's mixed case must be its checksum; a number must fit 256 bits)
 * and a bad one throws. Held to ethers' encoder by test/service/abi-words.test.ts.
 */
export type AbiValue =
  { address: string } | { uint: bigint } | { bytes32: string } | { bytes: string } | { string: string };

const HEX_BYTES = /^0x([0-9a-fA-F]{2})*$/;
const UINT256_LIMIT = 2n ** 256n;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The 32-byte head word of a static value (hex, no 0x). */
function word(value: Exclude<AbiValue, { bytes: string } | { string: string }>): string {
  if ("address" in value) return checksumAddress(value.address).slice(2).toLowerCase().padStart(64, "0");
  if ("uint" in value) {
    if (value.uint < 0n || value.uint >= UINT256_LIMIT) throw new RangeError(`${value.uint} does not fit a uint256`);
    return value.uint.toString(16).padStart(64, "0");
  }
  if (!/^0x[0-9a-fA-F]{64}$/.test(value.bytes32))
    throw new TypeError(`${value.bytes32.slice(0, 80)} is not 32 bytes of hex`);
  return value.bytes32.slice(2).toLowerCase();
}

/** The ABI encoding of `values` as one tuple (what follows a selector), hex without 0x. */
export function encodeAbi(values: AbiValue[]): string {
  let heads = "";
  let tails = "";
  const headBytes = values.length * 32;
  for (const value of values) {
    let data: string;
    if ("string" in value) {
      // ethers refuses a lone surrogate (it has no UTF-8 form) rather than writing U+FFFD for it.
      if (LONE_SURROGATE.test(value.string)) throw new TypeError("invalid surrogate pair in a string");
      data = Buffer.from(value.string, "utf8").toString("hex");
    } else if ("bytes" in value) {
      if (!HEX_BYTES.test(value.bytes)) throw new TypeError("bytes must be 0x-prefixed hex of whole bytes");
      data = value.bytes.slice(2).toLowerCase();
    } else {
      heads += word(value);
      continue;
    }
    heads += (headBytes + tails.length / 2).toString(16).padStart(64, "0");
    tails += (data.length / 2).toString(16).padStart(64, "0") + data.padEnd(Math.ceil(data.length / 64) * 64, "0");
  }
  return heads + tails;
}

/** Calldata: a 4-byte selector (0x-prefixed) and its arguments. */
export function encodeCall(selector: string, values: AbiValue[]): string {
  return selector.toLowerCase() + encodeAbi(values);
}

/** What decodeAbi reads: an address, a uint (up to 256 bits), or a UTF-8 string. */
export type AbiType = "address" | "uint" | "string";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes ABI-encoded `data` (0x-hex, e.g. a log's data) as a tuple of `types`: addresses checksummed, uints as bigint,
 * strings from UTF-8. Throws, as ethers does, on data too short for what it should hold and a string that is not UTF-8;
 * and on an address word with bits above its 20 bytes, which ethers drops (no Solidity address has any).
 */
export function decodeAbi(types: readonly AbiType[], data: string): (string | bigint)[] {
  if (!HEX_BYTES.test(data)) throw new TypeError("ABI data must be 0x-prefixed hex of whole bytes");
  const bytes = Buffer.from(data.slice(2), "hex");
  const wordAt = (offset: number): Buffer => {
    if (offset + 32 > bytes.length)
      throw new RangeError(`ABI data too short: a word at ${offset} of ${bytes.length} bytes`);
    return bytes.subarray(offset, offset + 32);
  };
  const uintAt = (offset: number): bigint => BigInt("0x" + wordAt(offset).toString("hex"));
  return types.map((type, i) => {
    if (type === "uint") return uintAt(i * 32);
    if (type === "address") return wordToAddress(wordAt(i * 32).toString("hex"));
    const start = uintAt(i * 32);
    const length = start + 32n <= BigInt(bytes.length) ? uintAt(Number(start)) : -1n;
    if (length < 0n || start + 32n + length > BigInt(bytes.length))
      throw new RangeError("ABI data too short for a string it points to");
    const from = Number(start) + 32;
    return utf8.decode(bytes.subarray(from, from + Number(length)));
  });
}

/** An address held in a 32-byte word or topic (hex, with or without 0x), checksummed; throws on bits above 20 bytes. */
export function wordToAddress(word: string): string {
  const hex = word.startsWith("0x") ? word.slice(2) : word;
  if (!/^0{24}[0-9a-fA-F]{40}$/.test(hex)) throw new RangeError(`${word.slice(0, 80)} is not an address word`);
  return checksumAddress("0x" + hex.slice(24));
}
