// tier: e2e
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { concat, Wallet } from "ethers";
import { BKN__factory } from "../../typechain-types";
import { loadConfig } from "../../service/config";
import { openServiceWallets } from "../../service/signers/service-wallets";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, testEnv, type TestService } from "../helpers/service";
import { SoftHsm, softHsmAvailability } from "../helpers/softhsm";
import { decodePaymentResponse, payWithEthers, quoteOf } from "../helpers/x402";

const TOKEN = "tak-test";
const ADMIN_TOKEN = "pkcs11-test-admin-token-0123456789";

/**
 * The relayer and the settlement wallet on a PKCS#11 token (SoftHSM 2): the keys never leave the token, which signs
 * each digest. Skipped, saying why, where SoftHSM 2 is not installed (the README's `npm test` needs only Node and npm);
 * .ci/run installs it and sets REQUIRE_PKCS11=1, which turns the skip into a failure.
 */
describe("e2e: the service's wallets on a PKCS#11 token (SoftHSM 2)", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let hsm: SoftHsm | undefined;
  let service: TestService | undefined;
  let pin: string;
  let relayer: string;
  let settlement: string;
  const tokenEnv = () => ({
    RELAYER_PRIVATE_KEY: "",
    X402_SETTLEMENT_PRIVATE_KEY: "",
    RELAYER_PKCS11_MODULE: hsm!.module,
    RELAYER_PKCS11_TOKEN_LABEL: TOKEN,
    RELAYER_PKCS11_KEY_LABEL: "relayer",
    RELAYER_PKCS11_PIN_FILE: hsm!.pinFile("relayer-pin", pin),
    X402_SETTLEMENT_PKCS11_MODULE: hsm!.module,
    X402_SETTLEMENT_PKCS11_TOKEN_LABEL: TOKEN,
    X402_SETTLEMENT_PKCS11_KEY_LABEL: "settlement",
    X402_SETTLEMENT_PKCS11_PIN_FILE: hsm!.pinFile("settlement-pin", pin),
  });

  before(async function () {
    const available = softHsmAvailability();
    if ("missing" in available) {
      if (process.env.REQUIRE_PKCS11 === "1") throw new Error(`REQUIRE_PKCS11=1 but ${available.missing}`);
      console.log(`      PKCS#11 suite skipped: ${available.missing}`);
      this.skip();
    }
    sandbox = await getSandbox();
    hsm = new SoftHsm(available.module, available.binding);
    pin = randomUUID().slice(0, 8);
    hsm.createToken(TOKEN, pin);
    relayer = hsm.generateKey(TOKEN, pin, "relayer");
    settlement = hsm.importKey(TOKEN, pin, "settlement", Wallet.createRandom().privateKey);
    for (const chain of [sandbox.sepolia, sandbox.baseSepolia]) {
      const provider = providerFor(chain);
      for (const address of [relayer, settlement])
        await provider.send("hardhat_setBalance", [address, "0x56BC75E2D63100000"]); // 100 ETH
      provider.destroy();
    }
  });
  after(async () => {
    await service?.stop();
    hsm?.remove();
  });

  it("a token variable missing, a wrong PIN, an unknown token or key label stop the start naming the variables, never the PIN (before any session of the service logs in)", () => {
    const refusal = (env: Record<string, string>) => {
      try {
        const wallets = openServiceWallets(
          loadConfig(testEnv(sandbox, hsm!.dir, { ...tokenEnv(), ...env }), {
            profile: "local",
          }),
        );
        void wallets.close();
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refusal({ RELAYER_PKCS11_KEY_LABEL: "" })).to.include(
      "RELAYER_PKCS11_MODULE: a key on a PKCS#11 token needs RELAYER_PKCS11_KEY_LABEL too",
    );
    expect(
      refusal({
        X402_SETTLEMENT_PKCS11_PIN_FILE: "",
        X402_SETTLEMENT_PKCS11_PIN: "",
      }),
    ).to.include("needs X402_SETTLEMENT_PKCS11_PIN (or X402_SETTLEMENT_PKCS11_PIN_FILE) too");
    expect(refusal({ RELAYER_PRIVATE_KEY: Wallet.createRandom().privateKey })).to.include(
      "RELAYER_PKCS11_MODULE: RELAYER_PRIVATE_KEY is set too",
    );
    expect(refusal({ RELAYER_PKCS11_MODULE: "/nonexistent/libpkcs11.so" })).to.include(
      "RELAYER_PKCS11_MODULE: cannot read /nonexistent/libpkcs11.so (ENOENT)",
    );
    const wrongPin = refusal({
      RELAYER_PKCS11_PIN_FILE: hsm!.pinFile("wrong-pin", "00000000"),
    });
    expect(wrongPin)
      .to.include(`RELAYER_PKCS11_*: the PIN does not open token "${TOKEN}"`)
      .and.not.include("00000000")
      .and.not.include(pin);
    expect(refusal({ RELAYER_PKCS11_TOKEN_LABEL: "no-such-token" })).to.include(
      'RELAYER_PKCS11_*: no token labelled "no-such-token"',
    );
    expect(refusal({ X402_SETTLEMENT_PKCS11_KEY_LABEL: "no-such-key" })).to.include(
      'X402_SETTLEMENT_PKCS11_*: token "tak-test" has no private key labelled "no-such-key"',
    );
    expect(refusal({ X402_SETTLEMENT_PKCS11_KEY_LABEL: "relayer" })).to.include("name the same key");
  });

  describe("a service started with both keys on the token", () => {
    before(async () => {
      service = await startTestService(sandbox, { env: { ...tokenEnv(), ADMIN_TOKEN } });
    });

    it("a paid relayed operation is confirmed, signed on the token: the relayer's EIP-7702 delegation and the operation carrying its payment", async () => {
      const provider = providerFor(sandbox.baseSepolia);
      expect(service!.services.relayer.address(84532)).to.equal(relayer);
      // The delegation (a type-4 transaction with the relayer's own authorization) was signed on the token at start.
      const designator = concat(["0xef0100", sandbox.deployments[84532].contracts.PaidRelayDelegate!]).toLowerCase();
      expect((await provider.getCode(relayer)).toLowerCase()).to.equal(designator);
      const txId = await prepareRelayedToken(
        service!.api,
        `HSM${Date.now().toString(36).slice(-3).toUpperCase()}`,
        sandbox.accounts[5].address,
      );
      const sent = await payRelayedSend(service!.api, txId, sandbox.accounts[3]);
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      expect(sent.body.status).to.equal("success");
      expect(sent.body.payment.status).to.equal("settled");
      const status = (await service!.api.get("/get-transaction-status", { txId })).body;
      expect(status.payments[0].settlementTransaction).to.equal(status.txHash); // settled inside the operation
      const tx = (await provider.getTransaction(status.txHash))!;
      expect(tx.from).to.equal(relayer);
      expect(BigInt(tx.signature.s) <= 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n).to.equal(
        true,
      );
      expect((await provider.getTransactionReceipt(status.txHash))!.status).to.equal(1);
      provider.destroy();
    });

    it("a faucet claim paid on another chain settles through the settlement wallet on the token; its mint is relayed by the token's relayer key", async () => {
      const recipient = Wallet.createRandom().address;
      const claim = (headers: Record<string, string>, key: string) =>
        service!.api.post("/faucet/bkn", { recipientAddress: recipient }, { "Idempotency-Key": key, ...headers });
      const idempotencyKey = randomUUID();
      const quote = quoteOf(await claim({}, idempotencyKey)).accepts[0];
      expect(quote.payTo).to.equal(settlement);
      const res = await claim({ "X-PAYMENT": await payWithEthers(sandbox.accounts[2], quote) }, idempotencyKey);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.status).to.equal("confirmed");
      const payment = decodePaymentResponse(res);
      expect(payment).to.include({ success: true, network: "eip155:84532" });
      const base = providerFor(sandbox.baseSepolia);
      const sepolia = providerFor(sandbox.sepolia);
      expect((await base.getTransaction(payment.transaction))!.from).to.equal(settlement);
      expect((await base.getTransactionReceipt(payment.transaction))!.status).to.equal(1);
      const mint = (
        await service!.api.get("/get-transaction-status", {
          txId: res.body.txId,
        })
      ).body;
      expect((await sepolia.getTransaction(mint.txHash))!.from).to.equal(relayer);
      expect(
        await BKN__factory.connect(sandbox.deployments[11155111].contracts.BKN, sepolia).balanceOf(recipient),
      ).to.equal(100n * 10n ** 18n);
      base.destroy();
      sepolia.destroy();
    });

    it("a second relayer key on the token, added on the running service (relayer-keys add --pkcs11-module …), sends operations", async () => {
      const second = hsm!.generateKey(TOKEN, pin, "relayer-2");
      const provider = providerFor(sandbox.baseSepolia);
      await provider.send("hardhat_setBalance", [second, "0x56BC75E2D63100000"]);
      const source = {
        kind: "pkcs11",
        module: hsm!.module,
        tokenLabel: TOKEN,
        keyLabel: "relayer-2",
        pinFile: hsm!.pinFile("relayer-2-pin", pin),
      };
      const response = await fetch(`${service!.url}/admin/command`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
        body: JSON.stringify({ command: "relayer-keys.add", source, chainId: 84532 }),
      });
      const added = (await response.json()) as { result: { address: string; origin: string } };
      expect(response.status, JSON.stringify(added)).to.equal(200);
      expect(added.result).to.include({ address: second, origin: "pkcs11" });
      for (
        const deadline = Date.now() + 30_000;
        service!.services.relayer.keys.standing(84532, second) !== "active";
        await new Promise((r) => setTimeout(r, 100))
      ) {
        if (Date.now() > deadline) throw new Error("the token's second key was not set up");
      }
      let txId: string;
      do
        txId = await prepareRelayedToken(
          service!.api,
          `HSM${Math.floor(Math.random() * 1e6)}`,
          sandbox.accounts[5].address,
        );
      while ((await service!.services.batches.get(txId))!.transactions[0].unsigned.from !== second);
      const sent = await payRelayedSend(service!.api, txId, sandbox.accounts[3]);
      expect(sent.body.status, JSON.stringify(sent.body)).to.equal("success");
      const status = (await service!.api.get("/get-transaction-status", { txId })).body;
      expect((await provider.getTransaction(status.txHash))!.from).to.equal(second);
      provider.destroy();
    });
  });
});
