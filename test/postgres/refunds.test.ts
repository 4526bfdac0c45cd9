import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet, parseEther, type JsonRpcProvider } from "ethers";
import { Pool } from "pg";
import { USDC__factory } from "../../typechain-types";
import { killHard, startServiceProcess, type ChildService } from "../helpers/child-service";
import { stopStartedProcesses } from "../helpers/processes";
import { distinctClient } from "../helpers/relayed";
import { createOwnSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { testEnv } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const BLOCK_TIME = 1;
const PRICE = 10_000n; // 0.01 USDC: a faucet claim
const BASE = 84532;

/**
 * A refund end to end (issue 50, item 6), on chains mining every second, with two service processes on one PostgreSQL
 * database and a refund wallet: a faucet claim is paid (settled first, on Base Sepolia), then the relayer has no ETH
 * left on Sepolia; the node refuses its transaction, the batch ends rejected for a reason of ours, and the payment is
 * owed back. One of the two instances claims the refund, signs it and stores it before broadcasting it; both are killed
 * while it waits to be mined (and the node forgets it); restarted, they send the same bytes again, and the payer gets
 * its USDC back exactly once.
 */
describe("PostgreSQL server: a refund paid once by two service processes sharing one database", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let base: JsonRpcProvider;
  let sepolia: JsonRpcProvider;
  let db: Pool;
  let env: Record<string, string>;
  const schema = "refund_" + randomBytes(6).toString("hex");
  const refundWallet = Wallet.createRandom();
  const services: ChildService[] = [];

  const until = async (what: string, check: () => Promise<boolean>, ms = 90_000) => {
    for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200)))
      if (await check()) return;
    throw new Error(`timed out waiting for ${what}`);
  };
  const refundRow = async (txId: string) =>
    (await db.query(`SELECT * FROM ${schema}.payment_refunds WHERE tx_id = $1`, [txId])).rows[0];
  const usdc = () => USDC__factory.connect(sandbox.deployments[BASE].contracts.USDC, base);
  /** USDC transfers from the refund wallet to `payer` on Base Sepolia, all blocks. */
  const refundTransfers = async (payer: string) =>
    usdc().queryFilter(usdc().filters.Transfer(refundWallet.address, payer), 0, "latest");

  before(async () => {
    sandbox = await createOwnSandbox({ blockTime: BLOCK_TIME });
    base = providerFor(sandbox.baseSepolia);
    sepolia = providerFor(sandbox.sepolia);
    db = new Pool({ connectionString: DATABASE_URL, max: 2 });
    const funder = sandbox.accounts[3].connect(base);
    await (await funder.sendTransaction({ to: refundWallet.address, value: parseEther("1") })).wait();
    await (
      await USDC__factory.connect(sandbox.deployments[BASE].contracts.USDC, funder).transfer(
        refundWallet.address,
        100n * PRICE,
      )
    ).wait();
    env = testEnv(sandbox, fs.mkdtempSync(path.join(os.tmpdir(), "tak-pg-refunds-")), {
      DATABASE_URL,
      DATABASE_SCHEMA: schema,
      X402_REFUND_PRIVATE_KEY: refundWallet.privateKey,
      SEND_WAIT_MS: "30000",
    });
    services.push(...(await Promise.all([startServiceProcess(env), startServiceProcess(env)])));
  });
  after(async () => {
    await stopStartedProcesses();
    await db?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db?.end();
    base?.destroy();
    sepolia?.destroy();
    await sandbox?.close();
  });

  it("the relayer emptied of ETH after a settlement: the payer gets its USDC back exactly once, across two instances and a crash of both", async () => {
    const [a] = services;
    const funder = sandbox.accounts[3].connect(base);
    const payer = new Wallet(Wallet.createRandom().privateKey, base);
    await (await funder.sendTransaction({ to: payer.address, value: parseEther("1") })).wait();
    await (await USDC__factory.connect(await usdc().getAddress(), funder).transfer(payer.address, PRICE)).wait();
    const recipient = Wallet.createRandom().address;
    const quote = quoteOf(
      await a.api.post("/faucet/bkn", { recipientAddress: recipient }, { "Idempotency-Key": randomUUID() }),
    ).accepts[0];
    const relayer = sandbox.accounts[RELAYER_INDEX].address;
    const refundNonce = await base.getTransactionCount(refundWallet.address, "latest");

    // The payment chain is held still from here: the claim's settlement waits in its pool while the relayer loses its
    // ETH on Sepolia; mined, the claim is paid; the refund later waits in the pool too.
    await sandbox.baseSepolia.provider.request({ method: "evm_setIntervalMining", params: [0] });
    const claimed = a.api.post(
      "/faucet/bkn",
      { recipientAddress: recipient },
      { "Idempotency-Key": randomUUID(), "X-PAYMENT": await payWithEthers(payer, quote), ...distinctClient() },
    );
    await until("the claim's settlement in the pool", async () => {
      const { rows } = await db.query(
        `SELECT 1 FROM ${schema}.payments WHERE payer = $1 AND settle_tx_hash IS NOT NULL`,
        [payer.address.toLowerCase()],
      );
      return rows.length === 1;
    });
    await sandbox.sepolia.provider.request({ method: "hardhat_setBalance", params: [relayer, "0x0"] });
    await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
    const res = await claimed;
    const txId: string = res.body.txId;
    await until(
      "the claim rejected",
      async () => (await a.api.get("/get-transaction-status", { txId })).body.status === "rejected",
    );
    const status = (await a.api.get("/get-transaction-status", { txId })).body;
    expect(status.error).to.match(/insufficient funds|enough funds/i);
    expect(status.payments[0].status).to.equal("settled");
    expect(await usdc().balanceOf(payer.address)).to.equal(0n);

    // One instance claims it, signs it and stores it before broadcasting it; it waits in the held pool.
    await until("the refund sent", async () => (await refundRow(txId))?.status === "sending");
    const sent = await refundRow(txId);
    expect(sent).to.include({ refunded_by: "refund wallet", attempts: 1 });
    expect(Number(sent.tx_nonce)).to.equal(refundNonce);
    expect(sent.tx_raw_sealed, "the signed bytes are kept sealed only").to.not.match(/^0x/);
    expect((await base.getTransaction(sent.tx_hash))?.from).to.equal(refundWallet.address);

    // Both instances die; the node forgets the transaction. Restarted, the refund is followed from the database: the
    // same bytes are sent again (never a second signature), and mined once the chain mines again.
    await Promise.all(services.splice(0).map((s) => killHard(s.child)));
    await sandbox.baseSepolia.provider.request({ method: "hardhat_dropTransaction", params: [sent.tx_hash] });
    expect(await base.getTransaction(sent.tx_hash)).to.equal(null);
    services.push(...(await Promise.all([startServiceProcess(env), startServiceProcess(env)])));
    await until("the refund sent again", async () => (await base.getTransaction(sent.tx_hash)) !== null).catch((e) => {
      for (const s of services)
        console.log(
          s
            .output()
            .split("\n")
            .filter((l) => /refund|warn|error/i.test(l))
            .join("\n"),
        );
      throw e;
    });
    await sandbox.baseSepolia.provider.request({ method: "evm_setIntervalMining", params: [BLOCK_TIME * 1000] });
    await until("the refund confirmed", async () => (await refundRow(txId))?.status === "refunded");

    const done = await refundRow(txId);
    expect(done).to.include({ tx_hash: sent.tx_hash, tx_raw_sealed: null, attempts: 1 });
    expect(await usdc().balanceOf(payer.address), "paid back").to.equal(PRICE);
    const seenBy = services[1].api;
    const after = (await seenBy.get("/get-transaction-status", { txId })).body.payments[0];
    expect(after.refund).to.deep.include({ status: "refunded", transaction: sent.tx_hash, amount: PRICE.toString() });
    // A few more passes of both instances (every 5 s): nothing is paid twice.
    await new Promise((r) => setTimeout(r, 12_000));
    expect(await refundTransfers(payer.address)).to.have.length(1);
    expect(await base.getTransactionCount(refundWallet.address, "latest")).to.equal(refundNonce + 1);
    expect(await usdc().balanceOf(payer.address)).to.equal(PRICE);
    const { rows: events } = await db.query(
      `SELECT type FROM ${schema}.events WHERE tx_id = $1 AND type LIKE 'payment.refund%' ORDER BY id`,
      [txId],
    );
    expect(events.map((e) => e.type)).to.deep.equal(["payment.refund_owed", "payment.refunded"]);
    const metrics = await (await fetch(`${services[0].url}/metrics`)).text();
    expect(metrics).to.match(/^tak_x402_refunds\{state="refunded"\} 1$/m);
  });
});
