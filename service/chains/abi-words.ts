import { checksumAddress } from "../crypto/checksum-address";

/**
 * ABI encoding of the few calls and structs every paid relayed operation builds (transferWithAuthorization's calldata,
 * its EIP-712 struct, settleAndCall): ethers' general encoder spends ~150 µs on each, these are string concatenation.
 * Each value is checked as ethers checks it (an address's mixed case must be its checksum; a number must fit 256 bits)
 * and a bad one throws. Held to ethers' encoder by test/service/abi-words.test.ts.
 */
export type AbiValue = { address: string } | { uint: bigint } | { bytes32: string } | { bytes: string };

const HEX_BYTES = /^0x([0-9a-fA-F]{2})*$/;
const UINT256_LIMIT = 2n ** 256n;

/** The 32-byte head word of a static value (hex, no 0x). */
function word(value: Exclude<AbiValue, { bytes: string }>): string {
  if ("address" in value) return checksumAddress(value.address).slice(2).toLowerCase().padStart(64, "0");
  if ("uint" in value) {
    if (value.uint < 0n || value.uint >= UINT256_LIMIT) throw new RangeError(`${value.uint} does not fit a uint256`);
    return value.uint.toString(16).padStart(64, "0");
  }
  if (!/^0x[0-9a-fA-F]{64}$/.test(value.bytes32)) throw new TypeError(`${value.bytes32.slice(0, 80)} is not 32 bytes of hex`);
  return value.bytes32.slice(2).toLowerCase();
}

/** The ABI encoding of `values` as one tuple (what follows a selector), hex without 0x. */
export function encodeAbi(values: AbiValue[]): string {
  let heads = "";
  let tails = "";
  const headBytes = values.length * 32;
  for (const value of values) {
    if (!("bytes" in value)) {
      heads += word(value);
      continue;
    }
    if (!HEX_BYTES.test(value.bytes)) throw new TypeError("bytes must be 0x-prefixed hex of whole bytes");
    const data = value.bytes.slice(2).toLowerCase();
    heads += (headBytes + tails.length / 2).toString(16).padStart(64, "0");
    tails += (data.length / 2).toString(16).padStart(64, "0") + data.padEnd(Math.ceil(data.length / 64) * 64, "0");
  }
  return heads + tails;
}

/** Calldata: a 4-byte selector (0x-prefixed) and its arguments. */
export function encodeCall(selector: string, values: AbiValue[]): string {
  return selector.toLowerCase() + encodeAbi(values);
}
