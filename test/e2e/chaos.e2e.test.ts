// tier: chaos
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { keccak256 } from "ethers";
import { SCENARIOS } from "../chaos/scenarios";
import { failures, reportScenario, reportTable, type ScenarioReport } from "../chaos/report";
import { MiningControl, directProvider, type ChaosWorld } from "../chaos/world";
import { RpcFaultProxy } from "../helpers/rpc-faults";
import { ARTIFACTS } from "../helpers/browser";
import { createOwnSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";
import { USDC__factory } from "../../typechain-types";

/**
 * The chaos suite on instant chains: every fault of a public network between the service and the payment chain (Base
 * Sepolia, where paid relayed operations and their x402 settlements run), with paid relayed and client-signed
 * operations and faucet claims paid there (their payments settled in batches after the claims) side by side. Per scenario: operations, terminal, stuck, sent twice, charged twice, charged without the
 * operation, unpaid, wrong status, 5xx — every figure but the first two must be 0. `npm run rehearsal:chaos` runs the
 * same scenarios on the rehearsal network, with blocks at their public intervals.
 */
describe("e2e: chaos — faults of public networks between the service and its chain", function () {
  this.timeout(600_000);
  let sandbox: Sandbox;
  let proxy: RpcFaultProxy;
  let service: TestService;
  let world: ChaosWorld;
  const reports: ScenarioReport[] = [];

  before(async () => {
    sandbox = await createOwnSandbox();
    proxy = await RpcFaultProxy.start(sandbox.baseSepolia.url, 8_4532);
    service = await startTestService(sandbox, {
      env: {
        RPC_URL_84532: proxy.url,
        RPC_TIMEOUT_MS: "2000",
        // Room for ~10 attempts of 2 s: in "timeouts" a quarter of requests stall, and a scenario makes thousands (a
        // client polls each operation's status every 250 ms): at 0.25^10 ≈ 1e-6 per call, a 503 means the service gave
        // up too early. (Clients once saw 503s here because the proxy drew a batch's fault once per item, so a batch of
        // eight stalled ~90 % of the time; it draws once per request now, as the rates say.)
        RPC_RETRY_BUDGET_MS: "30000",
        CONFIRMATIONS: "2",
        RELAYER_BUMP_AFTER_BLOCKS: "2",
        SEND_WAIT_MS: "1500",
        REORG_WATCH_BLOCKS: "64",
        // Claims' payments made together are settled together: the faults meet batches of several.
        X402_SETTLEMENT_BATCH_MS: "1500",
      },
    });
    const { key } = await service.services.apiKeys.create({ email: "chaos@example.com", plan: "Enterprise" });
    const [payer, agent] = [sandbox.accounts[3], sandbox.accounts[4]];
    const signers = sandbox.accounts.slice(10, 14);
    for (const signer of signers) await service.services.signers.add(signer.address, "all-keys");
    world = {
      api: service.api,
      apiKey: key,
      base: {
        chainId: 84532,
        chain: sandbox.baseSepolia,
        proxy,
        provider: directProvider(sandbox.baseSepolia),
        mining: new MiningControl(sandbox.baseSepolia),
        deployment: sandbox.deployments[84532],
      },
      faucet: { provider: directProvider(sandbox.sepolia), bkn: sandbox.deployments[11155111].contracts.BKN },
      signers,
      payer,
      agentWallet: agent.address,
      confirmations: 2,
      blockTime: 0,
      opDeadlineMs: 90_000,
    };
  });

  after(async () => {
    if (reports.length) {
      const table = reportTable(reports);
      console.log(`\n${table}\n`);
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      fs.writeFileSync(path.join(ARTIFACTS, "chaos-instant.json"), JSON.stringify(reports, null, 2));
    }
    world?.base.provider.destroy();
    world?.faucet.provider.destroy();
    await service?.stop();
    await proxy?.close();
    await sandbox?.close();
  });

  it("a call whose chain cannot be asked within the retry budget is a 503 naming the chain, with Retry-After (nothing charged)", async () => {
    proxy.add({ kind: "reset" });
    try {
      const [prepare, lookup] = await Promise.all([
        service.api.post(
          "/x402/token/create",
          { chainId: "84532", name: "Down", symbol: "DOWN1", agentWallet: world.agentWallet },
          { "x-forwarded-for": "10.9.9.9" },
        ),
        service.api.get("/get-transaction-status", { hash: "0x" + "ab".repeat(32) }),
      ]);
      for (const res of [prepare, lookup]) {
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.body.error.code).to.equal("CHAIN_UNAVAILABLE");
        expect(res.body.error.details.chainId).to.equal(84532);
        expect(res.body.message).to.match(/Chain 84532 is not answering/);
        expect(Number(res.headers.get("retry-after"))).to.be.at.least(1);
      }
    } finally {
      proxy.clear();
    }
  });

  it("a client's replacement is refused when it raises a fee by less than 10% (400), from another key (403), and once mined (409)", async () => {
    const signer = world.signers[0];
    const api = world.api.withKey(world.apiKey);
    await world.base.mining.hold();
    try {
      const prepared = await api.post("/prepare-transactions", {
        method: "agentCreateToken",
        chainId: "84532",
        signerAddress: signer.address,
        name: "Replaced",
        symbol: "REPL1",
        agentWallet: world.agentWallet,
      });
      expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
      const unsigned = prepared.body.transactions[0];
      const sent = await api.post("/send-transactions", {
        txId: prepared.body.txId,
        signedTransactions: [await signer.signTransaction(unsigned)],
      });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
      const raise = (percent: bigint) =>
        signer.signTransaction({
          ...unsigned,
          maxFeePerGas: (BigInt(unsigned.maxFeePerGas) * (100n + percent)) / 100n,
          maxPriorityFeePerGas: (BigInt(unsigned.maxPriorityFeePerGas) * (100n + percent)) / 100n,
        });
      const tooLittle = await api.post("/send-transactions", {
        txId: prepared.body.txId,
        signedTransactions: [await raise(5n)],
      });
      expect(tooLittle.status, JSON.stringify(tooLittle.body)).to.equal(400);
      expect(tooLittle.body.error.code).to.equal("REPLACEMENT_UNDERPRICED");
      const { key: otherKey } = await service.services.apiKeys.create({
        email: "other@example.com",
        plan: "Enterprise",
      });
      const otherTenant = await world.api
        .withKey(otherKey)
        .post("/send-transactions", { txId: prepared.body.txId, signedTransactions: [await raise(20n)] });
      expect(otherTenant.status, JSON.stringify(otherTenant.body)).to.equal(403);
      const replacement = await raise(20n);
      const replaced = await api.post("/send-transactions", {
        txId: prepared.body.txId,
        signedTransactions: [replacement],
      });
      expect(replaced.status, JSON.stringify(replaced.body)).to.equal(202);
      const status = (await api.get("/get-transaction-status", { txId: prepared.body.txId })).body;
      expect(status.transactions[0].hash).to.equal(keccak256(replacement));
      expect(status.transactions[0].replacedHashes).to.have.length(1);
      await world.base.mining.resume();
      const deadline = Date.now() + 30_000;
      let final = status;
      while (final.batchStatus === "pending" && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        final = (await api.get("/get-transaction-status", { txId: prepared.body.txId })).body;
      }
      expect(final.batchStatus).to.equal("success");
      expect(final.transactions[0].hash).to.equal(keccak256(replacement)); // the replacement was mined, not the first
      const late = await api.post("/send-transactions", {
        txId: prepared.body.txId,
        signedTransactions: [await raise(50n)],
      });
      expect(late.status, JSON.stringify(late.body)).to.equal(409);
    } finally {
      await world.base.mining.resume();
    }
  });

  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: ${scenario.description}`, async () => {
      const fromBlock = await world.base.provider.getBlockNumber();
      const ops = await scenario.run(world);
      const report = await reportScenario(world, scenario.name, fromBlock, ops);
      reports.push(report);
      expect(failures(report), JSON.stringify(report, null, 2)).to.deep.equal([]);
      expect(report.terminal, JSON.stringify(report, null, 2)).to.equal(report.operations);
    });
  }

  it("a paid send whose payment cannot be simulated (every eth_call fails) is a 503, not a refused payment; the same payment goes through once the chain answers", async () => {
    const prepared = await service.api.post(
      "/x402/token/create",
      { chainId: "84532", name: "Sim down", symbol: "SIMDN1", agentWallet: world.agentWallet },
      { "x-forwarded-for": "10.9.9.10" },
    );
    expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
    const txId = prepared.body.txId;
    const payment = await payWithEthers(
      world.payer,
      quoteOf(await service.api.post("/send-transactions", { txId })).accepts[0],
    );
    const usdc = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, world.base.provider);
    const before = await usdc.balanceOf(world.payer.address);
    proxy.add({ kind: "reset", methods: ["eth_call"] });
    try {
      const res = await service.api.post("/send-transactions", { txId }, { "X-PAYMENT": payment });
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body.error.code).to.equal("CHAIN_UNAVAILABLE");
      expect(Number(res.headers.get("retry-after"))).to.be.at.least(1);
    } finally {
      proxy.clear();
    }
    expect((await service.api.get("/get-transaction-status", { txId })).body.batchStatus).to.equal("prepared");
    expect(await usdc.balanceOf(world.payer.address)).to.equal(before);
    const sent = await service.api.post("/send-transactions", { txId }, { "X-PAYMENT": payment });
    expect([200, 202], JSON.stringify(sent.body)).to.include(sent.status);
    // SEND_WAIT_MS is short here (1.5 s) and the batch waits for two confirmations: it may still be pending.
    let status = sent.body.status;
    for (let i = 0; i < 100 && status === "pending"; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await service.api.get("/get-transaction-status", { txId })).body.status;
    }
    expect(status).to.equal("success");
    expect(before - (await usdc.balanceOf(world.payer.address))).to.equal(10_000n);
  });
});
