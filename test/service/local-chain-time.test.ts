import { expect } from "chai";
import hre from "hardhat";
import type { JsonRpcProvider } from "ethers";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { createOwnSandbox, providerFor, testAccounts, type Sandbox } from "../helpers/sandbox";

/** Seconds between the chain's latest block and the wall clock (positive: the chain runs ahead). */
async function drift(provider: JsonRpcProvider): Promise<number> {
  const block = (await provider.getBlock("latest"))!;
  return block.timestamp - Date.now() / 1000;
}

describe("local chains keep the wall clock's time and can mine on an interval (scripts/lib/local-chain.ts)", function () {
  this.timeout(120_000);

  describe("a fresh sandbox (instant mining)", () => {
    let sandbox: Sandbox;
    let provider: JsonRpcProvider;

    before(async () => {
      sandbox = await createOwnSandbox();
      provider = providerFor(sandbox.sepolia);
    });
    after(async () => {
      provider?.destroy();
      await sandbox?.close();
    });

    it("is within 2 s of the wall clock right after deploy and funding, and still after 200 more transactions", async () => {
      for (const chain of [sandbox.sepolia, sandbox.baseSepolia]) {
        const p = providerFor(chain);
        // Deploying and funding mined dozens of blocks; one second per block would already put the chain far ahead.
        expect(await p.getBlockNumber()).to.be.greaterThan(30);
        const d = await drift(p);
        if (process.env.REPORT_DRIFT)
          console.log(`chain ${chain.chainId} drift after deploy + funding: ${d.toFixed(2)} s`);
        expect(Math.abs(d), `chain ${chain.chainId} drift after deploy + funding: ${d.toFixed(2)} s`).to.be.lessThan(2);
        p.destroy();
      }

      // 200 transfers signed locally and sent raw, one after the other (each mined at once, in its own block).
      const sender = sandbox.accounts[6];
      const [nonce, fees] = await Promise.all([
        provider.getTransactionCount(sender.address, "pending"),
        provider.getFeeData(),
      ]);
      const firstBlock = await provider.getBlockNumber();
      for (let i = 0; i < 200; i++) {
        const raw = await sender.signTransaction({
          to: sandbox.accounts[7].address,
          value: 1n,
          nonce: nonce + i,
          chainId: sandbox.sepolia.chainId,
          type: 2,
          gasLimit: 21_000n,
          maxFeePerGas: fees.maxFeePerGas! * 2n,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas!,
        });
        await provider.send("eth_sendRawTransaction", [raw]);
      }
      const lastBlock = await provider.getBlockNumber();
      expect(await provider.getTransactionCount(sender.address, "latest")).to.equal(nonce + 200);
      expect(lastBlock - firstBlock).to.be.at.least(200); // instant mining: one block per transaction (plus idle blocks)

      const d = await drift(provider);
      if (process.env.REPORT_DRIFT) console.log(`drift after 200 transactions: ${d.toFixed(2)} s`);
      expect(Math.abs(d), `drift after 200 transactions: ${d.toFixed(2)} s`).to.be.lessThan(2);
      // Blocks mined within one second share its timestamp instead of running ahead; they never go backwards.
      const stamps = await Promise.all(
        [firstBlock + 1, lastBlock].map(async (n) => (await provider.getBlock(n))!.timestamp),
      );
      expect(stamps[1]).to.be.at.least(stamps[0]);
      expect(stamps[1] - stamps[0]).to.be.lessThan(200);
    });

    it("left idle, it mines an empty block every second, so its latest block stays with the clock", async () => {
      const head = await provider.getBlockNumber();
      await new Promise((resolve) => setTimeout(resolve, 3500));
      expect(await provider.getBlockNumber()).to.be.greaterThan(head);
      const d = await drift(provider);
      if (process.env.REPORT_DRIFT) console.log(`drift after 3.5 s idle: ${d.toFixed(2)} s`);
      expect(Math.abs(d), `drift after 3.5 s idle: ${d.toFixed(2)} s`).to.be.lessThan(2.5);
    });

    it("mines nothing on its own while automine is off (a transaction held in the mempool stays there)", async () => {
      const chain = sandbox.baseSepolia.provider;
      const p = providerFor(sandbox.baseSepolia);
      try {
        await chain.request({ method: "evm_setAutomine", params: [false] });
        const head = await p.getBlockNumber();
        const tx = await sandbox.accounts[6].connect(p).sendTransaction({ to: sandbox.accounts[7].address, value: 1n });
        await new Promise((resolve) => setTimeout(resolve, 2500));
        expect(await p.getBlockNumber()).to.equal(head);
        expect(await p.getTransactionReceipt(tx.hash)).to.equal(null);
        await chain.request({ method: "evm_mine", params: [] });
        expect((await p.getTransactionReceipt(tx.hash))?.status).to.equal(1);
      } finally {
        await chain.request({ method: "evm_setAutomine", params: [true] });
        p.destroy();
      }
    });

    it("still moves in time on purpose (evm_increaseTime) for the tests that need it", async () => {
      const before = (await provider.getBlock("latest"))!.timestamp;
      await sandbox.sepolia.provider.request({ method: "evm_increaseTime", params: [3600] });
      await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
      expect((await provider.getBlock("latest"))!.timestamp).to.be.at.least(before + 3600);
    });
  });

  describe("interval mining", () => {
    let chain: LocalChain;
    let provider: JsonRpcProvider;

    before(async () => {
      // Started seconds after this process loaded Hardhat's config: it must still begin at now, not at that moment.
      chain = await startLocalChain(hre, { chainId: 84532, blockTime: 0.5 });
      provider = providerFor(chain);
    });
    after(async () => {
      provider?.destroy();
      await chain?.close();
    });

    it("mines a block every blockTime seconds (fractions allowed), a sent transaction is pending until then", async () => {
      expect(chain.blockTime).to.equal(0.5);
      const start = await provider.getBlockNumber();
      const wallet = testAccounts(1)[0].connect(provider);
      const tx = await wallet.sendTransaction({ to: wallet.address, value: 0n });
      expect(await provider.getTransactionReceipt(tx.hash)).to.equal(null);
      const receipt = (await tx.wait())!;
      expect(receipt.status).to.equal(1);
      await new Promise((resolve) => setTimeout(resolve, 1600));
      // Empty blocks keep coming, like on a real network.
      expect((await provider.getBlockNumber()) - start).to.be.at.least(3);
      const d = await drift(provider);
      expect(Math.abs(d), `drift under interval mining: ${d.toFixed(2)} s`).to.be.lessThan(2);
    });

    it("switches back to instant mining and again to an interval", async () => {
      await chain.setBlockTime(0);
      const wallet = testAccounts(2)[1].connect(provider);
      const tx = await wallet.sendTransaction({ to: wallet.address, value: 0n });
      expect(await provider.getTransactionReceipt(tx.hash)).to.not.equal(null);
      await chain.setBlockTime(1);
      expect(chain.blockTime).to.equal(1);
      const tx2 = await wallet.sendTransaction({ to: wallet.address, value: 0n });
      expect(await provider.getTransactionReceipt(tx2.hash)).to.equal(null);
      expect((await tx2.wait())!.status).to.equal(1);
    });

    it("refuses a negative or meaningless block time", async () => {
      for (const bad of [-1, Number.NaN, 0.0001]) {
        let error: unknown;
        await chain.setBlockTime(bad).catch((e) => (error = e));
        expect(String(error)).to.match(/block time must be/);
      }
    });
  });
});
