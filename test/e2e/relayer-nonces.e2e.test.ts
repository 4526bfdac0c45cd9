import { expect } from "chai";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/**
 * The nonce jams relayers' users report (a counter that drifted above the chain, a nonce nothing ever filled) heal
 * themselves: the counter is rewound when nothing holds the nonces above the chain's, and a gap below a transaction in
 * flight is filled with a zero-value transfer to self, so the transaction behind it is mined.
 */
describe("e2e: relayer nonces heal (drifted counter, unfilled gap)", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  const chainId = 84532;

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
  });
  after(async () => service?.stop());

  const relayer = () => sandbox.accounts[RELAYER_INDEX].address;
  const counter = async () =>
    Number(
      (
        await service.services.db.query<{ next_nonce: string }>(
          "SELECT next_nonce::text FROM wallet_nonces WHERE chain_id = $1 AND address = $2",
          [chainId, relayer().toLowerCase()],
        )
      )[0].next_nonce,
    );
  const drift = (by: number) =>
    service.services.db.query(
      "UPDATE wallet_nonces SET next_nonce = next_nonce + $3 WHERE chain_id = $1 AND address = $2",
      [chainId, relayer().toLowerCase(), by],
    );

  async function relayedToken(symbol: string) {
    const txId = await prepareRelayedToken(service.api, symbol, sandbox.accounts[6].address);
    const sent = await payRelayedSend(service.api, txId, sandbox.accounts[3]);
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body.status).to.equal("success");
    return providerFor(sandbox.baseSepolia).getTransaction(sent.body.txHashes[0]);
  }

  it("a counter that drifted above the chain with nothing in flight is rewound to the chain's nonce", async () => {
    await relayedToken("NH1");
    const provider = providerFor(sandbox.baseSepolia);
    const onChain = await provider.getTransactionCount(relayer(), "latest");
    await drift(3);
    expect(await counter()).to.equal(onChain + 3);
    await service.services.relayer.syncNonces(); // what a start runs
    expect(await counter()).to.equal(onChain);
    const tx = await relayedToken("NH2");
    expect(tx!.nonce).to.equal(onChain); // no gap, no filler: the next nonce is the chain's
    expect(await provider.getTransactionCount(relayer(), "latest")).to.equal(onChain + 1);
  });

  it("a gap below a relayed transaction in flight is filled with no-ops and the transaction is mined", async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const onChain = await provider.getTransactionCount(relayer(), "latest");
    await drift(2); // two nonces taken by transactions that never reached the chain
    const tx = await relayedToken("NH3");
    expect(tx!.nonce).to.equal(onChain + 2);
    const fillers = await Promise.all(
      [onChain, onChain + 1].map(async (nonce) => {
        const block = await provider.getBlock(await findNonceBlock(provider, relayer(), nonce), true);
        return block!.prefetchedTransactions.find((t) => t.from === relayer() && t.nonce === nonce)!;
      }),
    );
    for (const filler of fillers) {
      expect(filler.to).to.equal(relayer());
      expect(filler.value).to.equal(0n);
    }
  });
});

/** The block in which `address` used `nonce` (its count went past it). */
async function findNonceBlock(
  provider: ReturnType<typeof providerFor>,
  address: string,
  nonce: number,
): Promise<number> {
  const head = await provider.getBlockNumber();
  for (let n = head; n >= 0; n--) {
    if (
      (await provider.getTransactionCount(address, n - 1 < 0 ? 0 : n - 1)) <= nonce &&
      (await provider.getTransactionCount(address, n)) > nonce
    )
      return n;
  }
  throw new Error(`nonce ${nonce} of ${address} was never used`);
}
