import { getAddress } from "ethers";
import { TtlCache } from "../cache/ttl-cache";

const known = new TtlCache<string, string>(Infinity, 10_000);

/**
 * ethers' getAddress (EIP-55 checksum form; throws on a malformed address or a wrong mixed-case checksum), remembered
 * for the last 10,000 distinct inputs. The checksum is a keccak in pure JavaScript, ~25 µs a call on a small machine,
 * and every address field of every request goes through it, usually for the same few addresses again and again.
 */
export function checksumAddress(address: string): string {
  const remembered = known.get(address);
  if (remembered !== undefined) return remembered;
  const checksummed = getAddress(address);
  known.set(address, checksummed);
  return checksummed;
}
