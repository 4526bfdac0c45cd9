import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { encryptKeystoreJsonSync, Wallet } from "ethers";
import { ConfigError, loadConfig } from "../../service/config";
import { openServiceWallets, WalletOpenError } from "../../service/signers/service-wallets";

/**
 * The refund wallet (X402_REFUND_*): a key kept as the relayer's are (raw, `_FILE`, an encrypted keystore, a PKCS#11
 * token), and a key of its own: the relayer's or the settlement key is refused at start.
 */
describe("configuration: the x402 refund wallet", () => {
  const [relayer, settlement, refund] = Array.from({ length: 3 }, () => Wallet.createRandom());
  const base = {
    RPC_URL_11155111: "http://127.0.0.1:1",
    RPC_URL_84532: "http://127.0.0.1:2",
    RELAYER_PRIVATE_KEY: relayer.privateKey,
    X402_SETTLEMENT_PRIVATE_KEY: settlement.privateKey,
  };
  const load = (env: Record<string, string>) => loadConfig({ ...base, ...env }, { profile: "local" });
  const opened = async (env: Record<string, string>) => {
    const wallets = openServiceWallets(load(env));
    await wallets.close();
    return wallets;
  };

  it("is optional: without it, refunds wait for an operator", async () => {
    expect((await opened({})).refund).to.equal(undefined);
  });

  it("opens from a raw key, a secret file, or an encrypted keystore", async () => {
    expect((await opened({ X402_REFUND_PRIVATE_KEY: refund.privateKey })).refund?.address).to.equal(refund.address);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-refund-key-"));
    try {
      fs.writeFileSync(path.join(dir, "key"), `${refund.privateKey}\n`, { mode: 0o600 });
      expect((await opened({ X402_REFUND_PRIVATE_KEY_FILE: path.join(dir, "key") })).refund?.address).to.equal(
        refund.address,
      );
      fs.writeFileSync(
        path.join(dir, "keystore.json"),
        encryptKeystoreJsonSync({ address: refund.address, privateKey: refund.privateKey }, "a keystore password", {
          scrypt: { N: 1024 },
        }),
      );
      fs.writeFileSync(path.join(dir, "password"), "a keystore password\n");
      const fromKeystore = await opened({
        X402_REFUND_KEYSTORE: path.join(dir, "keystore.json"),
        X402_REFUND_KEYSTORE_PASSWORD_FILE: path.join(dir, "password"),
      });
      expect(fromKeystore.refund?.address).to.equal(refund.address);
      expect(() => load({ X402_REFUND_KEYSTORE: path.join(dir, "keystore.json") })).to.throw(
        ConfigError,
        /X402_REFUND_KEYSTORE: needs X402_REFUND_KEYSTORE_PASSWORD/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses the settlement key or a relayer key (their nonces would clash), naming the refund key's variables", () => {
    for (const [key, what] of [
      [settlement.privateKey, "the settlement key"],
      [relayer.privateKey, "a relayer key"],
    ]) {
      expect(() => openServiceWallets(load({ X402_REFUND_PRIVATE_KEY: key }))).to.throw(
        WalletOpenError,
        new RegExp(`the refund key \\(X402_REFUND_\\*\\) is ${what}`),
      );
    }
  });

  it("a PKCS#11 token needs all four of its variables and the key given once; a malformed raw key is refused naming it", () => {
    const module = path.join(os.tmpdir(), `tak-refund-module-${process.pid}.so`);
    fs.writeFileSync(module, "");
    try {
      expect(() =>
        load({
          X402_REFUND_PRIVATE_KEY: refund.privateKey,
          X402_REFUND_PKCS11_MODULE: module,
          X402_REFUND_PKCS11_TOKEN_LABEL: "tak",
          X402_REFUND_PKCS11_KEY_LABEL: "refund",
          X402_REFUND_PKCS11_PIN: "1234",
        }),
      ).to.throw(ConfigError, /X402_REFUND_PKCS11_MODULE: X402_REFUND_PRIVATE_KEY is set too; give the key once/);
    } finally {
      fs.rmSync(module, { force: true });
    }
    expect(() => load({ X402_REFUND_PKCS11_TOKEN_LABEL: "tak" })).to.throw(
      ConfigError,
      /X402_REFUND_PKCS11_TOKEN_LABEL: a key on a PKCS#11 token needs X402_REFUND_PKCS11_MODULE, X402_REFUND_PKCS11_KEY_LABEL, X402_REFUND_PKCS11_PIN/,
    );
    expect(() => load({ X402_REFUND_PRIVATE_KEY: "0x1234" })).to.throw(
      ConfigError,
      /X402_REFUND_PRIVATE_KEY: must be a 0x-prefixed 32-byte hex private key/,
    );
  });
});
