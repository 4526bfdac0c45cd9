// tier: e2e
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { Wallet, parseUnits } from "ethers";
import { SecurityToken__factory } from "../../typechain-types";
import { killHard, startServiceProcess, stopGracefully } from "../helpers/child-service";
import { setUpOperator } from "../helpers/operator";
import { stopStartedProcesses } from "../helpers/processes";
import { execute, prepareAndSign } from "../helpers/flow";
import { payWithEthers, quoteOf } from "../helpers/x402";
import { RELAYER_INDEX, SETTLEMENT_INDEX } from "../helpers/sandbox";
import { BKN__factory, USDC__factory } from "../../typechain-types";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { testEnv } from "../helpers/service";

describe("e2e: a batch interrupted by a crash or a shutdown completes after restart, nothing sent twice", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let child: ChildProcess | undefined;
  let issuer: Wallet;

  before(async () => {
    sandbox = await getSandbox();
    issuer = sandbox.accounts[1];
  });
  /** A service process on a fresh data directory; the payment chain's USDC, a payer (#5) and the payee. */
  async function startPaying(prefix: string, extraEnv: Record<string, string>) {
    const env = testEnv(sandbox, fs.mkdtempSync(path.join(os.tmpdir(), prefix)), extraEnv);
    const started = await startServiceProcess(env);
    child = started.child;
    const provider = providerFor(sandbox.baseSepolia);
    const usdc = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, provider);
    return {
      env,
      started,
      provider,
      usdc,
      payer: sandbox.accounts[5],
      payTo: sandbox.accounts[SETTLEMENT_INDEX].address,
    };
  }

  // Every service a test started (each restart starts another) ends with the test, whatever failed.
  afterEach(stopStartedProcesses);
  after(async () => {
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [true] });
    await sandbox.baseSepolia.provider.request({ method: "evm_setAutomine", params: [true] });
  });

  it("kill -9 between the two transactions of a mintToken batch, restart, the batch completes", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-recovery-"));
    const env = testEnv(sandbox, dataDir, { SEND_WAIT_MS: "1500" });

    const key = await setUpOperator(dataDir, "ops@recovery.test", issuer.address);

    let started = await startServiceProcess(env);
    child = started.child;
    let api = started.api.withKey(key);
    await execute(api, issuer, {
      method: "newTokenization",
      chainId: "aa36a7",
      tokenizerEmail: "issuer@recovery.test",
      name: "Recovery",
      tokenSymbol: "RCVR",
    });
    const tokenAddress = (await api.get("/get-tokenizer-info", { tokenSymbol: "RCVR" })).body.tokenAddress;
    const investor = sandbox.accounts[12].address;

    const provider = providerFor(sandbox.sepolia);
    const { prepared, signedTransactions } = await prepareAndSign(api, issuer, {
      method: "mintToken",
      chainId: "aa36a7",
      tokenSymbol: "RCVR",
      userToMint: [{ investorAddress: investor, investorEmail: "inv@recovery.test", amount: "42" }],
    });
    expect(prepared.transactions).to.have.length(2);
    const nonceBefore = await provider.getTransactionCount(issuer.address, "latest");

    // Blocks stop: the first transaction is broadcast and stays pending; the second waits for it.
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [false] });
    const sent = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions });
    expect(sent.status).to.equal(202);
    expect(sent.body.status).to.equal("pending");
    const [firstHash, secondHash] = sent.body.txHashes;
    const pending = await api.get("/get-transaction-status", { txId: prepared.txId });
    expect(pending.body.transactions.map((t: any) => t.status)).to.deep.equal(["pending", "pending"]);
    expect(await provider.getTransaction(firstHash)).to.not.equal(null);
    expect(await provider.getTransaction(secondHash)).to.equal(null); // never broadcast before the first confirms

    await killHard(child);

    // While the service is down, the first transaction is mined.
    await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [true] });
    expect((await provider.getTransactionReceipt(firstHash))?.status).to.equal(1);

    started = await startServiceProcess(env);
    child = started.child;
    api = started.api.withKey(key);
    let status: any;
    for (let i = 0; i < 100; i++) {
      status = (await api.get("/get-transaction-status", { txId: prepared.txId })).body;
      if (status.status !== "pending") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status.status).to.equal("success");
    expect(status.txHashes).to.deep.equal([firstHash, secondHash]);

    // Exactly two transactions left the issuer, each once, and the records follow the chain.
    expect(await provider.getTransactionCount(issuer.address, "latest")).to.equal(nonceBefore + 2);
    expect((await provider.getTransactionReceipt(secondHash))?.status).to.equal(1);
    const token = SecurityToken__factory.connect(tokenAddress, provider);
    expect(await token.balanceOf(investor)).to.equal(42n * 10n ** 18n);
    const read = await api.get("/get-balance-whitelist", { tokenSymbol: "RCVR", investorEmail: "inv@recovery.test" });
    expect(read.body).to.include({ tokenBalance: "42", whitelisted: true });
    const again = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions });
    expect(again.status).to.equal(409);
  });

  it("kill -9 while a paid relayed transaction is pending, restart: one confirmed transaction, one settled payment", async () => {
    const paying = await startPaying("tak-relayed-recovery-", { SEND_WAIT_MS: "1500" });
    let { started } = paying;
    const { env, provider, usdc, payer, payTo } = paying;
    const relayer = sandbox.accounts[RELAYER_INDEX].address;

    const prepared = await started.api.post("/x402/token/create", {
      chainId: "84532",
      name: "Crash Agent",
      symbol: "CRASH",
      agentWallet: payer.address,
      premint: "5",
    });
    expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
    const txId = prepared.body.txId;
    const quote = quoteOf(await started.api.post("/send-transactions", { txId })).accepts[0];
    const before = {
      payer: await usdc.balanceOf(payer.address),
      payTo: await usdc.balanceOf(payTo),
      relayerNonce: await provider.getTransactionCount(relayer, "latest"),
    };

    await sandbox.baseSepolia.provider.request({ method: "evm_setAutomine", params: [false] });
    const sent = await started.api.post(
      "/send-transactions",
      { txId },
      { "X-PAYMENT": await payWithEthers(payer, quote) },
    );
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    // Bound to the operation's transaction (same chain: the relayer's EIP-7702 delegate settles it in that transaction).
    expect(sent.body.payment.status).to.equal("settling");
    const hash = sent.body.txHashes[0];
    expect(await provider.getTransaction(hash)).to.not.equal(null); // in the mempool
    await killHard(started.child);

    const settlementNonce = await provider.getTransactionCount(payTo, "latest");
    await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
    await sandbox.baseSepolia.provider.request({ method: "evm_setAutomine", params: [true] });
    expect((await provider.getTransactionReceipt(hash))?.status).to.equal(1);
    // Charged once, by the operation's own transaction, while the service was down.
    expect(before.payer - (await usdc.balanceOf(payer.address))).to.equal(10_000n);

    started = await startServiceProcess(env);
    child = started.child;
    let status: any;
    for (let i = 0; i < 100; i++) {
      status = (await started.api.get("/get-transaction-status", { txId })).body;
      if (status.status !== "pending" && status.payments?.[0]?.status === "settled") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status.status).to.equal("success");
    expect(status.txHashes).to.deep.equal([hash]);
    expect(status.payments).to.have.length(1);
    expect(status.payments[0].status).to.equal("settled");
    expect(status.payments[0].settlementTransaction).to.equal(hash);
    expect(await provider.getTransactionCount(relayer, "latest")).to.equal(before.relayerNonce + 1);
    expect(await provider.getTransactionCount(payTo, "latest")).to.equal(settlementNonce); // no settlement sent after the restart
    expect(before.payer - (await usdc.balanceOf(payer.address))).to.equal(10_000n); // never charged twice
    expect((await usdc.balanceOf(payTo)) - before.payTo).to.equal(10_000n);
    expect(status.outcome.tokenAddress).to.match(/^0x[0-9a-fA-F]{40}$/);
  });

  it("kill -9 while a settlement batch waits in the mempool, restart: every payment of the batch is settled by it, none sent again, and only then the claims mint", async () => {
    const paying = await startPaying("tak-batch-recovery-", { SEND_WAIT_MS: "1000", X402_SETTLEMENT_BATCH_MS: "1500" });
    let { started } = paying;
    const { env, provider, usdc, payer, payTo } = paying;
    const recipients = [1, 2, 3].map(() => Wallet.createRandom().address);
    const claim = (recipient: string, headers: Record<string, string> = {}) =>
      started.api.post("/faucet/bkn", { recipientAddress: recipient }, { "Idempotency-Key": randomUUID(), ...headers });
    const quote = quoteOf(await claim(recipients[0])).accepts[0];
    const before = { payer: await usdc.balanceOf(payer.address), payTo: await usdc.balanceOf(payTo) };
    const bkn = BKN__factory.connect(sandbox.deployments[11155111].contracts.BKN, providerFor(sandbox.sepolia));
    const minted = async () => Promise.all(recipients.map((r) => bkn.balanceOf(r)));

    // The claims are paid on Base Sepolia before they mint on Sepolia: their settlements wait in Base Sepolia's
    // mempool, and the claims wait for them (202, nothing minted).
    await sandbox.baseSepolia.provider.request({ method: "evm_setAutomine", params: [false] });
    const claims = await Promise.all(
      recipients.map(async (r, i) =>
        claim(r, { "X-PAYMENT": await payWithEthers(payer, quote), "x-forwarded-for": `10.7.0.${i + 1}` }),
      ),
    );
    const txIds = claims.map((c) => {
      expect(c.status, JSON.stringify(c.body)).to.equal(202);
      return c.body.txId as string;
    });
    const settling = async () =>
      Promise.all(
        txIds.map(async (txId) => (await started.api.get("/get-transaction-status", { txId })).body.payments[0]),
      );
    let payments: any[] = [];
    for (
      let i = 0;
      i < 100 && !(payments.length && payments.every((p) => p.status === "settling" && p.settlementTransaction));
      i++
    ) {
      await new Promise((r) => setTimeout(r, 100));
      payments = await settling();
    }
    const hashes = [...new Set(payments.map((p) => p.settlementTransaction as string))];
    expect(hashes.length, JSON.stringify(payments)).to.be.lessThan(3); // the first went at once, the others together
    for (const h of hashes) expect(await provider.getTransaction(h), h).to.not.equal(null);
    expect(await minted(), "nothing minted before the payments are settled").to.deep.equal([0n, 0n, 0n]);
    await killHard(started.child);

    const settlementNonce = await provider.getTransactionCount(payTo, "pending");
    await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
    await sandbox.baseSepolia.provider.request({ method: "evm_setAutomine", params: [true] });
    for (const h of hashes) expect((await provider.getTransactionReceipt(h))?.status).to.equal(1);

    started = await startServiceProcess(env);
    child = started.child;
    for (let i = 0; i < 100 && !payments.every((p) => p.status === "settled"); i++) {
      await new Promise((r) => setTimeout(r, 200));
      payments = await settling();
    }
    expect(payments.map((p) => p.status)).to.deep.equal(["settled", "settled", "settled"]);
    expect(new Set(payments.map((p) => p.settlementTransaction))).to.deep.equal(new Set(hashes));
    for (let i = 0; i < 100 && (await minted()).some((b) => b === 0n); i++)
      await new Promise((r) => setTimeout(r, 200));
    expect(await minted(), "each claim minted once its payment was settled").to.deep.equal(
      recipients.map(() => parseUnits("100", 18)),
    );
    expect(await provider.getTransactionCount(payTo, "latest"), "no settlement sent after the restart").to.equal(
      settlementNonce,
    );
    expect(before.payer - (await usdc.balanceOf(payer.address))).to.equal(3n * 10_000n);
    expect((await usdc.balanceOf(payTo)) - before.payTo).to.equal(3n * 10_000n);
  });

  it("SIGTERM with a send in flight: the send answers (202 pending), the process exits 0, the next start finishes the batch", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-shutdown-"));
    const env = testEnv(sandbox, dataDir, { SEND_WAIT_MS: "30000", SHUTDOWN_TIMEOUT_MS: "15000" });
    const key = await setUpOperator(dataDir, "ops@shutdown.test", issuer.address);

    let started = await startServiceProcess(env);
    child = started.child;
    let api = started.api.withKey(key);
    await execute(api, issuer, {
      method: "newTokenization",
      chainId: "aa36a7",
      tokenizerEmail: "issuer@shutdown.test",
      name: "Shutdown",
      tokenSymbol: "SHUT",
    });
    const investor = sandbox.accounts[13].address;
    const { prepared, signedTransactions } = await prepareAndSign(api, issuer, {
      method: "mintToken",
      chainId: "aa36a7",
      tokenSymbol: "SHUT",
      userToMint: [{ investorAddress: investor, investorEmail: "inv@shutdown.test", amount: "7" }],
    });
    expect(prepared.transactions).to.have.length(2);
    const provider = providerFor(sandbox.sepolia);
    const nonceBefore = await provider.getTransactionCount(issuer.address, "latest");

    // Blocks stop: the send broadcasts the first transaction and waits for it (up to SEND_WAIT_MS, 30 s).
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [false] });
    const inFlight = api.post("/send-transactions", { txId: prepared.txId, signedTransactions });
    for (let i = 0; i < 100 && (await provider.getTransactionCount(issuer.address, "pending")) === nonceBefore; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(await provider.getTransactionCount(issuer.address, "pending")).to.equal(nonceBefore + 1);

    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
    const signalledAt = Date.now();
    child.kill("SIGTERM");
    const answer = await inFlight;
    expect(Date.now() - signalledAt, "the send answered right after SIGTERM, not after SEND_WAIT_MS").to.be.below(
      10_000,
    );
    expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
    expect(answer.body).to.include({ status: "pending", txId: prepared.txId });
    expect(await exited).to.equal(0);
    const log = started.output();
    expect(log)
      .to.include('"shutting down: finishing requests in flight"')
      .and.include('"signal":"SIGTERM"')
      .and.include('"stopped"');
    await fetch(`${started.url}/health`).then(
      () => expect.fail("the service still answers after SIGTERM"),
      () => undefined,
    );

    // While it is down the first transaction is mined; the next start broadcasts the second, once.
    await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [true] });
    started = await startServiceProcess(env);
    child = started.child;
    api = started.api.withKey(key);
    let status: any;
    for (let i = 0; i < 100; i++) {
      status = (await api.get("/get-transaction-status", { txId: prepared.txId })).body;
      if (status.status !== "pending") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status.status, JSON.stringify(status)).to.equal("success");
    expect(status.txHashes).to.deep.equal(answer.body.txHashes);
    expect(await provider.getTransactionCount(issuer.address, "latest")).to.equal(nonceBefore + 2);
    expect(
      (await api.get("/get-balance-whitelist", { tokenSymbol: "SHUT", investorAddress: investor })).body.tokenBalance,
    ).to.equal("7");
    expect(await stopGracefully(child)).to.equal(0);
  });
});
