import { computeAddress, hexlify, type Authorization, type Signature, type TransactionRequest } from "ethers";
import type * as Pkcs11Js from "pkcs11js";
import type { Pkcs11KeyReference } from "../configuration/pkcs11-keys";
import { authorizeWithDigest, signTransactionWithDigest } from "./digest-signing";
import { loadBinding, openModule, type Pkcs11Binding } from "./pkcs11-modules";
import type { AuthorizationFields, ServiceSigner } from "./signer";
import { ethereumSignature } from "./token-signature";

export type { Pkcs11KeyReference };

/** DER of the OID 1.3.132.0.10 (secp256k1), as CKA_EC_PARAMS names the curve. */
const SECP256K1_PARAMS = "06052b8104000a";

/** Errors after which the session is opened again (and the signature asked once more): the token was restarted or re-plugged. */
const SESSION_LOST = [
  "CKR_SESSION_HANDLE_INVALID",
  "CKR_SESSION_CLOSED",
  "CKR_USER_NOT_LOGGED_IN",
  "CKR_DEVICE_REMOVED",
  "CKR_TOKEN_NOT_PRESENT",
] as const;

/**
 * A service wallet whose key is on a PKCS#11 token (an HSM; SoftHSM 2 in the tests): the key never leaves the token,
 * which signs each digest (CKM_ECDSA over the 32-byte digest). The address comes from the public key stored beside it
 * under the same label; s is brought to the low half and the parity found by recovering against that public key.
 * Signatures are asked one at a time (a PKCS#11 session runs one operation at a time).
 */
export class Pkcs11Signer implements ServiceSigner {
  readonly kind = "pkcs11" as const;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly binding: Pkcs11Binding,
    private readonly module: { pkcs11: Pkcs11Js.PKCS11; release(): void },
    private readonly reference: Pkcs11KeyReference,
    private session: Pkcs11Js.Handle,
    private privateKey: Pkcs11Js.Handle,
    readonly address: string,
  ) {}

  /** Opens the token, logs in and finds the key pair; throws a message that names what is missing (never the PIN). */
  static open(reference: Pkcs11KeyReference): Pkcs11Signer {
    const binding = loadBinding();
    const module = openModule(binding, reference.module);
    try {
      const { session, privateKey, publicPoint } = openKey(binding, module.pkcs11, reference);
      return new Pkcs11Signer(binding, module, reference, session, privateKey, computeAddress(hexlify(publicPoint)));
    } catch (error) {
      module.release();
      throw error;
    }
  }

  signDigest(digest: Uint8Array): Promise<Signature> {
    const run = this.queue.then(() => this.signOnce(Buffer.from(digest)));
    this.queue = run.catch(() => undefined);
    return run;
  }

  signTransaction(request: TransactionRequest): Promise<string> {
    return signTransactionWithDigest(this.address, (digest) => this.signDigest(digest), request);
  }

  authorize(fields: AuthorizationFields): Promise<Authorization> {
    return authorizeWithDigest((digest) => this.signDigest(digest), fields);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    try {
      this.module.pkcs11.C_CloseSession(this.session);
    } catch {
      // already gone with the token
    }
    this.module.release();
  }

  private async signOnce(digest: Buffer, retried = false): Promise<Signature> {
    if (this.closed) throw new Error("the PKCS#11 signer is closed");
    const { pkcs11 } = this.module;
    let rs: Buffer;
    try {
      pkcs11.C_SignInit(this.session, { mechanism: this.binding.CKM_ECDSA }, this.privateKey);
      rs = await pkcs11.C_SignAsync(this.session, digest, Buffer.alloc(64));
    } catch (error) {
      if (retried || !SESSION_LOST.some((name) => (error as { code?: number }).code === this.binding[name]))
        throw error;
      const reopened = openKey(this.binding, pkcs11, this.reference);
      [this.session, this.privateKey] = [reopened.session, reopened.privateKey];
      return this.signOnce(digest, true);
    }
    return ethereumSignature(digest, rs, this.address);
  }
}

/** A session on the token labelled `tokenLabel`, logged in, with the private key and the public point labelled `keyLabel`. */
function openKey(binding: Pkcs11Binding, pkcs11: Pkcs11Js.PKCS11, reference: Pkcs11KeyReference) {
  const slot = pkcs11.C_GetSlotList(true).find((s) => pkcs11.C_GetTokenInfo(s).label.trim() === reference.tokenLabel);
  if (slot === undefined) throw new Error(`no token labelled "${reference.tokenLabel}" in ${reference.module}`);
  const session = pkcs11.C_OpenSession(slot, binding.CKF_SERIAL_SESSION);
  try {
    try {
      pkcs11.C_Login(session, binding.CKU_USER, reference.pin);
    } catch (error) {
      const code = (error as { code?: number }).code;
      // Logging in is per token and application: a second signer on the same token finds it done.
      if (code !== binding.CKR_USER_ALREADY_LOGGED_IN) {
        throw new Error(
          code === binding.CKR_PIN_INCORRECT
            ? `the PIN does not open token "${reference.tokenLabel}"`
            : `cannot log in to token "${reference.tokenLabel}": ${(error as Error).message}`,
        );
      }
    }
    const privateKey = findOne(pkcs11, session, [
      { type: binding.CKA_CLASS, value: binding.CKO_PRIVATE_KEY },
      { type: binding.CKA_LABEL, value: reference.keyLabel },
    ]);
    if (privateKey === undefined)
      throw new Error(`token "${reference.tokenLabel}" has no private key labelled "${reference.keyLabel}"`);
    const publicKey = findOne(pkcs11, session, [
      { type: binding.CKA_CLASS, value: binding.CKO_PUBLIC_KEY },
      { type: binding.CKA_LABEL, value: reference.keyLabel },
    ]);
    if (publicKey === undefined)
      throw new Error(
        `token "${reference.tokenLabel}" has no public key labelled "${reference.keyLabel}" beside the private key (the address comes from it)`,
      );
    const [point, params] = pkcs11.C_GetAttributeValue(session, publicKey, [
      { type: binding.CKA_EC_POINT },
      { type: binding.CKA_EC_PARAMS },
    ]);
    if (!Buffer.isBuffer(params.value) || params.value.toString("hex") !== SECP256K1_PARAMS)
      throw new Error(`key "${reference.keyLabel}" is not on secp256k1`);
    return {
      session,
      privateKey,
      publicPoint: uncompressedPoint(point.value),
    };
  } catch (error) {
    pkcs11.C_CloseSession(session);
    throw error;
  }
}

function findOne(
  pkcs11: Pkcs11Js.PKCS11,
  session: Pkcs11Js.Handle,
  template: Pkcs11Js.Template,
): Pkcs11Js.Handle | undefined {
  pkcs11.C_FindObjectsInit(session, template);
  try {
    const found = pkcs11.C_FindObjects(session, 2);
    if (found.length > 1) throw new Error(`more than one object matches label "${String(template[1].value)}"`);
    return found[0];
  } finally {
    pkcs11.C_FindObjectsFinal(session);
  }
}

/** CKA_EC_POINT is the 65-byte uncompressed point, DER-wrapped in an OCTET STRING (PKCS#11 2.40) or bare (some tokens). */
function uncompressedPoint(value: Buffer): Buffer {
  if (value.length === 65 && value[0] === 0x04) return value;
  if (value.length === 67 && value[0] === 0x04 && value[1] === 65 && value[2] === 0x04) return value.subarray(2);
  throw new Error("the public key is not an uncompressed secp256k1 point");
}
