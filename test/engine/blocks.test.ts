import { expect } from "chai";
import hre from "hardhat";
import { JsonRpcProvider, Wallet, parseEther } from "ethers";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { BlockWatcher, untilFound } from "../../service/chains/blocks";
import { testAccounts } from "../helpers/sandbox";

/** Real chains (in-process Hardhat), a real provider; only the number of eth_blockNumber requests is counted. */
describe("engine: the per-chain block watcher", function () {
  this.timeout(60_000);
  let chain: LocalChain;
  let provider: JsonRpcProvider;
  let polls = 0;
  const counted = { getBlockNumber: () => (polls++, provider.getBlockNumber()) };
  const mine = () => chain.provider.request({ method: "evm_mine", params: [] });

  before(async () => {
    chain = await startLocalChain(hre, { chainId: 31_999 });
    provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
  });
  after(async () => {
    provider.destroy();
    await chain.close();
  });
  beforeEach(() => (polls = 0));

  it("wakes every waiter of a block with one eth_blockNumber request", async () => {
    const watcher = new BlockWatcher(counted);
    const before = await provider.getBlockNumber();
    await mine();
    const heads = await Promise.all(Array.from({ length: 10 }, () => watcher.next(before, 30_000)));
    expect(heads).to.deep.equal(Array(10).fill(before + 1));
    expect(polls).to.equal(1);
    watcher.destroy();
  });

  it("answers at once, without a request, when the block waited for is already known", async () => {
    const watcher = new BlockWatcher(counted);
    watcher.observe(500);
    expect(await watcher.next(499, 30_000)).to.equal(500);
    expect(polls).to.equal(0);
    watcher.destroy();
  });

  it("a head learnt elsewhere (a receipt's block) wakes waiters below it", async () => {
    const watcher = new BlockWatcher({ getBlockNumber: () => new Promise<number>(() => undefined) }); // a node that never answers
    const waiting = watcher.next(10, 30_000);
    watcher.observe(11);
    expect(await waiting).to.equal(11);
    watcher.destroy();
  });

  it("with no new block, a wait ends at its bound with the head unchanged, and polling stops with the last waiter", async () => {
    const watcher = new BlockWatcher(counted);
    const head = await provider.getBlockNumber();
    watcher.observe(head);
    expect(await watcher.next(head, 100)).to.equal(head);
    const after = polls;
    expect(after).to.be.greaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(polls, "no eth_blockNumber while nobody waits").to.equal(after);
    watcher.destroy();
  });

  it("polls fast while the interval is unknown, then at a fraction of the interval it observed, bounded", () => {
    const watcher = new BlockWatcher(counted);
    const t = Date.now();
    (watcher as unknown as { activeSince: number }).activeSince = t;
    expect(watcher.pollDelay(t)).to.equal(20);
    expect(watcher.pollDelay(t + 5_000)).to.equal(250);
    watcher.intervalMs = 2_000; // Base
    expect(watcher.pollDelay()).to.equal(333);
    watcher.intervalMs = 12_000; // Sepolia
    expect(watcher.pollDelay()).to.equal(2_000);
    watcher.intervalMs = 60_000;
    expect(watcher.pollDelay()).to.equal(2_000);
    watcher.intervalMs = 10;
    expect(watcher.pollDelay()).to.equal(20);
  });

  it("learns the block interval of an interval-mining chain, and untilFound returns a receipt once its block exists", async () => {
    // A chain of its own, mining on an interval from the start (switching a chain back to instant mining mid-interval
    // can trip EDR's block logger).
    const interval = await startLocalChain(hre, { chainId: 31_998, blockTime: 0.3 });
    const own = new JsonRpcProvider(interval.url, interval.chainId, { staticNetwork: true, cacheTimeout: -1 });
    const watcher = new BlockWatcher(own);
    try {
      const wallet = testAccounts(1)[0].connect(own);
      const sent = await wallet.sendTransaction({ to: Wallet.createRandom().address, value: parseEther("0.001") });
      const receipt = await untilFound(watcher, () => own.getTransactionReceipt(sent.hash), { timeoutMs: 30_000 });
      expect(receipt.status).to.equal(1);
      // (A loaded machine may find the receipt at the first look, before the watcher saw any block: head is read after.)
      for (let i = 0; i < 3; i++) await watcher.next(watcher.head, 30_000);
      expect(watcher.head).to.be.at.least(receipt.blockNumber);
      expect(watcher.intervalMs, "an interval was observed").to.be.a("number").and.greaterThan(0);
    } finally {
      watcher.destroy();
      own.destroy();
      await interval.close();
    }
  });

  it("learns the interval from block changes seen by separate waits, the watcher asleep in between", async () => {
    const interval = await startLocalChain(hre, { chainId: 31_997, blockTime: 0.3 });
    const own = new JsonRpcProvider(interval.url, interval.chainId, { staticNetwork: true, cacheTimeout: -1 });
    const watcher = new BlockWatcher(own);
    try {
      await watcher.next(-1, 30_000);
      for (const idleMs of [50, 150, 400, 700, 250]) {
        await new Promise((resolve) => setTimeout(resolve, idleMs));
        // One wait per block, as the runner waits for one transaction at a time; nobody waits while it sleeps.
        await watcher.next(watcher.head, 30_000);
      }
      expect(watcher.intervalMs, "the chain mines every 300 ms").to.be.within(150, 600);
      expect(watcher.pollDelay()).to.be.within(25, 100);
    } finally {
      watcher.destroy();
      own.destroy();
      await interval.close();
    }
  });

  it("freshHead: concurrent readers share one poll, then take the head without a request while it is fresh; a block observed here moves it", async () => {
    const watcher = new BlockWatcher(counted);
    watcher.fixedReadAgeMs = 60_000; // freshness that does not depend on the test's timing
    const head = await provider.getBlockNumber();
    polls = 0;
    expect(await Promise.all(Array.from({ length: 10 }, () => watcher.freshHead()))).to.deep.equal(
      Array(10).fill(head),
    );
    expect(polls).to.equal(1);
    expect(await watcher.freshHead()).to.equal(head);
    watcher.observe(head + 5); // a receipt's block: fresh at once
    expect(await watcher.freshHead()).to.equal(head + 5);
    watcher.destroy();
    expect(await watcher.freshHead(), "destroyed: no head, readers go uncached").to.equal(undefined);
  });

  it("freshHeadNow: nothing while no poll is recent enough (it sends one, one at a time), then the head at once", async () => {
    const watcher = new BlockWatcher(counted);
    watcher.fixedReadAgeMs = 60_000;
    const head = await provider.getBlockNumber();
    polls = 0;
    expect(watcher.freshHeadNow()).to.equal(undefined);
    expect(watcher.freshHeadNow()).to.equal(undefined);
    expect(polls, "one poll under way serves both").to.equal(1);
    expect(await watcher.freshHead(), "the poll under way answers").to.equal(head);
    expect(watcher.freshHeadNow()).to.equal(head);
    expect(polls).to.equal(1);
    watcher.destroy();
    expect(watcher.freshHeadNow()).to.equal(undefined);
  });

  it("freshHead answers nothing when its poll fails (readers then read uncached)", async () => {
    const watcher = new BlockWatcher({ getBlockNumber: () => Promise.reject(new Error("node down")) });
    expect(await watcher.freshHead()).to.equal(undefined);
    watcher.destroy();
  });

  it("freshHead's age bound: 20 ms until an interval is known, then a sixth of it, at most 1 s", () => {
    const watcher = new BlockWatcher(counted);
    expect(watcher.readAgeMs()).to.equal(20);
    watcher.intervalMs = 2_000; // Base
    expect(watcher.readAgeMs()).to.equal(333);
    watcher.intervalMs = 12_000; // Sepolia
    expect(watcher.readAgeMs()).to.equal(1_000);
    watcher.intervalMs = 10;
    expect(watcher.readAgeMs()).to.equal(20);
  });

  it("untilFound gives up after its timeout", async () => {
    const watcher = new BlockWatcher(provider);
    const error = await untilFound(watcher, async () => null, { timeoutMs: 50, recheckMs: 10 }).catch((e: Error) => e);
    expect(error).to.be.instanceOf(Error);
    watcher.destroy();
  });
});
