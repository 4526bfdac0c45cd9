import { expect } from "chai";
import hre from "hardhat";
import { JsonRpcProvider, NonceManager } from "ethers";
import { TestERC20__factory } from "../../typechain-types";
import { logsInRanges } from "../../service/chains/log-ranges";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { RpcFaultProxy } from "../helpers/rpc-faults";
import { testAccounts } from "../helpers/sandbox";

describe("chains/log-ranges: eth_getLogs in ranges a provider accepts", function () {
  this.timeout(60_000);
  let chain: LocalChain;
  let proxy: RpcFaultProxy;
  let provider: JsonRpcProvider;
  let token: string;
  let first: number;
  let last: number;

  before(async () => {
    chain = await startLocalChain(hre, { chainId: 31_337 });
    proxy = await RpcFaultProxy.start(chain.url);
    provider = new JsonRpcProvider(proxy.url, 31_337, { staticNetwork: true });
    const deployer = new NonceManager(
      testAccounts()[0].connect(new JsonRpcProvider(chain.url, 31_337, { staticNetwork: true })),
    );
    const erc20 = await new TestERC20__factory(deployer).deploy("Logs", "LOG", 18);
    await erc20.waitForDeployment();
    token = await erc20.getAddress();
    first = await provider.getBlockNumber();
    // One Transfer per block, 12 blocks.
    for (let i = 1; i <= 12; i++) await (await erc20.mint(testAccounts()[1].address, i)).wait();
    last = await provider.getBlockNumber();
  });
  after(async () => {
    provider?.destroy();
    await proxy?.close();
    await chain?.close();
  });

  it("asks in ranges of the given size and returns every log in chain order", async () => {
    const before = proxy.stats.requests;
    const logs = await logsInRanges(provider, { address: token }, first, last, 5);
    expect(logs.map((l) => BigInt(l.data))).to.deep.equal(Array.from({ length: 12 }, (_, i) => BigInt(i + 1)));
    expect(proxy.stats.requests - before).to.equal(Math.ceil((last - first + 1) / 5));
  });

  it("halves a range the node refuses as too large, and still returns everything", async () => {
    const remove = proxy.add({
      kind: "rpc-error",
      code: -32005,
      message: "query returned more than 10000 results",
      methods: ["eth_getLogs"],
      times: 3,
    });
    try {
      const logs = await logsInRanges(provider, { address: token }, first, last, 20);
      expect(logs).to.have.length(12);
      expect(logs.map((l) => l.blockNumber)).to.deep.equal([...logs.map((l) => l.blockNumber)].sort((a, b) => a - b));
    } finally {
      remove();
    }
  });

  it("passes on an error that is not about the range", async () => {
    const remove = proxy.add({
      kind: "rpc-error",
      code: -32000,
      message: "header not found",
      methods: ["eth_getLogs"],
      times: 1,
    });
    try {
      await logsInRanges(provider, { address: token }, first, last).then(
        () => expect.fail("should have thrown"),
        (error: Error) => expect(error.message).to.match(/header not found/),
      );
    } finally {
      remove();
    }
  });
});
