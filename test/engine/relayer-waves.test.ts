import { expect } from "chai";
import { switchMining } from "../../scripts/lib/local-chain";
import { NonceQueueing } from "../../service/chains/nonce-queueing";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { RpcFaultProxy } from "../helpers/rpc-faults";
import { createOwnSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

const SENDS = 20;
/** A public RPC's round trip for a broadcast (the proxy holds every request carrying eth_sendRawTransaction this long). */
const BROADCAST_RTT_MS = 150;

/**
 * One relayer key, a burst of paid relayed operations, a node that queues nonces ahead of the account's (a chain
 * mining every second, as public networks' nodes do) behind an RPC whose broadcasts take BROADCAST_RTT_MS: the
 * relayer's transactions reach the node in waves (chains/nonce-order.ts), not one request after the other's answer.
 */
describe("engine: a relayer key's broadcasts leave in waves", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let proxy: RpcFaultProxy;
  let service: TestService;

  before(async () => {
    sandbox = await createOwnSandbox({ blockTime: 1 });
    proxy = await RpcFaultProxy.start(sandbox.baseSepolia.url);
    proxy.add({ kind: "stall", ms: BROADCAST_RTT_MS, methods: ["eth_sendRawTransaction"] });
    service = await startTestService(sandbox, { env: { [`RPC_URL_${sandbox.baseSepolia.chainId}`]: proxy.url } });
  });
  after(async () => {
    await service?.stop();
    await proxy?.close();
    await sandbox?.close();
  });

  it("asks the node whether it queues a nonce ahead: a Hardhat chain mining each transaction at once does not; on an interval it does; so does another client; a node that cannot say is sent one at a time", async () => {
    const provider = providerFor(sandbox.sepolia);
    const node = new NonceQueueing(provider);
    const request = ({ method, params }: { method: string; params?: unknown[] }) => provider.send(method, params ?? []);
    try {
      expect(node.queuesAhead(), "not known before the node answered").to.equal(false);
      await node.check();
      expect(node.queuesAhead(), "interval mining").to.equal(true);
      await switchMining({ request }, 0);
      await node.check();
      expect(node.queuesAhead(), "mining each transaction at once").to.equal(false);
    } finally {
      await switchMining({ request }, 1000);
      provider.destroy();
    }
    const geth = new NonceQueueing({
      send: async (method: string) => {
        if (method === "web3_clientVersion") return "Geth/v1.14.11-stable/linux-amd64/go1.23.2";
        throw new Error(`${method} is not served here`);
      },
    });
    await geth.check();
    expect(geth.queuesAhead()).to.equal(true);
    const silent = new NonceQueueing({ send: () => Promise.reject(new Error("connection refused")) });
    await silent.check();
    expect(silent.queuesAhead()).to.equal(false);
  });

  it(`${SENDS} concurrent paid operations: all confirmed, the relayer's nonces contiguous, broadcast in a few requests`, async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const relayer = sandbox.accounts[RELAYER_INDEX].address;
    const txIds: string[] = [];
    for (let i = 0; i < SENDS; i++)
      txIds.push(await prepareRelayedToken(service.api, `WAVE${i}`, sandbox.accounts[6].address));
    const nonceBefore = await provider.getTransactionCount(relayer, "latest");
    const broadcastRequestsBefore = proxy.stats.byKind.stall ?? 0;

    const results = await Promise.all(txIds.map((txId) => payRelayedSend(service.api, txId, sandbox.accounts[3])));
    for (const r of results) expect(r.body.status, JSON.stringify(r.body)).to.equal("success");

    const nonces: number[] = [];
    for (const txId of txIds) {
      const status = (await service.api.get("/get-transaction-status", { txId })).body;
      const tx = (await provider.getTransaction(status.txHash))!;
      expect(tx.from).to.equal(relayer);
      nonces.push(tx.nonce);
    }
    expect(nonces.sort((a, b) => a - b)).to.deep.equal(Array.from({ length: SENDS }, (_, n) => nonceBefore + n));
    // One after the other's answer, the burst took SENDS requests (and SENDS × the round trip); in waves of up to ten,
    // a handful: the first broadcast alone, then whatever was signed while a wave was with the node.
    const requests = (proxy.stats.byKind.stall ?? 0) - broadcastRequestsBefore;
    console.log(`      ${requests} requests carried the ${SENDS} broadcasts`);
    expect(requests, `${requests} requests carried the ${SENDS} broadcasts`).to.be.at.most(SENDS / 2);
    provider.destroy();
  });
});
