import { expect } from "chai";
import { Interface, Wallet } from "ethers";
import { ethers } from "hardhat";
import { buildTransactions, startBuildReads } from "../../service/engine/prepare";
import { simulateRelayedCall, WouldRevert } from "../../service/engine/relayed-call";
import type { BatchTransaction } from "../../service/model/batch";
import type { ServiceSigner } from "../../service/signers/signer";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

type Call = { method: string; params: unknown };

/**
 * What a relayed paid operation asks its chain, and on which block. A pending-block read makes some nodes (Hardhat's)
 * run every transaction in their pool: a paid operation asks for the pending block only when the latest one refuses.
 */
describe("engine: a relayed operation's reads of the chain", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
  });
  after(async () => service?.stop());

  /** Every JSON-RPC call the service makes on Base Sepolia while `work` runs. */
  async function recorded<T>(work: () => Promise<T>): Promise<{ result: T; calls: Call[] }> {
    const rpc = service.services.chains.find(84532)!.provider;
    const send = rpc.send.bind(rpc);
    const calls: Call[] = [];
    rpc.send = (method: string, params: unknown[] | Record<string, unknown>) => {
      calls.push({ method, params });
      return send(method, params);
    };
    try {
      return { result: await work(), calls };
    } finally {
      rpc.send = send;
    }
  }
  const onPending = (calls: Call[]) => calls.filter((c) => JSON.stringify(c.params).includes('"pending"'));

  it("a paid relayed operation that goes through asks for no pending block and no relayer nonce from the chain", async () => {
    await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] }); // a latest block of now
    const relayer = sandbox.accounts[RELAYER_INDEX].address.toLowerCase();
    const prepared = await recorded(() => prepareRelayedToken(service.api, "READS", sandbox.accounts[6].address));
    const sent = await recorded(() => payRelayedSend(service.api, prepared.result, sandbox.accounts[3]));
    expect(sent.result.status, JSON.stringify(sent.result.body)).to.equal(200);
    expect(sent.result.body.status).to.equal("success");
    expect(
      onPending(prepared.calls).map((c) => c.method),
      "prepare",
    ).to.deep.equal([]);
    expect(
      onPending(sent.calls).map((c) => c.method),
      "send",
    ).to.deep.equal([]);
    const nonceReads = prepared.calls.filter(
      (c) => c.method === "eth_getTransactionCount" && JSON.stringify(c.params).toLowerCase().includes(relayer),
    );
    expect(nonceReads, "the relayer's nonce is its own counter's until it signs").to.deep.equal([]);
    // The simulation before signing ran, with the gas the transaction was signed with.
    const simulations = sent.calls.filter(
      (c) => c.method === "eth_call" && JSON.stringify(c.params).toLowerCase().includes(relayer),
    );
    expect(simulations.length).to.be.greaterThan(0);
    expect((simulations[0].params as [{ gas?: string }])[0].gas).to.match(/^0x[0-9a-f]+$/);
  });

  describe("on a chain with a transaction in its pool, not mined", () => {
    const erc20 = new Interface(["function transfer(address to, uint256 amount) returns (bool)"]);
    let token: string;
    const relayer = Wallet.createRandom().address;
    const tx = () => ({ unsigned: { to: token, value: "0x0" } }) as unknown as BatchTransaction;
    const signer = { address: relayer } as ServiceSigner;
    const transfer = (amount: bigint, gasLimit = "0x30000") => ({
      data: erc20.encodeFunctionData("transfer", [Wallet.createRandom().address, amount]),
      gasLimit,
    });
    const chain = () => service.services.chains.find(84532)!;

    before(async () => {
      const deployer = sandbox.accounts[1].connect(providerFor(sandbox.baseSepolia));
      const factory = await ethers.getContractFactory("TestERC20", deployer);
      token = await (await (await factory.deploy("Reads", "RDS", 6)).waitForDeployment()).getAddress();
      await sandbox.baseSepolia.provider.request({ method: "evm_setAutomine", params: [false] });
      const mint = new Interface(["function mint(address to, uint256 amount)"]).encodeFunctionData("mint", [
        relayer,
        10n,
      ]);
      await deployer.sendTransaction({ to: token, data: mint, gasLimit: 100_000 }); // in the pool, not mined
    });
    after(async () => {
      await sandbox.baseSepolia.provider.request({ method: "evm_setAutomine", params: [true] });
      await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
    });

    it("a call that reverts on the latest block and goes through on the pending one is not refused", async () => {
      const { calls } = await recorded(() => simulateRelayedCall(chain(), signer, tx(), transfer(10n)));
      // Only its eth_calls: the service's background reads (the head's eth_blockNumber) may land in between.
      const simulations = calls.filter((c) => c.method === "eth_call");
      expect(simulations.map((c) => (c.params as unknown[])[1])).to.deep.equal(["latest", "pending"]);
    });

    it("a call that reverts on the pending block too is refused with the pending block's reason", async () => {
      const refused = await simulateRelayedCall(chain(), signer, tx(), transfer(11n)).catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(WouldRevert);
      expect((refused as Error).message).to.match(/ERC20InsufficientBalance/);
    });

    it("a relayed prepare estimates on the latest block, and on the pending one when the call reverts there", async () => {
      const call = { to: token, data: transfer(10n).data, description: "transfer" };
      const { result, calls } = await recorded(() =>
        buildTransactions(
          chain(),
          [call],
          startBuildReads(chain(), relayer, { provisionalNonce: Promise.resolve(7) }),
          {
            relayed: true,
          },
        ),
      );
      expect(result[0].nonce, "the provisional nonce is the relayer's counter").to.equal(7);
      expect(BigInt(result[0].gasLimit)).to.be.greaterThan(21_000n);
      const estimates = calls.filter((c) => c.method === "eth_estimateGas");
      expect(estimates.map((c) => (c.params as unknown[])[1])).to.deep.equal(["latest", undefined]);
    });

    it("a gas limit that no longer suffices is refused, not signed", async () => {
      const refused = await simulateRelayedCall(chain(), signer, tx(), transfer(1n, "0x61a8")).catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(WouldRevert);
      expect((refused as Error).message).to.match(/gas/i);
    });
  });
});
