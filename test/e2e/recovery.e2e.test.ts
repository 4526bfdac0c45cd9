import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import type { Wallet } from "ethers";
import { SecurityToken__factory } from "../../typechain-types";
import { execute, prepareAndSign } from "../helpers/flow";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { ApiClient, testEnv } from "../helpers/service";
import { ApiKeys } from "../../service/store/api-keys";
import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { Signers } from "../../service/store/signers";

/** The service as its own process (service/main.ts), on an embedded database in `dataDir`, so it can be killed. */
async function startServiceProcess(env: Record<string, string>, dataDir: string): Promise<{ child: ChildProcess; api: ApiClient }> {
  const runtimeFile = path.join(dataDir, "sandbox", "service.json");
  fs.rmSync(runtimeFile, { force: true });
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "service/main.ts"], {
    env: { ...process.env, ...env, TS_NODE_TRANSPILE_ONLY: "true" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const deadline = Date.now() + 60_000;
  while (!fs.existsSync(runtimeFile)) {
    if (child.exitCode !== null) throw new Error(`service exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`service did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const { url } = JSON.parse(fs.readFileSync(runtimeFile, "utf8"));
  return { child, api: new ApiClient(url) };
}

async function killHard(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}

describe("e2e: a batch interrupted by a crash completes after restart, nothing sent twice", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let child: ChildProcess | undefined;
  let issuer: Wallet;

  before(async () => {
    sandbox = await getSandbox();
    issuer = sandbox.accounts[1];
  });
  after(async () => {
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [true] });
    if (child) await killHard(child);
  });

  it("kill -9 between the two transactions of a mintToken batch, restart, the batch completes", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-recovery-"));
    const env = testEnv(sandbox, dataDir, { SEND_WAIT_MS: "1500" });

    // Operator set-up on the embedded database, before the service owns it.
    const db = await openDb({ dataDir: path.join(dataDir, "sandbox", "pglite") });
    await migrate(db);
    const { key } = await new ApiKeys(db).create({ email: "ops@recovery.test", plan: "Enterprise" });
    await new Signers(db).add(issuer.address);
    await db.close();

    let started = await startServiceProcess(env, dataDir);
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

    started = await startServiceProcess(env, dataDir);
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
});
