import { expect } from "chai";
import { concat, Wallet } from "ethers";
import { USDC__factory } from "../../typechain-types";
import { distinctClient, payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, SETTLEMENT_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";
import { openDb, type Db } from "../../service/store/db";
import { quoteOf, payWithEthers } from "../helpers/x402";

const PER_KEY = 4;

/**
 * RELAYER_EXTRA_PRIVATE_KEYS: the relayer's further keys, each with its own nonces and its own EIP-7702 delegation.
 * Batches any key may send (agentCreateToken) are prepared for each key in turn; the rest stay with the relayer's own key.
 */
describe("e2e: a relayer with several keys", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let service: TestService;
  let db: Db;
  const extra = [Wallet.createRandom(), Wallet.createRandom()];

  before(async () => {
    sandbox = await getSandbox();
    for (const chain of [sandbox.sepolia, sandbox.baseSepolia]) {
      for (const key of extra)
        await providerFor(chain).send("hardhat_setBalance", [key.address, "0x56BC75E2D63100000"]); // 100 ETH
    }
    db = await openDb({});
    service = await startTestService(sandbox, {
      db,
      env: { RELAYER_EXTRA_PRIVATE_KEYS: extra.map((k) => k.privateKey).join(",") },
    });
  });
  after(async () => {
    await service?.stop();
    await db?.close();
  });

  it("delegates every key to PaidRelayDelegate at start, so each settles payments inside its operations", async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const designator = concat(["0xef0100", sandbox.deployments[84532].contracts.PaidRelayDelegate!]).toLowerCase();
    for (const key of [sandbox.accounts[RELAYER_INDEX], ...extra]) {
      expect((await provider.getCode(key.address)).toLowerCase(), key.address).to.equal(designator);
      expect(service.services.relayer.delegate(84532, key.address), key.address).to.equal(
        sandbox.deployments[84532].contracts.PaidRelayDelegate,
      );
    }
  });

  it(`spreads concurrent paid agentCreateToken operations over every key: each key's nonces contiguous, each payment settled once inside its operation`, async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const keys = [sandbox.accounts[RELAYER_INDEX].address, ...extra.map((k) => k.address)];
    const settler = sandbox.accounts[SETTLEMENT_INDEX].address;
    const payer = sandbox.accounts[3];
    const usdc = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, provider);
    const sends = PER_KEY * keys.length;
    const txIds: string[] = [];
    for (let i = 0; i < sends; i++)
      txIds.push(await prepareRelayedToken(service.api, `MK${i}`, sandbox.accounts[6].address));
    const before = await Promise.all(keys.map((k) => provider.getTransactionCount(k, "latest")));
    const [settlerNonce, payerBefore] = await Promise.all([
      provider.getTransactionCount(settler, "latest"),
      usdc.balanceOf(payer.address),
    ]);

    const results = await Promise.all(txIds.map((txId) => payRelayedSend(service.api, txId, payer)));
    for (const r of results) {
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.status, JSON.stringify(r.body)).to.equal("success");
      expect(r.body.payment.status).to.equal("settled");
    }

    const noncesByKey = new Map<string, number[]>(keys.map((k) => [k, []]));
    for (const txId of txIds) {
      const status = (await service.api.get("/get-transaction-status", { txId })).body;
      expect(status.payments[0]).to.include({ status: "settled", settlementTransaction: status.txHash });
      const tx = (await provider.getTransaction(status.txHash))!;
      expect((await provider.getTransactionReceipt(status.txHash))!.status).to.equal(1);
      expect(noncesByKey.has(tx.from), `sent by ${tx.from}, not a relayer key`).to.equal(true);
      noncesByKey.get(tx.from)!.push(tx.nonce);
    }
    keys.forEach((key, i) => {
      const nonces = noncesByKey.get(key)!.sort((a, b) => a - b);
      expect(nonces, key).to.deep.equal(Array.from({ length: PER_KEY }, (_, n) => before[i] + n)); // each key in turn; no gap, no reuse
    });
    for (const [i, key] of keys.entries())
      expect(await provider.getTransactionCount(key, "latest")).to.equal(before[i] + PER_KEY);
    expect(await provider.getTransactionCount(settler, "latest")).to.equal(settlerNonce); // no settlement transaction of its own
    expect(payerBefore - (await usdc.balanceOf(payer.address))).to.equal(BigInt(sends) * 10_000n);
  });

  it("keeps a method whose outcome follows its sender (agentRegister: the relayer holds the agent) on the relayer's own key", async () => {
    const home = sandbox.accounts[RELAYER_INDEX].address;
    for (let i = 0; i < 3; i++) {
      const res = await service.api.post(
        "/x402/agent/register",
        {
          executionMode: "service-relayed",
          chainId: "84532",
          name: `Held ${i}`,
          description: "an agent held by the relayer",
          image: "https://example.com/a.png",
          services: [{ name: "A2A", endpoint: "https://agent.example.com/card.json" }],
          x402Support: "true",
        },
        distinctClient(),
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.transactions[0].from).to.equal(home);
    }
  });

  it("/metrics reports each key's balance and nonce lag", async () => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    for (const key of [sandbox.accounts[RELAYER_INDEX], ...extra]) {
      expect(text).to.match(new RegExp(`tak_relayer_balance_eth\\{chain_id="84532",address="${key.address}"\\} \\d`));
      expect(text).to.match(new RegExp(`tak_relayer_nonce_lag\\{chain_id="84532",address="${key.address}"\\} 0`));
    }
  });

  it("a batch prepared for a key the service no longer has is refused (409) before anyone pays; prepared again, it is sent", async () => {
    const home = sandbox.accounts[RELAYER_INDEX].address;
    // Prepared by this service until one is for an extra key, then sent through an instance on the same database
    // started without the extra keys (the operator removed them).
    let txId: string;
    let from: string;
    do {
      txId = await prepareRelayedToken(
        service.api,
        `GONE${Math.floor(Math.random() * 1e6)}`,
        sandbox.accounts[6].address,
      );
      from = (await service.services.batches.get(txId))!.transactions[0].unsigned.from;
    } while (from === home);
    const reduced = await startTestService(sandbox, { db });
    try {
      const payer = sandbox.accounts[3];
      const usdc = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, providerFor(sandbox.baseSepolia));
      const before = await usdc.balanceOf(payer.address);
      const unpaid = await reduced.api.post("/send-transactions", { txId });
      expect(unpaid.status, JSON.stringify(unpaid.body)).to.equal(409);
      expect(unpaid.body.message).to.include(`relayer key ${from}`);
      // Even with a payment attached: refused before it is verified or held.
      const quote = quoteOf(await service.api.post("/send-transactions", { txId })).accepts[0];
      const paid = await reduced.api.post(
        "/send-transactions",
        { txId },
        { "X-PAYMENT": await payWithEthers(payer, quote) },
      );
      expect(paid.status, JSON.stringify(paid.body)).to.equal(409);
      expect(await usdc.balanceOf(payer.address)).to.equal(before);
      expect((await reduced.services.batches.get(txId))!.status).to.equal("prepared");
      const again = await prepareRelayedToken(reduced.api, "AGAIN", sandbox.accounts[6].address);
      const sent = await payRelayedSend(reduced.api, again, payer);
      expect(sent.body.status, JSON.stringify(sent.body)).to.equal("success");
    } finally {
      await reduced.stop();
    }
  });
});
