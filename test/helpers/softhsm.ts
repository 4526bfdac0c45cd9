import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { computeAddress, hexlify, SigningKey } from "ethers";
import { loadBinding, openModule, type Pkcs11Binding } from "../../service/signers/pkcs11-modules";

/** Where Debian's softhsm2 package puts its PKCS#11 library (and where other systems do). */
const MODULE_PATHS = [
  "/usr/lib/softhsm/libsofthsm2.so",
  "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
  "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so",
  "/usr/local/lib/softhsm/libsofthsm2.so",
];
/** DER of the OID 1.3.132.0.10 (secp256k1). */
const SECP256K1_PARAMS = Buffer.from("06052b8104000a", "hex");

/** What a PKCS#11 test needs: SoftHSM 2's library and tool, and the pkcs11js binding. Why not, when something is missing. */
export function softHsmAvailability(): { module: string; binding: Pkcs11Binding } | { missing: string } {
  const module = MODULE_PATHS.find((p) => fs.existsSync(p));
  if (!module)
    return {
      missing: "SoftHSM 2 is not installed (no libsofthsm2.so; Debian: apt-get install softhsm2)",
    };
  try {
    execFileSync("softhsm2-util", ["--version"], { stdio: "ignore" });
  } catch {
    return {
      missing: "softhsm2-util is not on PATH (Debian: apt-get install softhsm2)",
    };
  }
  try {
    return { module, binding: loadBinding() };
  } catch (error) {
    return { missing: (error as Error).message };
  }
}

/**
 * A SoftHSM 2 token store of its own in a temporary directory: SOFTHSM2_CONF points this process (and the service it
 * runs in-process) at it until `remove`.
 */
export class SoftHsm {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-softhsm-"));
  private readonly previousConf = process.env.SOFTHSM2_CONF;

  constructor(
    readonly module: string,
    private readonly binding: Pkcs11Binding,
  ) {
    fs.mkdirSync(path.join(this.dir, "tokens"));
    const conf = path.join(this.dir, "softhsm2.conf");
    fs.writeFileSync(
      conf,
      `directories.tokendir = ${path.join(this.dir, "tokens")}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`,
    );
    process.env.SOFTHSM2_CONF = conf;
  }

  /** A new token labelled `label` whose user PIN is `pin` (its security officer's PIN is random and forgotten). */
  createToken(label: string, pin: string): void {
    execFileSync(
      "softhsm2-util",
      ["--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", randomBytes(8).toString("hex")],
      {
        env: { ...process.env },
        stdio: "ignore",
      },
    );
  }

  /** Generates a secp256k1 key pair labelled `keyLabel` on the token (the private key never leaves it); answers its address. */
  generateKey(tokenLabel: string, pin: string, keyLabel: string): string {
    const b = this.binding;
    return this.withSession(tokenLabel, pin, (pkcs11, session) => {
      const { publicKey } = pkcs11.C_GenerateKeyPair(
        session,
        { mechanism: b.CKM_EC_KEY_PAIR_GEN },
        [
          { type: b.CKA_TOKEN, value: true },
          { type: b.CKA_LABEL, value: keyLabel },
          { type: b.CKA_EC_PARAMS, value: SECP256K1_PARAMS },
          { type: b.CKA_VERIFY, value: true },
        ],
        [
          { type: b.CKA_TOKEN, value: true },
          { type: b.CKA_PRIVATE, value: true },
          { type: b.CKA_SENSITIVE, value: true },
          { type: b.CKA_EXTRACTABLE, value: false },
          { type: b.CKA_LABEL, value: keyLabel },
          { type: b.CKA_SIGN, value: true },
        ],
      );
      const [point] = pkcs11.C_GetAttributeValue(session, publicKey, [{ type: b.CKA_EC_POINT }]);
      return computeAddress(hexlify(point.value.subarray(2)));
    });
  }

  /** Imports an existing secp256k1 key (and its public key, which gives the address) under `keyLabel`; answers its address. */
  importKey(tokenLabel: string, pin: string, keyLabel: string, privateKey: string): string {
    const b = this.binding;
    const point = Buffer.from(SigningKey.computePublicKey(privateKey, false).slice(2), "hex");
    return this.withSession(tokenLabel, pin, (pkcs11, session) => {
      pkcs11.C_CreateObject(session, [
        { type: b.CKA_CLASS, value: b.CKO_PRIVATE_KEY },
        { type: b.CKA_KEY_TYPE, value: b.CKK_EC },
        { type: b.CKA_TOKEN, value: true },
        { type: b.CKA_PRIVATE, value: true },
        { type: b.CKA_SENSITIVE, value: true },
        { type: b.CKA_SIGN, value: true },
        { type: b.CKA_LABEL, value: keyLabel },
        { type: b.CKA_EC_PARAMS, value: SECP256K1_PARAMS },
        { type: b.CKA_VALUE, value: Buffer.from(privateKey.slice(2), "hex") },
      ]);
      pkcs11.C_CreateObject(session, [
        { type: b.CKA_CLASS, value: b.CKO_PUBLIC_KEY },
        { type: b.CKA_KEY_TYPE, value: b.CKK_EC },
        { type: b.CKA_TOKEN, value: true },
        { type: b.CKA_VERIFY, value: true },
        { type: b.CKA_LABEL, value: keyLabel },
        { type: b.CKA_EC_PARAMS, value: SECP256K1_PARAMS },
        {
          type: b.CKA_EC_POINT,
          value: Buffer.concat([Buffer.from([0x04, point.length]), point]),
        },
      ]);
      return computeAddress(hexlify(point));
    });
  }

  /** A file holding `pin`, as RELAYER_PKCS11_PIN_FILE names it. */
  pinFile(name: string, pin: string): string {
    const file = path.join(this.dir, name);
    fs.writeFileSync(file, pin + "\n", { mode: 0o600 });
    return file;
  }

  remove(): void {
    if (this.previousConf === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = this.previousConf;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private withSession<T>(
    tokenLabel: string,
    pin: string,
    use: (pkcs11: ReturnType<typeof openModule>["pkcs11"], session: Buffer) => T,
  ): T {
    const b = this.binding;
    const module = openModule(b, this.module);
    try {
      const { pkcs11 } = module;
      const slot = pkcs11.C_GetSlotList(true).find((s) => pkcs11.C_GetTokenInfo(s).label.trim() === tokenLabel);
      if (slot === undefined) throw new Error(`no token ${tokenLabel}`);
      const session = pkcs11.C_OpenSession(slot, b.CKF_SERIAL_SESSION | b.CKF_RW_SESSION);
      try {
        // Logging in is per token and process: a service running in this process may have done it (then it stays so).
        let loggedInHere = true;
        try {
          pkcs11.C_Login(session, b.CKU_USER, pin);
        } catch (error) {
          if ((error as { code?: number }).code !== b.CKR_USER_ALREADY_LOGGED_IN) throw error;
          loggedInHere = false;
        }
        try {
          return use(pkcs11, session);
        } finally {
          if (loggedInHere) pkcs11.C_Logout(session);
        }
      } finally {
        pkcs11.C_CloseSession(session);
      }
    } finally {
      module.release();
    }
  }
}
