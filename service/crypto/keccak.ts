import { keccak256 } from "ethers";

/**
 * Keccak-256 for all of ethers in this process. ethers hashes in pure JavaScript (~25–45 µs for the short inputs it
 * hashes most: addresses for their checksum, transactions for their hash, event signatures); the `keccak` package
 * ships a native build for the common platforms that takes ~7 µs. A send alone hashes about fifteen times. The answers
 * are the same; where the binary does not load, ethers keeps its own.
 */
type NativeKeccak = (algorithm: "keccak256") => { update(data: Buffer): { digest(): Buffer } };

function loadNative(): NativeKeccak | undefined {
  try {
    // The bindings entry only (the package index falls back to JavaScript slower than ethers' own).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional native build, loaded only if present
    return require("keccak/bindings") as NativeKeccak;
  } catch {
    return undefined;
  }
}

let registered: boolean | undefined;

/**
 * Routes ethers' keccak256 to the native build (once per process; later calls answer as the first did). True when the
 * native build is in use.
 */
export function useNativeKeccak(): boolean {
  if (registered !== undefined) return registered;
  const native = loadNative();
  registered = false;
  if (!native) return false;
  try {
    keccak256.register((data) =>
      native("keccak256")
        .update(Buffer.from(data.buffer, data.byteOffset, data.byteLength))
        .digest(),
    );
    registered = true;
  } catch {
    // Another part of the process locked ethers' keccak (keccak256.lock()): its own stays.
  }
  return registered;
}
