// tier: e2e
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { concat, encryptKeystoreJsonSync, Wallet } from "ethers";
import { runRelayerKeyCommand } from "../../service/operator/relayer-keys";
import { parseArguments } from "../../service/operator/arguments";
import { UsageError } from "../../service/operator/usage-error";
import { openDb, type Db } from "../../service/store/db";
import { cliError, cliJson, migrateWithCli, runAdminCli } from "../helpers/admin-cli";
import { stopStartedProcesses } from "../helpers/processes";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

const CHAIN = 84532;
const ADMIN_TOKEN = "rotation-test-admin-token-0123456789";
/** Paying clients sending relayed operations at once, each one operation after the other. */
const CLIENTS = 4;

interface Operation {
  txId: string;
  preparedAt: number;
  from: string;
  status: number;
  body: { status: string; payment?: { status: string } };
}

/**
 * Relayer key rotation on a running service, through the operator channel (POST /admin/command, what `npm run admin --
 * relayer-keys …` uses): a new key added from a keystore, the old one drained, then removed, while paying clients keep
 * sending relayed operations. Every operation is confirmed, each key's nonces are contiguous, none is lost.
 */
describe("e2e: relayer key rotation under load, without a restart", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let service: TestService;
  /** A second instance on the same database, which only follows the stored decisions (its refresh every 2 s). */
  let other: TestService;
  let db: Db;
  let dir: string;
  const newKey = Wallet.createRandom();
  let oldKey: string;

  const admin = async (command: Record<string, unknown>) => {
    const response = await fetch(`${service.url}/admin/command`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-admin-token": ADMIN_TOKEN },
      body: JSON.stringify(command),
    });
    return { status: response.status, body: (await response.json()) as { result?: any; message?: string } };
  };
  const until = async (what: string, done: () => boolean | Promise<boolean>, ms = 60_000) => {
    for (const deadline = Date.now() + ms; !(await done()); await new Promise((r) => setTimeout(r, 100))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    }
  };

  before(async () => {
    sandbox = await getSandbox();
    oldKey = sandbox.accounts[RELAYER_INDEX].address;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-rotation-"));
    for (const chain of [sandbox.sepolia, sandbox.baseSepolia]) {
      const provider = providerFor(chain);
      await provider.send("hardhat_setBalance", [newKey.address, "0x56BC75E2D63100000"]); // 100 ETH
      provider.destroy();
    }
    // A light scrypt cost keeps the test quick; keystores from geth or cast use the standard one, read the same way.
    fs.writeFileSync(
      path.join(dir, "new-relayer.json"),
      encryptKeystoreJsonSync({ address: newKey.address, privateKey: newKey.privateKey }, "rotation", {
        scrypt: { N: 1 << 12 },
      }),
    );
    fs.writeFileSync(path.join(dir, "new-relayer-password"), "rotation\n", { mode: 0o600 });
    db = await openDb({});
    service = await startTestService(sandbox, { db, env: { ADMIN_TOKEN } });
    other = await startTestService(sandbox, { db });
  });
  after(async () => {
    await other?.stop();
    await service?.stop();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the admin tool's relayer-keys commands: a keystore or a token (paths made absolute), the flags each needs named", () => {
    const parsed = parseArguments(
      ["relayer-keys", "add", "--keystore", "keys/new.json", "--password-file", "keys/password"],
      [],
    );
    expect(parsed).to.deep.equal({
      command: {
        command: "relayer-keys.add",
        chainId: undefined,
        source: {
          kind: "keystore",
          keystore: path.resolve("keys/new.json"),
          passwordFile: path.resolve("keys/password"),
        },
      },
    });
    const token = parseArguments(
      [
        "relayer-keys",
        "add",
        "--pkcs11-module",
        "/usr/lib/softhsm/libsofthsm2.so",
        "--token-label",
        "t",
        "--key-label",
        "k",
        "--pin-file",
        "/run/pin",
        "--chain-id",
        "84532",
      ],
      [],
    );
    expect(token).to.deep.equal({
      command: {
        command: "relayer-keys.add",
        chainId: 84532,
        source: {
          kind: "pkcs11",
          module: "/usr/lib/softhsm/libsofthsm2.so",
          tokenLabel: "t",
          keyLabel: "k",
          pinFile: "/run/pin",
        },
      },
    });
    expect(parseArguments(["relayer-keys", "drain", oldKey], [])).to.deep.equal({
      command: { command: "relayer-keys.drain", address: oldKey, chainId: undefined },
    });
    const refused = (argv: string[]) => {
      try {
        parseArguments(argv, []);
      } catch (error) {
        expect(error).to.be.instanceOf(UsageError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refused(["relayer-keys", "add", "--keystore", "a.json"])).to.include("--password-file required");
    expect(refused(["relayer-keys", "add", "--pkcs11-module", "m.so", "--pin-file", "p"])).to.include(
      "--token-label, --key-label required with --pkcs11-module",
    );
    expect(refused(["relayer-keys", "add", "--keystore", "a", "--password-file", "p", "--key-label", "k"])).to.include(
      "not both",
    );
    expect(refused(["relayer-keys", "remove", "0x1234"])).to.include(
      "--address must be a 0x-prefixed 20-byte hex address",
    );
  });

  it("refuses to drain the only active key, to remove a key not drained, and a keystore its password does not open", async () => {
    const alone = await admin({ command: "relayer-keys.drain", address: oldKey });
    expect(alone.status, JSON.stringify(alone.body)).to.equal(409);
    expect(alone.body.message).to.include("is the only active relayer key on chain").and.include("add another first");
    const notDrained = await admin({ command: "relayer-keys.remove", address: oldKey });
    expect(notDrained.status).to.equal(409);
    expect(notDrained.body.message).to.include("drain it first");
    fs.writeFileSync(path.join(dir, "wrong-password"), "not it\n");
    const wrong = await admin({
      command: "relayer-keys.add",
      source: {
        kind: "keystore",
        keystore: path.join(dir, "new-relayer.json"),
        passwordFile: path.join(dir, "wrong-password"),
      },
    });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.message).to.include("does not open").and.not.include("not it");
    expect(service.services.relayer.addresses(CHAIN)).to.deep.equal([oldKey]);
    // A deployment without a relayer has no key to rotate.
    const none = await runRelayerKeyCommand(
      service.services.relayerKeys,
      { command: "relayer-keys.drain", address: oldKey },
      { configured: new Map() },
    ).catch((e: Error) => e);
    expect((none as Error).message).to.include("this service has no relayer");
  });

  it("a key added, the old one drained and removed while clients pay for relayed operations: all confirmed, nonces contiguous per key", async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const relayer = service.services.relayer;
    const oldStart = await provider.getTransactionCount(oldKey, "latest");
    const payer = sandbox.accounts[3];
    const operations: Operation[] = [];
    const failures: string[] = [];
    let stopping = false;
    let symbol = 0;
    const send = async () => {
      const preparedAt = Date.now();
      const txId = await prepareRelayedToken(service.api, `ROT${symbol++}`, sandbox.accounts[6].address);
      const from = (await service.services.batches.get(txId))!.transactions[0].unsigned.from;
      const sent = await payRelayedSend(service.api, txId, payer);
      operations.push({ txId, preparedAt, from, status: sent.status, body: sent.body });
    };
    const client = async () => {
      while (!stopping) await send().catch((error: Error) => void failures.push(error.message));
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, client));
    const done = (n: number) => until(`${n} operations`, () => operations.length >= n || failures.length > 0);
    try {
      await done(6);
      // The other instance does not refresh on its own meanwhile: it learns of the key when it is asked to send with it.
      await other.services.relayerKeyRotation.stop();
      const added = await admin({
        command: "relayer-keys.add",
        source: {
          kind: "keystore",
          keystore: path.join(dir, "new-relayer.json"),
          passwordFile: path.join(dir, "new-relayer-password"),
        },
      });
      expect(added.status, JSON.stringify(added.body)).to.equal(200);
      expect(added.body.result).to.include({ address: newKey.address, state: "active", origin: "keystore" });
      await until("the new key set up", () => relayer.keys.standing(CHAIN, newKey.address) === "active");
      // A batch this instance prepared for the new key, sent through the other before its next refresh: taken up then.
      expect(other.services.relayer.hasKey(CHAIN, newKey.address)).to.equal(false);
      let forNewKey: string;
      for (;;) {
        const txId = await prepareRelayedToken(service.api, `NEW${symbol++}`, sandbox.accounts[6].address);
        const from = (await service.services.batches.get(txId))!.transactions[0].unsigned.from;
        if (from === newKey.address) {
          forNewKey = txId;
          break;
        }
        // Sent, not left prepared: a batch prepared for the old key would hold its removal back below.
        const sent = await payRelayedSend(service.api, txId, payer);
        operations.push({ txId, preparedAt: Date.now(), from, status: sent.status, body: sent.body });
      }
      const sentEarly = await payRelayedSend(other.api, forNewKey, payer);
      expect([sentEarly.status, sentEarly.body.status], JSON.stringify(sentEarly.body)).to.deep.equal([200, "success"]);
      operations.push({
        txId: forNewKey,
        preparedAt: Date.now(),
        from: newKey.address,
        status: sentEarly.status,
        body: sentEarly.body,
      });
      other.services.relayerKeyRotation.start();
      await until(
        "the other instance holding the new key",
        () => other.services.relayer.keys.standing(CHAIN, newKey.address) === "active",
        10_000,
      );
      // Set up before its first batch: its delegation (EIP-7702) is in place, so payments still ride in the operations.
      expect((await provider.getCode(newKey.address)).toLowerCase()).to.equal(
        concat(["0xef0100", sandbox.deployments[CHAIN].contracts.PaidRelayDelegate!]).toLowerCase(),
      );
      await done(operations.length + 8);

      // A batch prepared for the old key before its drain is still sent by it, and holds its removal back until then.
      let held: string;
      do held = await prepareRelayedToken(service.api, `HELD${symbol++}`, sandbox.accounts[6].address);
      while ((await service.services.batches.get(held))!.transactions[0].unsigned.from !== oldKey);
      const drained = await admin({ command: "relayer-keys.drain", address: oldKey });
      expect(drained.status, JSON.stringify(drained.body)).to.equal(200);
      expect(drained.body.result.state).to.equal("draining");
      const drainedAt = Date.now();
      expect(relayer.keys.standing(CHAIN, oldKey)).to.equal("draining");
      expect(relayer.address(CHAIN)).to.equal(newKey.address);
      await until(
        "the other instance draining the old key",
        () => other.services.relayer.keys.standing(CHAIN, oldKey) === "draining",
        10_000,
      );
      const early = await admin({ command: "relayer-keys.remove", address: oldKey });
      expect(early.status, JSON.stringify(early.body)).to.equal(409);
      expect(early.body.message)
        .to.include("still has work")
        .and.match(/[1-9]\d* prepared in the last 15 minutes/);
      const heldSent = await payRelayedSend(service.api, held, payer);
      expect(heldSent.body.status, JSON.stringify(heldSent.body)).to.equal("success");
      operations.push({ txId: held, preparedAt: 0, from: oldKey, status: heldSent.status, body: heldSent.body });

      const listed = await admin({ command: "relayer-keys.list" });
      const rows = (
        listed.body.result as { chainId: number; address: string; state: string; origin: string; here: string }[]
      ).filter((k) => k.chainId === CHAIN);
      expect(rows.map((k) => [k.address, k.state, k.origin, k.here])).to.deep.equal([
        [oldKey, "draining", "configuration", "draining"],
        [newKey.address, "active", "keystore", "active"],
      ]);

      // Removed once its in-flight transactions are done (each refusal names what is left).
      await until(
        "the old key removed",
        async () => (await admin({ command: "relayer-keys.remove", address: oldKey })).status === 200,
      );
      expect(relayer.hasKey(CHAIN, oldKey)).to.equal(false);
      expect(relayer.addresses(CHAIN)).to.deep.equal([newKey.address]);
      await until(
        "the other instance letting the old key go",
        () => !other.services.relayer.hasKey(CHAIN, oldKey),
        10_000,
      );
      // The wallet balances (low-balance warnings, /metrics) follow the keys.
      await until("the new key's balance in /metrics", async () => {
        const metrics = await (await fetch(`${service.url}/metrics`)).text();
        return (
          metrics.includes(`tak_relayer_balance_eth{chain_id="${CHAIN}",address="${newKey.address}"}`) &&
          !metrics.includes(`address="${oldKey}"`)
        );
      });
      await done(operations.length + 8);
      stopping = true;
      await load;

      expect(failures).to.deep.equal([]);
      for (const op of operations) {
        expect(op.status, JSON.stringify(op.body)).to.equal(200);
        expect(op.body.status, JSON.stringify(op.body)).to.equal("success");
        expect(op.body.payment?.status).to.equal("settled");
        if (op.preparedAt > drainedAt) expect(op.from, `${op.txId} prepared after the drain`).to.equal(newKey.address);
      }
      const nonces = new Map<string, number[]>([
        [oldKey, []],
        [newKey.address, []],
      ]);
      for (const op of operations) {
        const status = (await service.api.get("/get-transaction-status", { txId: op.txId })).body;
        const tx = (await provider.getTransaction(status.txHash))!;
        expect(tx.from).to.equal(op.from);
        expect((await provider.getTransactionReceipt(status.txHash))!.status).to.equal(1);
        nonces.get(tx.from)!.push(tx.nonce);
      }
      const oldNonces = nonces.get(oldKey)!.sort((a, b) => a - b);
      const newNonces = nonces.get(newKey.address)!.sort((a, b) => a - b);
      expect(oldNonces.length, "operations on the old key").to.be.greaterThan(0);
      expect(newNonces.length, "operations on the new key").to.be.greaterThan(0);
      expect(oldNonces).to.deep.equal(Array.from({ length: oldNonces.length }, (_, i) => oldStart + i));
      // The new key's delegation took its nonces 0 and 1 (the transaction's and its authorization's).
      expect(newNonces).to.deep.equal(Array.from({ length: newNonces.length }, (_, i) => 2 + i));
      expect(await provider.getTransactionCount(oldKey, "latest")).to.equal(oldStart + oldNonces.length);
      expect(await provider.getTransactionCount(newKey.address, "latest")).to.equal(2 + newNonces.length);
      console.log(
        `      ${operations.length} paid operations: ${oldNonces.length} on the old key, ${newNonces.length} on the new one`,
      );
    } finally {
      stopping = true;
      await load;
      provider.destroy();
    }
  });

  it("the rotation is kept in the database: a service started again on it holds the added key, not the removed one", async () => {
    const again = await startTestService(sandbox, { db, env: { ADMIN_TOKEN } });
    try {
      expect(again.services.relayer.addresses(CHAIN)).to.deep.equal([newKey.address]);
      expect(again.services.relayer.address(CHAIN)).to.equal(newKey.address);
      const txId = await prepareRelayedToken(again.api, "AGAIN", sandbox.accounts[6].address);
      const sent = await payRelayedSend(again.api, txId, sandbox.accounts[3]);
      expect(sent.body.status, JSON.stringify(sent.body)).to.equal("success");
    } finally {
      await again.stop();
    }
  });

  describe("through the admin tool on the database of a stopped service (as on PostgreSQL)", () => {
    let dataDir: string;
    after(async () => {
      await stopStartedProcesses();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("npm run admin -- relayer-keys add, drain, remove: stored for the next start, which holds only the new key", async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-rotation-cli-"));
      const third = Wallet.createRandom();
      fs.writeFileSync(
        path.join(dir, "third.json"),
        encryptKeystoreJsonSync({ address: third.address, privateKey: third.privateKey }, "third", {
          scrypt: { N: 1 << 12 },
        }),
      );
      fs.writeFileSync(path.join(dir, "third-password"), "third\n");
      const env = {
        RPC_URL_84532: sandbox.baseSepolia.url,
        DEPLOYMENTS_DIR: sandbox.deploymentsDir,
        RELAYER_PRIVATE_KEY: sandbox.accounts[RELAYER_INDEX].privateKey,
      };
      await migrateWithCli(dataDir, env);
      const relative = path.relative(path.resolve(__dirname, "../.."), path.join(dir, "third.json"));
      const added = cliJson(
        await runAdminCli(
          dataDir,
          ["relayer-keys", "add", "--keystore", relative, "--password-file", path.join(dir, "third-password")],
          env,
        ),
      );
      expect(added).to.include({ address: third.address, state: "active", origin: "keystore" });
      const refused = await runAdminCli(dataDir, ["relayer-keys", "remove", oldKey], env);
      expect(refused.code).to.equal(1);
      expect(cliError(refused)).to.include("drain it first");
      cliJson(await runAdminCli(dataDir, ["relayer-keys", "drain", oldKey], env));
      cliJson(await runAdminCli(dataDir, ["relayer-keys", "remove", oldKey], env));
      const listed = cliJson(await runAdminCli(dataDir, ["relayer-keys", "list"], env)) as {
        chainId: number;
        address: string;
        state: string;
        origin: string;
      }[];
      expect(listed.map((k) => [k.chainId, k.address, k.state, k.origin])).to.deep.equal([
        [CHAIN, third.address, "active", "keystore"],
      ]);

      for (const chain of [sandbox.sepolia, sandbox.baseSepolia]) {
        const provider = providerFor(chain);
        await provider.send("hardhat_setBalance", [third.address, "0x56BC75E2D63100000"]);
        provider.destroy();
      }
      const started = await startTestService(sandbox, { dataDir, onDisk: true });
      try {
        expect(started.services.relayer.addresses(CHAIN)).to.deep.equal([third.address]);
        const txId = await prepareRelayedToken(started.api, "CLI", sandbox.accounts[6].address);
        const sent = await payRelayedSend(started.api, txId, sandbox.accounts[3]);
        expect(sent.body.status, JSON.stringify(sent.body)).to.equal("success");
      } finally {
        await started.stop();
      }
    });
  });
});
