import { expect } from "chai";
import { Wallet } from "ethers";
import { BlockReads } from "../../service/chains/block-reads";
import { CoalescedReads } from "../../service/cache/coalesced-reads";
import { BlockWatcher } from "../../service/chains/blocks";
import { RecordCache } from "../../service/cache/record-cache";
import { TtlCache } from "../../service/cache/ttl-cache";
import { NonceOrder, WAVE_MAX } from "../../service/chains/nonce-order";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { forgetFinalStatus } from "../../service/reads/transaction-status";
import { startTestService, type TestService } from "../helpers/service";

/** A promise with its resolve exposed. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
const tick = () => new Promise((r) => setImmediate(r));

describe("read caches and their invalidation", function () {
  this.timeout(120_000);

  describe("building blocks", () => {
    it("TtlCache: an entry past its time is gone; a full cache drops its oldest entry", () => {
      const expired = new TtlCache<string, number>(0);
      expired.set("a", 1);
      expect(expired.get("a")).to.equal(undefined);
      const small = new TtlCache<string, number>(Infinity, 2);
      small.set("a", 1);
      small.set("b", 2);
      small.set("c", 3);
      expect([small.get("a"), small.get("b"), small.get("c")]).to.deep.equal([undefined, 2, 3]);
      small.deleteWhere((v) => v === 2);
      expect(small.get("b")).to.equal(undefined);
      // Expired entries nobody reads again leave as new ones come: the map does not fill up to its bound.
      for (let i = 0; i < 100; i++) expired.set(`k${i}`, i);
      expect(expired.size).to.be.at.most(1);
      const lasting = new TtlCache<string, number>(60_000);
      for (let i = 0; i < 100; i++) lasting.set(`k${i}`, i);
      expect(lasting.size).to.equal(100);
    });

    it("RecordCache: a key changed here is read from the store again, even by a read that raced the change", async () => {
      const cache = new RecordCache<string>(60_000);
      let stored = "old";
      expect(await cache.read("k", async () => stored)).to.equal("old");
      expect(await cache.read("k", async () => "never read")).to.equal("old");
      // A read that started before the change must not put the old record back.
      const slow = deferred<string>();
      const racing = cache.read("k2", () => slow.promise);
      cache.markChanged("k2");
      slow.resolve("old");
      await racing;
      stored = "new";
      expect(await cache.read("k2", async () => stored)).to.equal("new");
      cache.markChanged("k");
      expect(await cache.read("k", async () => stored)).to.equal("new");
    });

    it("CoalescedReads: callers share a read that has not started, never one already under way", async () => {
      const reads = new CoalescedReads();
      const loads: ReturnType<typeof deferred<number>>[] = [];
      const load = () => {
        const d = deferred<number>();
        loads.push(d);
        return d.promise;
      };
      const first = reads.read("k", load);
      // Asked while the first read runs: they get a later read, shared between them.
      const second = reads.read("k", load);
      const third = reads.read("k", load);
      expect(loads.length).to.equal(1);
      loads[0].resolve(1);
      expect(await first).to.equal(1);
      await tick();
      expect(loads.length).to.equal(2);
      loads[1].resolve(2);
      expect(await second).to.equal(2);
      expect(await third).to.equal(2);
      // Other keys are independent.
      const other = reads.read("other", async () => 7);
      expect(await other).to.equal(7);
    });

    it("BlockReads: a read is shared while the head stays, read again once a newer block is seen; failures are not kept", async () => {
      const sandbox = await getSandbox();
      const provider = providerFor(sandbox.sepolia);
      const watcher = new BlockWatcher(provider);
      watcher.fixedReadAgeMs = 60_000; // only a block seen here makes entries old, not the test's timing
      try {
        const reads = new BlockReads(watcher);
        let loads = 0;
        const load = async () => ++loads;
        await watcher.freshHead(); // a head polled just now: reads are kept for it
        expect(await Promise.all([reads.read("k", load), reads.read("k", load)])).to.deep.equal([1, 1]);
        expect(await reads.read("k", load)).to.equal(1);
        expect(await reads.read("other", load)).to.equal(2);
        watcher.observe(watcher.head + 1); // as the runner does with a receipt's block
        expect(await reads.read("k", load)).to.equal(3);
        const failing = () => Promise.reject(new Error("node refused"));
        const error = await reads.read("bad", failing).catch((e: Error) => e);
        expect(error).to.be.instanceOf(Error);
        expect(await reads.read("bad", load)).to.equal(4);
        // A full cache drops its oldest entry.
        const small = new BlockReads(watcher, 1);
        await small.read("a", load);
        await small.read("b", load);
        expect(await small.read("a", load)).to.equal(7);
      } finally {
        watcher.destroy();
        provider.destroy();
      }
    });

    it("BlockReads: without a fresh head a read does not wait for a poll: it reads at once, uncached, and the poll it started serves the reads after it", async () => {
      const answer = deferred<number>();
      let polls = 0;
      const watcher = new BlockWatcher({ getBlockNumber: () => (polls++, answer.promise) });
      watcher.fixedReadAgeMs = 60_000;
      try {
        const reads = new BlockReads(watcher);
        let loads = 0;
        const load = async () => ++loads;
        expect(await reads.read("k", load), "answered while the poll is unanswered").to.equal(1);
        expect(await reads.read("k", load), "still no head: read again, never from before the question").to.equal(2);
        expect(polls, "one poll in flight at most").to.equal(1);
        answer.resolve(7);
        await tick();
        await tick();
        expect(await reads.read("k", load)).to.equal(3);
        expect(await reads.read("k", load), "kept for the head the poll saw").to.equal(3);
        expect(polls).to.equal(1);
      } finally {
        watcher.destroy();
      }
    });

    it("NonceOrder: a nonce is broadcast only after this process's lower nonces were broadcast or dropped", async () => {
      const order = new NonceOrder();
      const sent: number[] = [];
      const five = order.register(1, "0xAbC", 5);
      const six = order.register(1, "0xabc", 6);
      const seven = order.register(1, "0xabc", 7);
      const other = order.register(2, "0xabc", 9); // another chain: its own lane
      const sixSent = six.broadcast(async () => void sent.push(6));
      const sevenSent = seven.broadcast(async () => void sent.push(7));
      await other.broadcast(async () => void sent.push(9));
      await tick();
      expect(sent).to.deep.equal([9]);
      await five.broadcast(async () => void sent.push(5));
      await Promise.all([sixSent, sevenSent]);
      expect(sent).to.deep.equal([9, 5, 6, 7]);
      // A dropped nonce (its transaction rolled back) does not hold the next one.
      const eight = order.register(1, "0xabc", 8);
      const nine = order.register(1, "0xabc", 9);
      const nineSent = nine.broadcast(async () => void sent.push(9));
      eight.drop();
      await nineSent;
      expect(sent).to.deep.equal([9, 5, 6, 7, 9]);
    });

    it("NonceOrder: nonces ready meanwhile leave together in nonce order (a wave of at most WAVE_MAX) once the wave in flight was answered; a node refusing a nonce ahead makes the lane one at a time", async () => {
      const order = new NonceOrder();
      /** The broadcasts as they left: a new wave starts when none is with the node. */
      let waves: number[][] = [];
      let withNode = 0;
      const sendOf = (nonce: number, answer: Promise<void>, refused?: boolean) => async (refusedAhead: () => void) => {
        if (withNode === 0) waves.push([]);
        waves[waves.length - 1].push(nonce);
        withNode++;
        if (refused) refusedAhead();
        try {
          await answer;
        } finally {
          withNode--;
        }
      };
      const tickets = Array.from({ length: 14 }, (_, i) => order.register(1, "0xabc", 10 + i));
      const node = deferred<void>();
      const first = tickets[0].broadcast(sendOf(10, node.promise));
      // 11…23 become ready while 10 is with the node: they wait for its answer, then leave ten at a time.
      const rest = tickets.slice(1).map((t) => t.broadcast(sendOf(t.nonce, Promise.resolve())));
      await tick();
      expect(waves).to.deep.equal([[10]]);
      node.resolve();
      await Promise.all([first, ...rest]);
      expect(waves).to.deep.equal([[10], [11, 12, 13, 14, 15, 16, 17, 18, 19, 20], [21, 22, 23]]);
      expect(WAVE_MAX).to.equal(10);
      // The node refused one as ahead of the account's next nonce: this lane sends one at a time from then on.
      waves = [];
      const [a, b, c] = [30, 31, 32].map((n) => order.register(1, "0xabc", n));
      const held = deferred<void>();
      const aSent = a.broadcast(sendOf(30, held.promise, true));
      const later = [b, c].map((t) => t.broadcast(sendOf(t.nonce, Promise.resolve())));
      held.resolve();
      await Promise.all([aSent, ...later]);
      expect(waves).to.deep.equal([[30], [31], [32]]);
      // A node that does not queue nonces ahead of the account's (as its lane's registrations say) gets one at a time.
      waves = [];
      const unqueued = [40, 41, 42].map((n) => order.register(1, "0xfed", n, () => false));
      await Promise.all(unqueued.map((t) => t.broadcast(sendOf(t.nonce, Promise.resolve()))));
      expect(waves).to.deep.equal([[40], [41], [42]]);
      // Another wallet's lane is its own: it still sends waves (the first ready leaves at once, the next two together).
      waves = [];
      const other = [5, 6, 7].map((n) => order.register(1, "0xdef", n));
      await Promise.all(other.map((t) => t.broadcast(sendOf(t.nonce, Promise.resolve()))));
      expect(waves).to.deep.equal([[5], [6, 7]]);
    });
  });

  describe("through the service", () => {
    let sandbox: Sandbox;
    let service: TestService;

    before(async () => {
      sandbox = await getSandbox();
      service = await startTestService(sandbox);
    });
    after(async () => service?.stop());

    it("a revoked key stops working at once, though its verification was kept", async () => {
      const { key, record } = await service.services.apiKeys.create({ email: "cache@example.com", plan: "Starter" });
      const api = service.api.withKey(key);
      expect((await api.get("/get-token-info")).status).to.equal(200);
      expect((await api.get("/get-token-info")).status).to.equal(200); // now from memory
      expect(await service.services.apiKeys.revoke(record.id)).to.equal(true);
      const refused = await api.get("/get-token-info");
      expect(refused.status).to.equal(401);
      expect(refused.body.error.message).to.equal("Invalid API key");
    });

    it("the status of a pending batch is read fresh; it turns final when the batch confirms, and then stays", async () => {
      const issuer = sandbox.accounts[1];
      await service.services.signers.add(issuer.address, "all-keys");
      const { key } = await service.services.apiKeys.create({ email: "cache-status@example.com", plan: "Enterprise" });
      const api = service.api.withKey(key);
      const prepared = await api.post("/prepare-transactions", {
        method: "newTokenization",
        chainId: "aa36a7",
        signerAddress: issuer.address,
        tokenizerEmail: "cache-status@example.com",
        name: "CSTAT",
        tokenSymbol: "CSTAT",
      });
      expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
      const txId = prepared.body.txId;
      expect((await api.get("/get-transaction-status", { txId })).body.status).to.equal("prepared");
      expect((await api.get("/get-transaction-status", { txId })).body.status).to.equal("prepared");
      const signed = await Promise.all(prepared.body.transactions.map((t: object) => issuer.signTransaction(t)));
      const sent = await api.post("/send-transactions", { txId, signedTransactions: signed });
      expect(sent.body.status).to.equal("success");
      const final = await api.get("/get-transaction-status", { txId });
      expect(final.body.status).to.equal("success");
      const hash = final.body.txHash;
      // Final: answered from memory by txId and by hash, the same as from the database.
      const again = await api.get("/get-transaction-status", { txId: txId.toUpperCase().replace(/^0X/, "0x") });
      expect(again.body).to.deep.equal(final.body);
      const byHash = await api.get("/get-transaction-status", { hash });
      expect(byHash.body).to.include({ status: "success", txId, txHash: hash });
      // Kept answers are sent as serialized the first time: the same bytes and Content-Type as the database's answer.
      const raw = async (query: string) => {
        const res = await fetch(`${service.url}/get-transaction-status?${query}`, { headers: { "x-api-key": key } });
        return { type: res.headers.get("content-type"), text: await res.text() };
      };
      const kept = [
        await raw(`txId=${txId}`),
        await raw(`txId=${txId}`),
        await raw(`hash=${hash}`),
        await raw(`txId=${txId}&hash=${hash.toUpperCase().replace(/^0X/, "0x")}`),
      ];
      forgetFinalStatus(service.services, txId);
      const fresh = await raw(`txId=${txId}`);
      expect(fresh.type).to.equal("application/json; charset=utf-8");
      for (const answer of kept.slice(0, 2)) expect(answer).to.deep.equal(fresh);
      expect(JSON.parse(kept[2].text)).to.deep.equal(byHash.body);
      expect(kept[3]).to.deep.equal(kept[2]);
      // A hash that is not the batch's own is answered afresh (nothing is kept for it): the batch, no transaction in focus.
      const stranger = JSON.parse((await raw(`txId=${txId}&hash=0x${"ab".repeat(32)}`)).text);
      expect(stranger).to.include({ txId, txHash: null, status: "success" });
      // Another caller (no key) learns nothing from the cache either: the txId is unknown to it, the hash only on chain.
      expect((await service.api.get("/get-transaction-status", { txId })).status).to.equal(404);
      expect((await service.api.get("/get-transaction-status", { hash })).body).to.include({
        txId: null,
        status: "success",
      });
    });

    it("get-balance-whitelist reads the chain after the request: a whitelist confirmed just before is seen", async () => {
      const issuer = sandbox.accounts[1];
      const { key } = await service.services.apiKeys.create({ email: "cache-status@example.com", plan: "Enterprise" });
      await service.services.tokens.bindEmail(
        "cache-status@example.com",
        (await service.services.apiKeys.verify(key))!.id,
      );
      const api = service.api.withKey(key);
      const investor = Wallet.createRandom().address;
      const before = await Promise.all(
        [1, 2, 3].map(() => api.get("/get-balance-whitelist", { tokenSymbol: "CSTAT", investorAddress: investor })),
      );
      for (const res of before) expect(res.body.whitelisted, JSON.stringify(res.body)).to.equal(false);
      const prepared = await api.post("/prepare-transactions", {
        method: "whitelist",
        chainId: "aa36a7",
        signerAddress: issuer.address,
        tokenSymbol: "CSTAT",
        userToWhitelist: [{ investorAddress: investor, whitelistStatus: true }],
      });
      const signed = await Promise.all(prepared.body.transactions.map((t: object) => issuer.signTransaction(t)));
      expect(
        (await api.post("/send-transactions", { txId: prepared.body.txId, signedTransactions: signed })).body.status,
      ).to.equal("success");
      const after = await Promise.all(
        [1, 2, 3].map(() => api.get("/get-balance-whitelist", { tokenSymbol: "CSTAT", investorAddress: investor })),
      );
      for (const res of after) expect(res.body.whitelisted, JSON.stringify(res.body)).to.equal(true);
    });

    it("get-balance-whitelist answers from the cache of its block, and a mint confirmed by this instance is seen by the next read", async () => {
      const issuer = sandbox.accounts[1];
      const { key } = await service.services.apiKeys.create({ email: "cache-status@example.com", plan: "Enterprise" });
      await service.services.tokens.bindEmail(
        "cache-status@example.com",
        (await service.services.apiKeys.verify(key))!.id,
      );
      const api = service.api.withKey(key);
      const investor = Wallet.createRandom().address;
      const blocks = service.services.chains.find(sandbox.sepolia.chainId)!.blocks;
      // Freshness that only a block seen by this instance ends: what is tested is that the runner's receipt does.
      blocks.fixedReadAgeMs = 60_000;
      try {
        const read = () => api.get("/get-balance-whitelist", { tokenSymbol: "CSTAT", investorAddress: investor });
        for (const res of await Promise.all([read(), read()]))
          expect(res.body.tokenBalance, JSON.stringify(res.body)).to.equal("0");
        expect((await read()).body.tokenBalance).to.equal("0"); // from the cache of this block
        const prepared = await api.post("/prepare-transactions", {
          method: "mintToken",
          chainId: "aa36a7",
          signerAddress: issuer.address,
          tokenSymbol: "CSTAT",
          userToMint: [{ investorAddress: investor, amount: "250" }],
        });
        expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
        const signed = await Promise.all(prepared.body.transactions.map((t: object) => issuer.signTransaction(t)));
        expect(
          (await api.post("/send-transactions", { txId: prepared.body.txId, signedTransactions: signed })).body.status,
        ).to.equal("success");
        const after = await read();
        expect(after.body, JSON.stringify(after.body)).to.include({ tokenBalance: "250", whitelisted: true });
        const status = await api.get("/get-whitelist-status", { tokenSymbol: "CSTAT", investorAddress: investor });
        expect(status.body.whitelisted).to.equal(true);
      } finally {
        blocks.fixedReadAgeMs = undefined;
      }
    });
  });
});
