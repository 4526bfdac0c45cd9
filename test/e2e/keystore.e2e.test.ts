import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { encryptKeystoreJsonSync, Wallet } from "ethers";
import { ConfigError, loadConfig } from "../../service/config";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, SETTLEMENT_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";
import { quoteOf } from "../helpers/x402";

/** The relayer and settlement keys from encrypted JSON keystores (RELAYER_KEYSTORE, X402_SETTLEMENT_KEYSTORE), their passwords from files. */
describe("e2e: the service's wallets from encrypted keystores", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService | undefined;
  let dir: string;
  // A light scrypt cost keeps the test quick; keystores from geth or cast use the standard one, read the same way.
  const keystore = (wallet: Wallet, password: string, name: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(
      file,
      encryptKeystoreJsonSync({ address: wallet.address, privateKey: wallet.privateKey }, password, {
        scrypt: { N: 1 << 12 },
      }),
      { mode: 0o600 },
    );
    return file;
  };
  const secretFile = (name: string, value: string) => {
    fs.writeFileSync(path.join(dir, name), value + "\n", { mode: 0o600 });
    return path.join(dir, name);
  };

  before(async () => {
    sandbox = await getSandbox();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-keystores-"));
  });
  after(async () => {
    await service?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a paid relayed operation is signed by the relayer key the keystore holds and confirmed; x402 pays the settlement keystore's address", async () => {
    const relayer = sandbox.accounts[RELAYER_INDEX];
    const settlement = sandbox.accounts[SETTLEMENT_INDEX];
    service = await startTestService(sandbox, {
      env: {
        RELAYER_PRIVATE_KEY: "",
        X402_SETTLEMENT_PRIVATE_KEY: "",
        RELAYER_KEYSTORE: keystore(relayer, "relayer password", "relayer.json"),
        RELAYER_KEYSTORE_PASSWORD_FILE: secretFile("relayer-password", "relayer password"),
        X402_SETTLEMENT_KEYSTORE: keystore(settlement, "settlement password", "settlement.json"),
        X402_SETTLEMENT_KEYSTORE_PASSWORD_FILE: secretFile("settlement-password", "settlement password"),
      },
    });
    expect(service.config.relayerKeys.get(84532)).to.equal(relayer.privateKey);
    const txId = await prepareRelayedToken(
      service.api,
      `KS${Date.now().toString(36).slice(-3).toUpperCase()}`,
      sandbox.accounts[5].address,
    );
    expect(quoteOf(await service.api.post("/send-transactions", { txId })).accepts[0].payTo).to.equal(
      settlement.address,
    );
    const sent = await payRelayedSend(service.api, txId, sandbox.accounts[3]);
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body.status).to.equal("success");
    expect(sent.body.payment.status).to.equal("settled");
    const status = (await service.api.get("/get-transaction-status", { txId })).body;
    const provider = providerFor(sandbox.baseSepolia);
    expect((await provider.getTransaction(status.txHash))!.from).to.equal(relayer.address);
    expect((await provider.getTransactionReceipt(status.txHash))!.status).to.equal(1);
    provider.destroy();
  });

  it("a keystore with its raw key too, without its password, with the wrong one, or not a keystore stops the start naming the variable", () => {
    const wallet = Wallet.createRandom();
    const file = keystore(wallet as unknown as Wallet, "right", "other.json");
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig(env, { profile: "local" });
      } catch (error) {
        expect(error).to.be.instanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(
      refusal({ RELAYER_KEYSTORE: file, RELAYER_PRIVATE_KEY: wallet.privateKey, RELAYER_KEYSTORE_PASSWORD: "right" }),
    ).to.include("RELAYER_KEYSTORE: RELAYER_PRIVATE_KEY is set too");
    expect(refusal({ RELAYER_KEYSTORE: file })).to.include(
      "RELAYER_KEYSTORE: needs RELAYER_KEYSTORE_PASSWORD (or RELAYER_KEYSTORE_PASSWORD_FILE)",
    );
    const wrong = refusal({ RELAYER_KEYSTORE: file, RELAYER_KEYSTORE_PASSWORD: "wrong" });
    expect(wrong)
      .to.include(`RELAYER_KEYSTORE: RELAYER_KEYSTORE_PASSWORD does not open ${file}`)
      .and.not.include("wrong");
    expect(
      refusal({ X402_SETTLEMENT_KEYSTORE: secretFile("not-json", "{}"), X402_SETTLEMENT_KEYSTORE_PASSWORD: "x" }),
    ).to.include("is not an encrypted JSON keystore");
    expect(
      loadConfig({ RELAYER_KEYSTORE: file, RELAYER_KEYSTORE_PASSWORD: "right" }, { profile: "local" })
        .RELAYER_PRIVATE_KEY,
    ).to.equal(wallet.privateKey);
  });
});
