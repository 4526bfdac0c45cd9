import { expect } from "chai";
import hre from "hardhat";
import { Wallet, keccak256 } from "ethers";
import { broadcast } from "../../service/chains/broadcast";
import { ResilientRpcProvider } from "../../service/chains/rpc";
import { ChainUnavailableError, broadcastVerdict, isChainUnavailable } from "../../service/chains/rpc-errors";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { RpcFaultProxy } from "../helpers/rpc-faults";
import { testAccounts } from "../helpers/sandbox";

const CHAIN_ID = 31_337;
const FAST = { attemptTimeoutMs: 500, budgetMs: 4_000, failuresBeforeRest: 3, restMs: 30_000 };

describe("chains/rpc: failover, retries and verdicts against a misbehaving provider", function () {
  this.timeout(60_000);
  let chain: LocalChain;
  let proxies: RpcFaultProxy[] = [];
  let providers: ResilientRpcProvider[] = [];

  before(async () => {
    chain = await startLocalChain(hre, { chainId: CHAIN_ID });
  });
  after(async () => chain?.close());
  afterEach(async () => {
    for (const p of providers) p.destroy();
    for (const p of proxies) await p.close();
    providers = [];
    proxies = [];
  });

  async function proxy(): Promise<RpcFaultProxy> {
    const p = await RpcFaultProxy.start(chain.url);
    proxies.push(p);
    return p;
  }
  function provider(urls: string[], policy = FAST): ResilientRpcProvider {
    const p = new ResilientRpcProvider(CHAIN_ID, urls, policy);
    providers.push(p);
    return p;
  }

  it("fails over to the next URL when the first resets connections, and asks the healthy one first from then on", async () => {
    const [bad, good] = [await proxy(), await proxy()];
    bad.add({ kind: "reset" });
    const rpc = provider([bad.url, good.url]);
    for (let i = 0; i < 5; i++) expect(await rpc.getBlockNumber()).to.be.a("number");
    expect(rpc.endpoints[0].failed).to.equal(1);
    expect(rpc.endpoints[1].answered).to.equal(5);
    expect(bad.stats.requests).to.equal(1); // not asked again for each call
    // Once the healthy one fails as often, the operator's order decides again: the first URL is probed.
    good.add({ kind: "reset", times: 1 });
    bad.clear();
    expect(await rpc.getBlockNumber()).to.be.a("number");
    expect(bad.stats.requests).to.equal(2);
  });

  it("honours a 429's Retry-After on a single URL, then answers", async () => {
    const p = await proxy();
    p.add({ kind: "http", status: 429, retryAfter: "1", times: 1 });
    const rpc = provider([p.url]);
    const started = Date.now();
    expect(await rpc.getBlockNumber()).to.be.a("number");
    expect(Date.now() - started).to.be.at.least(950);
    expect(rpc.endpoints[0].throttled).to.equal(1);
  });

  it("retries passing JSON-RPC errors (header not found, limit exceeded) item by item, but not a node's verdict", async () => {
    const p = await proxy();
    p.add({
      kind: "rpc-error",
      code: -32000,
      message: "header not found",
      methods: ["eth_getBlockByNumber"],
      times: 2,
    });
    p.add({ kind: "rpc-error", code: -32005, message: "limit exceeded", methods: ["eth_chainId"], times: 1 });
    const rpc = provider([p.url]);
    const [block, chainId] = await Promise.all([rpc.getBlock("latest"), rpc.send("eth_chainId", [])]);
    expect(block?.number).to.be.a("number");
    expect(Number(chainId)).to.equal(CHAIN_ID);
    // A transaction the node judges (a nonce already used) is answered once, as it is.
    const [account] = testAccounts(1);
    const used = await account.signTransaction({
      to: account.address,
      nonce: 0,
      chainId: CHAIN_ID,
      gasLimit: 21_000,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n,
      type: 2,
    });
    await rpc.send("eth_sendRawTransaction", [await sentOnce(rpc, account)]);
    const before = p.stats.items;
    const error = await rpc.send("eth_sendRawTransaction", [used]).catch((e: unknown) => e);
    expect(broadcastVerdict(error).kind).to.equal("nonce-used");
    expect(p.stats.items - before).to.equal(1);
  });

  it("abandons a stalled attempt after the attempt timeout and asks again", async () => {
    const p = await proxy();
    p.add({ kind: "stall", ms: 2_000, times: 1 });
    const rpc = provider([p.url]);
    const started = Date.now();
    expect(await rpc.getBlockNumber()).to.be.a("number");
    expect(Date.now() - started).to.be.below(1_900);
  });

  it("rides out a full outage shorter than its budget", async () => {
    const p = await proxy();
    const rpc = provider([p.url]);
    await rpc.getBlockNumber();
    const outage = p.outage(1_500);
    await new Promise((r) => setTimeout(r, 100));
    expect(await rpc.getBlockNumber()).to.be.a("number");
    await outage;
  });

  it("says the chain is unavailable (with a Retry-After) when every URL fails for the whole budget", async () => {
    const [a, b] = [await proxy(), await proxy()];
    a.add({ kind: "http", status: 503 });
    b.add({ kind: "reset" });
    const rpc = provider([a.url, b.url], { ...FAST, budgetMs: 1_000 });
    const error = await rpc.getBlockNumber().catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ChainUnavailableError);
    expect((error as ChainUnavailableError).chainId).to.equal(CHAIN_ID);
    expect((error as ChainUnavailableError).retryAfterSeconds).to.be.at.least(1);
    expect(isChainUnavailable(error)).to.equal(true);
  });

  it("calls made in one turn of the event loop travel as one batch, each answered or refused on its own as ethers would", async () => {
    const p = await proxy();
    const rpc = provider([p.url]);
    await rpc.getBlockNumber();
    const before = { ...p.stats };
    const [head, chainId, missing, refused] = await Promise.all([
      rpc.getBlockNumber(),
      rpc.send("eth_chainId", []),
      rpc.getTransactionReceipt(keccak256("0x01")),
      rpc.send("eth_noSuchMethod", []).catch((e: unknown) => e),
    ]);
    expect(p.stats.requests - before.requests).to.equal(1);
    expect(p.stats.items - before.items).to.equal(4);
    expect(head).to.be.a("number");
    expect(Number(chainId)).to.equal(CHAIN_ID);
    expect(missing).to.equal(null);
    expect(refused).to.be.instanceOf(Error);
    expect((refused as { code?: string }).code).to.be.a("string"); // ethers' error for the node's refusal
    // A call made after the batch left goes in the next one.
    await rpc.getBlockNumber();
    expect(p.stats.requests - before.requests).to.equal(2);
    // A destroyed provider refuses at once, as ethers' own does.
    rpc.destroy();
    expect(await rpc.getBlockNumber().catch((e: { code?: string }) => e.code)).to.equal("UNSUPPORTED_OPERATION");
  });

  it("the fault proxy draws a whole-request fault once per HTTP request, not once per batch item (the chaos rates are per request)", async () => {
    const batch = Array.from({ length: 8 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: i === 5 ? "eth_chainId" : "eth_blockNumber",
      params: [],
    }));
    /** How many of 200 posts of the batch a proxy with `rule` refuses. */
    const refusedOf200 = async (rule: Parameters<RpcFaultProxy["add"]>[0]) => {
      const p = await proxy();
      p.add(rule);
      let refused = 0;
      for (let i = 0; i < 200; i++) {
        const res = await fetch(p.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(batch),
        });
        await res.arrayBuffer();
        if (res.status === 503) refused++;
      }
      return refused;
    };
    // A rule naming a method the batch carries (not as its first item) applies to the batch: ~50 of 200 (seeded draws).
    expect(await refusedOf200({ kind: "http", status: 503, rate: 0.25, methods: ["eth_chainId"] })).to.be.within(
      30,
      70,
    );
    // A rule on every method is still one draw per request: drawn per item it would refuse 1 - 0.75^8 ≈ 90 % of them.
    expect(await refusedOf200({ kind: "http", status: 503, rate: 0.25 })).to.be.within(30, 70);
  });

  it("a lost answer to eth_sendRawTransaction is a transaction the node took: broadcast says accepted", async () => {
    const p = await proxy();
    const rpc = provider([p.url]);
    const [, second] = testAccounts(2);
    const nonce = await rpc.getTransactionCount(second.address, "pending");
    const raw = await second.signTransaction({
      to: second.address,
      nonce,
      chainId: CHAIN_ID,
      gasLimit: 21_000,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n,
      type: 2,
    });
    p.add({ kind: "lose-answer", methods: ["eth_sendRawTransaction"], times: 1 });
    expect(await broadcast(rpc, raw, keccak256(raw))).to.deep.equal({ kind: "accepted" });
    expect(await rpc.getTransactionReceipt(keccak256(raw))).to.not.equal(null);
  });
});

/** Sends one transfer from `account` (so that nonce 0 is used) and returns its bytes. */
async function sentOnce(rpc: ResilientRpcProvider, account: Wallet): Promise<string> {
  const nonce = await rpc.getTransactionCount(account.address, "pending");
  return account.signTransaction({
    to: account.address,
    nonce,
    chainId: CHAIN_ID,
    gasLimit: 21_000,
    maxFeePerGas: 10n ** 10n,
    maxPriorityFeePerGas: 1n,
    type: 2,
  });
}
