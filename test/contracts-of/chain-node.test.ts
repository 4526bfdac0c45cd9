import { expect } from "chai";
import hre from "hardhat";
import { JsonRpcProvider, Transaction, Wallet, parseUnits } from "ethers";
import { startLocalChain } from "../../scripts/lib/local-chain";
import { broadcast, type ChainNode } from "../../service/chains/broadcast";
import { FakeChain } from "../fakes/chain";

interface ChainUnderTest {
  node: ChainNode;
  chainId: number;
  /** A sender with funds on that chain. */
  sender: Wallet;
  /** Mines one block of what waits. */
  mine(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The contract of ChainNode (service/chains/broadcast.ts) on a chain that mines on demand: what broadcast() and the
 * engine's look-ups read of sent transactions, their nonces and receipts. Run against the in-memory FakeChain and an
 * in-process Hardhat chain with automine off.
 */
function describeChainNodeContract(label: string, open: () => Promise<ChainUnderTest>) {
  describe(`chain node's contract: ${label}`, function () {
    this.timeout(60_000);
    let c: ChainUnderTest;
    let nonce = 0;
    before(async () => (c = await open()));
    after(() => c?.close());

    const signed = async (n = nonce++) => {
      const raw = await c.sender.signTransaction({
        type: 2,
        chainId: c.chainId,
        nonce: n,
        to: Wallet.createRandom().address,
        value: 1n,
        gasLimit: 21_000n,
        maxFeePerGas: parseUnits("20", "gwei"),
        maxPriorityFeePerGas: parseUnits("1", "gwei"),
      });
      return { raw, hash: Transaction.from(raw).hash!, nonce: n };
    };

    it("a sent transaction waits: pending nonce moves, latest does not, no receipt until a block is mined", async () => {
      const head = await c.node.getBlockNumber();
      const tx = await signed();
      expect(await broadcast(c.node, tx.raw, tx.hash)).to.deep.equal({ kind: "accepted" });
      expect(await c.node.getTransactionCount(c.sender.address, "latest")).to.equal(0);
      expect(await c.node.getTransactionCount(c.sender.address, "pending")).to.equal(1);
      expect(await c.node.getTransactionReceipt(tx.hash)).to.equal(null);
      const waiting = await c.node.getTransaction(tx.hash);
      expect(waiting).to.deep.include({ hash: tx.hash, nonce: 0, blockNumber: null, from: c.sender.address });
      expect(await c.node.getBlockNumber()).to.equal(head);

      await c.mine();
      expect(await c.node.getBlockNumber()).to.equal(head + 1);
      const receipt = (await c.node.getTransactionReceipt(tx.hash))!;
      expect(receipt).to.deep.include({ hash: tx.hash, status: 1, blockNumber: head + 1, index: 0 });
      expect(receipt.from).to.equal(c.sender.address);
      expect(receipt.gasUsed).to.equal(21_000n);
      expect((await c.node.getTransaction(tx.hash))!.blockNumber).to.equal(head + 1);
      expect(await c.node.getTransactionCount(c.sender.address, "latest")).to.equal(1);
    });

    it("consecutive nonces of one sender are mined in one block, in nonce order", async () => {
      const [a, b] = [await signed(), await signed()];
      await broadcast(c.node, a.raw, a.hash);
      await broadcast(c.node, b.raw, b.hash);
      expect(await c.node.getTransactionCount(c.sender.address, "pending")).to.equal(nonce);
      await c.mine();
      const [ra, rb] = [(await c.node.getTransactionReceipt(a.hash))!, (await c.node.getTransactionReceipt(b.hash))!];
      expect(rb.blockNumber).to.equal(ra.blockNumber);
      expect([ra.index, rb.index]).to.deep.equal([0, 1]);
    });

    it("a nonce ahead of the next waits for its gap: mined only once the nonce before it was sent", async () => {
      const [gap, ahead] = [await signed(), await signed()];
      expect(await broadcast(c.node, ahead.raw, ahead.hash)).to.deep.equal({ kind: "accepted" });
      expect(await c.node.getTransactionCount(c.sender.address, "pending")).to.equal(gap.nonce);
      await c.mine();
      expect(await c.node.getTransactionReceipt(ahead.hash)).to.equal(null);
      await broadcast(c.node, gap.raw, gap.hash);
      await c.mine();
      const [rg, ra] = [
        (await c.node.getTransactionReceipt(gap.hash))!,
        (await c.node.getTransactionReceipt(ahead.hash))!,
      ];
      expect([rg.index, ra.index, ra.blockNumber]).to.deep.equal([0, 1, rg.blockNumber]);
    });

    it("the same bytes again are accepted (known while waiting, found once mined); a used nonce is refused as used", async () => {
      const tx = await signed();
      await broadcast(c.node, tx.raw, tx.hash);
      expect(await broadcast(c.node, tx.raw, tx.hash)).to.deep.equal({ kind: "accepted" });
      await c.mine();
      expect(await broadcast(c.node, tx.raw, tx.hash)).to.deep.equal({ kind: "accepted" });
      const reused = await signed(nonce - 1);
      const verdict = await broadcast(c.node, reused.raw, reused.hash);
      expect(verdict.kind).to.equal("nonce-used");
      expect(await c.node.getTransaction(reused.hash)).to.equal(null);
    });
  });
}

describeChainNodeContract("in-memory fake", () => {
  const chain = new FakeChain(31_997);
  return Promise.resolve({
    node: chain,
    chainId: chain.chainId,
    sender: new Wallet(Wallet.createRandom().privateKey),
    mine: () => Promise.resolve(void chain.mine()),
    close: () => Promise.resolve(),
  });
});

describeChainNodeContract("in-process Hardhat chain, automine off", async () => {
  const sender = new Wallet(Wallet.createRandom().privateKey);
  const chain = await startLocalChain(hre, {
    chainId: 31_996,
    accounts: [{ privateKey: sender.privateKey, balance: 10n ** 18n }],
  });
  await chain.provider.request({ method: "evm_setAutomine", params: [false] });
  const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
  return {
    node: provider,
    chainId: chain.chainId,
    sender,
    mine: async () => void (await chain.provider.request({ method: "evm_mine", params: [] })),
    close: async () => {
      provider.destroy();
      await chain.close();
    },
  };
});
