import { expect } from "chai";
import hre from "hardhat";
import { JsonRpcProvider } from "ethers";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { BlockWatcher } from "../../service/chains/blocks";
import { marketFees } from "../../service/chains/fees";
import type { Chain } from "../../service/chains/registry";

/** A real chain (in-process Hardhat) and provider; only the fee reads (eth_maxPriorityFeePerGas) are counted. */
describe("engine: market fees shared between callers", function () {
  this.timeout(60_000);
  let local: LocalChain;
  let provider: JsonRpcProvider;
  let reads = 0;
  let watcher: BlockWatcher;
  let chain: Chain;
  const mine = async (blocks: number) => {
    for (let i = 0; i < blocks; i++) await local.provider.request({ method: "evm_mine", params: [] });
    watcher.observe(await provider.getBlockNumber());
  };

  before(async () => {
    local = await startLocalChain(hre, { chainId: 31_998 });
    provider = new JsonRpcProvider(local.url, local.chainId, { staticNetwork: true, cacheTimeout: -1 });
    const send = provider.send.bind(provider);
    provider.send = (method: string, params: unknown[]) => {
      if (method === "eth_maxPriorityFeePerGas") reads++;
      return send(method, params);
    };
    watcher = new BlockWatcher(provider);
    chain = { chainId: local.chainId, provider, blocks: watcher } as unknown as Chain;
  });
  after(async () => {
    watcher.destroy();
    provider.destroy();
    await local.close();
  });

  it("reads once per block; a caller that takes a lag of k blocks shares a read made up to k blocks ago, within a second", async () => {
    await mine(1);
    reads = 0;
    const first = await marketFees(chain);
    expect(await marketFees(chain)).to.equal(first); // same block: shared
    expect(reads).to.equal(1);
    await mine(2);
    expect(await marketFees(chain, 2)).to.equal(first); // two blocks on: still good enough with a lag of 2
    expect(reads).to.equal(1);
    const fresh = await marketFees(chain); // no lag: read at the newest block
    expect(reads).to.equal(2);
    expect(fresh.baseFeePerGas).to.be.a("bigint");
    await mine(3);
    await marketFees(chain, 2); // three blocks on: read again
    expect(reads).to.equal(3);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await marketFees(chain, 2); // same block, but older than a second: read again
    expect(reads).to.equal(4);
  });
});
