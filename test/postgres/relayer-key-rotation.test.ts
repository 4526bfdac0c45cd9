import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { encryptKeystoreJsonSync, Wallet } from "ethers";
import { Pool } from "pg";
import { KEY_REFRESH_MS } from "../../service/engine/relayer-key-rotation";
import { cliJson, runAdminCli } from "../helpers/admin-cli";
import { startServiceProcess, type ChildService } from "../helpers/child-service";
import { stopStartedProcesses } from "../helpers/processes";
import { distinctClient, payRelayedSend } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { testEnv } from "../helpers/service";

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const CHAIN = 84532;
/** Paying clients, each sending one relayed operation after the other, alternating between the two processes. */
const CLIENTS = 4;

interface Operation {
  txId: string;
  preparedAt: number;
  from: string;
  status: number;
  body: { status: string; payment?: { status: string } };
}

/**
 * The production form of a rotation: two service processes on one PostgreSQL server, the operator's commands run by
 * the admin tool against the database (no service in between); both processes follow each decision within their
 * refresh while paying clients keep sending relayed operations through both.
 */
describe("PostgreSQL server: the relayer key rotated under load across two service processes", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  const schema = "rotate_" + randomBytes(6).toString("hex");
  const services: ChildService[] = [];
  const newKey = Wallet.createRandom();
  let dir: string;
  let env: Record<string, string>;

  before(async () => {
    sandbox = await getSandbox();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-pg-rotation-"));
    for (const chain of [sandbox.sepolia, sandbox.baseSepolia]) {
      const provider = providerFor(chain);
      await provider.send("hardhat_setBalance", [newKey.address, "0x56BC75E2D63100000"]);
      provider.destroy();
    }
    fs.writeFileSync(
      path.join(dir, "new.json"),
      encryptKeystoreJsonSync({ address: newKey.address, privateKey: newKey.privateKey }, "pg", {
        scrypt: { N: 1 << 12 },
      }),
    );
    fs.writeFileSync(path.join(dir, "new-password"), "pg\n");
    env = testEnv(sandbox, dir, { DATABASE_URL, DATABASE_SCHEMA: schema });
    services.push(...(await Promise.all([startServiceProcess(env), startServiceProcess(env)])));
  });
  after(async () => {
    await stopStartedProcesses();
    const pool = new Pool({ connectionString: DATABASE_URL });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a key added, the old one drained and removed by the admin tool: every operation confirmed, each key's nonces contiguous", async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const oldKey = sandbox.accounts[RELAYER_INDEX].address;
    const oldStart = await provider.getTransactionCount(oldKey, "latest");
    const admin = async (...args: string[]) =>
      runAdminCli(dir, ["relayer-keys", ...args], {
        DATABASE_URL,
        DATABASE_SCHEMA: schema,
        DEPLOYMENTS_DIR: env.DEPLOYMENTS_DIR,
        RELAYER_PRIVATE_KEY: env.RELAYER_PRIVATE_KEY,
        [`RPC_URL_${CHAIN}`]: env[`RPC_URL_${CHAIN}`],
        [`RPC_URL_${sandbox.sepolia.chainId}`]: env[`RPC_URL_${sandbox.sepolia.chainId}`],
      });
    const operations: Operation[] = [];
    const failures: string[] = [];
    let stopping = false;
    let turn = 0;
    const send = async () => {
      const [preparer, sender] = turn++ % 2 ? [services[0], services[1]] : [services[1], services[0]];
      const preparedAt = Date.now();
      const prepared = await preparer.api.post(
        "/x402/token/create",
        {
          chainId: String(CHAIN),
          name: `Rotation ${turn}`,
          symbol: `PGR${turn}`,
          agentWallet: sandbox.accounts[6].address,
        },
        distinctClient(),
      );
      if (prepared.status !== 200) throw new Error(`prepare: ${prepared.status} ${JSON.stringify(prepared.body)}`);
      const sent = await payRelayedSend(sender.api, prepared.body.txId, sandbox.accounts[4]);
      operations.push({
        txId: prepared.body.txId,
        preparedAt,
        from: prepared.body.transactions[0].from,
        status: sent.status,
        body: sent.body,
      });
    };
    const client = async () => {
      while (!stopping) await send().catch((error: Error) => void failures.push(error.message));
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, client));
    const until = async (what: string, done: () => boolean | Promise<boolean>, ms = 90_000) => {
      for (const deadline = Date.now() + ms; !(await done()); await new Promise((r) => setTimeout(r, 200))) {
        if (Date.now() > deadline || failures.length)
          throw new Error(`waiting for ${what}: ${failures.join("; ") || "timed out"}`);
      }
    };
    try {
      await until("the first operations", () => operations.length >= 6);
      const added = cliJson(
        await admin("add", "--keystore", path.join(dir, "new.json"), "--password-file", path.join(dir, "new-password")),
      );
      expect(added).to.include({ address: newKey.address, state: "active" });
      await until("operations prepared for the new key by both processes", () => {
        const onNew = operations.filter((o) => o.from === newKey.address);
        return onNew.length >= 4;
      });
      cliJson(await admin("drain", oldKey));
      const drainedAt = Date.now();
      await until("the old key removed", async () => (await admin("remove", oldKey)).code === 0);
      const removedAt = operations.length;
      await until("operations after the removal", () => operations.length >= removedAt + 8);
      stopping = true;
      await load;

      expect(failures).to.deep.equal([]);
      for (const op of operations) {
        expect(op.status, JSON.stringify(op.body)).to.equal(200);
        expect(op.body.status, JSON.stringify(op.body)).to.equal("success");
        expect(op.body.payment?.status).to.equal("settled");
        // Each process follows a drain within its refresh.
        if (op.preparedAt > drainedAt + KEY_REFRESH_MS + 1_000)
          expect(op.from, `${op.txId} prepared after the drain`).to.equal(newKey.address);
      }
      const nonces = new Map<string, number[]>([
        [oldKey, []],
        [newKey.address, []],
      ]);
      for (const op of operations) {
        const status = (await services[0].api.get("/get-transaction-status", { txId: op.txId })).body;
        const tx = (await provider.getTransaction(status.txHash))!;
        expect(tx.from).to.equal(op.from);
        nonces.get(tx.from)!.push(tx.nonce);
      }
      const oldNonces = nonces.get(oldKey)!.sort((a, b) => a - b);
      const newNonces = nonces.get(newKey.address)!.sort((a, b) => a - b);
      expect(oldNonces).to.deep.equal(Array.from({ length: oldNonces.length }, (_, i) => oldStart + i));
      // The new key's own delegation (EIP-7702) took nonces 0 and 1, by one of the two processes.
      expect(newNonces).to.deep.equal(Array.from({ length: newNonces.length }, (_, i) => 2 + i));
      expect(await provider.getTransactionCount(oldKey, "latest")).to.equal(oldStart + oldNonces.length);
      expect(await provider.getTransactionCount(newKey.address, "latest")).to.equal(2 + newNonces.length);
      const listed = cliJson(await admin("list")) as { chainId: number; address: string; state: string }[];
      expect(listed.filter((k) => k.chainId === CHAIN).map((k) => [k.address, k.state])).to.deep.equal([
        [newKey.address, "active"],
      ]);
      console.log(
        `      ${operations.length} paid operations through two processes: ${oldNonces.length} on the old key, ${newNonces.length} on the new one`,
      );
    } finally {
      stopping = true;
      await load;
      provider.destroy();
    }
  });
});
