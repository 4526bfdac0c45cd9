import type * as Pkcs11Js from "pkcs11js";

export type Pkcs11Binding = typeof Pkcs11Js;

/** pkcs11js (an optional dependency: a native build) is loaded only by a start that names a PKCS#11 module. */
export function loadBinding(): Pkcs11Binding {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when a PKCS#11 key is configured
    return require("pkcs11js") as Pkcs11Binding;
  } catch (error) {
    throw new Error(
      `the PKCS#11 binding (pkcs11js, an optional dependency built at install) is not available: ${
        (error as Error).message
      }; install with npm ci where python3, make and g++ are present`,
    );
  }
}

interface LoadedModule {
  pkcs11: Pkcs11Js.PKCS11;
  users: number;
}

/** A PKCS#11 library is initialized once per process (C_Initialize twice is an error): every signer of one module shares it. */
const loaded = new Map<string, LoadedModule>();

/** The library at `file`, initialized (shared by the signers that use it); `release` finalizes it after its last user. */
export function openModule(binding: Pkcs11Binding, file: string): { pkcs11: Pkcs11Js.PKCS11; release(): void } {
  let entry = loaded.get(file);
  if (!entry) {
    const pkcs11 = new binding.PKCS11();
    pkcs11.load(file);
    try {
      pkcs11.C_Initialize();
    } catch (error) {
      if ((error as { code?: number }).code !== binding.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
        pkcs11.close();
        throw error;
      }
    }
    entry = { pkcs11, users: 0 };
    loaded.set(file, entry);
  }
  entry.users++;
  let released = false;
  const shared = entry;
  return {
    pkcs11: shared.pkcs11,
    release() {
      if (released) return;
      released = true;
      if (--shared.users > 0) return;
      loaded.delete(file);
      try {
        shared.pkcs11.C_Finalize();
      } finally {
        shared.pkcs11.close();
      }
    },
  };
}
