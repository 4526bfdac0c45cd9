import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import hre from "hardhat";
import { JsonRpcProvider, NonceManager, Wallet, parseEther, parseUnits } from "ethers";
import {
  checkDeployerBalance,
  describeEstimate,
  estimateDeployment,
  InsufficientDeployerFunds,
  ROLE_TRANSACTION_GAS,
} from "../../scripts/lib/deploy-cost";
import { deploySuite } from "../../scripts/lib/deploy-suite";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { testAccounts } from "../helpers/sandbox";

/** scripts/deploy.ts checks the deployer's balance against the deployment's estimated cost before it sends anything. */
describe("deploy cost estimate and balance check (scripts/lib/deploy-cost.ts)", function () {
  this.timeout(120_000);
  let chain: LocalChain;
  let provider: JsonRpcProvider;
  let dir: string;
  const deployer = Wallet.createRandom();
  const funder = testAccounts(1)[0];

  before(async () => {
    // A Sepolia-like chain where the deployer is a fresh, empty wallet, as on a public network.
    chain = await startLocalChain(hre, {
      chainId: 11155111,
      initialBaseFeePerGas: parseUnits("1", "gwei"),
      accounts: [
        { privateKey: funder.privateKey, balance: parseEther("100") },
        { privateKey: deployer.privateKey, balance: 0n },
      ],
    });
    provider = new JsonRpcProvider(chain.url, chain.chainId, {
      staticNetwork: true,
      pollingInterval: 100,
      cacheTimeout: -1,
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-deploy-cost-"));
  });
  after(async () => {
    provider?.destroy();
    await chain?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("estimates every contract left to deploy plus the role transactions, at the node's fees; an empty deployer is refused with what to send", async () => {
    const signer = deployer.connect(provider);
    const estimate = await estimateDeployment(signer, { deploymentsDir: dir, roleTransactions: 2 });
    expect(estimate.chainId).to.equal(11155111);
    // BKN and the ten contracts of the suite; the network's USDC is named, not deployed.
    expect(estimate.contracts.map((c) => c.name)).to.deep.equal([
      "BKN",
      "SecurityTokenImplementation",
      "StoEscrowImplementation",
      "TokenFactory",
      "AgentTokenImplementation",
      "AgentTokenFactory",
      "IdentityRegistry",
      "ReputationRegistry",
      "AgentMandate",
      "ComplianceProvider",
      "PaidRelayDelegate",
    ]);
    for (const c of estimate.contracts) expect(c.gas, c.name).to.be.greaterThan(100_000n);
    expect(estimate.gas).to.equal(estimate.contracts.reduce((s, c) => s + c.gas, 0n) + 2n * ROLE_TRANSACTION_GAS);
    const block = await provider.getBlock("latest");
    expect(estimate.baseFeePerGas).to.equal(block!.baseFeePerGas);
    expect(estimate.maxFeePerGas).to.be.greaterThan(estimate.baseFeePerGas);
    expect(estimate.l1Fee).to.equal(0n); // no OP Stack GasPriceOracle on this chain
    expect(estimate.requiredBalance).to.equal(estimate.gas * estimate.maxFeePerGas);
    expect(estimate.expectedCost).to.equal(estimate.gas * (estimate.baseFeePerGas + estimate.maxPriorityFeePerGas));

    let refusal: Error | undefined;
    try {
      checkDeployerBalance(estimate, deployer.address, 0n, "Sepolia", "SepoliaETH");
    } catch (error) {
      refusal = error as Error;
    }
    expect(refusal).to.be.instanceOf(InsufficientDeployerFunds);
    expect(refusal!.message).to.include(
      `The deployer ${deployer.address} holds 0.0 SepoliaETH on Sepolia (chain 11155111), not enough to deploy`,
    );
    expect(refusal!.message).to.match(/11 contract\(s\) and 2 role transaction\(s\), [\d,]+ gas/);
    expect(refusal!.message).to.include(
      `Send at least ${hre.ethers.formatEther(estimate.requiredBalance)} SepoliaETH more to ${deployer.address}`,
    );
    expect(() =>
      checkDeployerBalance(estimate, deployer.address, estimate.requiredBalance - 1n, "Sepolia", "SepoliaETH"),
    ).to.throw(InsufficientDeployerFunds, /Send at least 0.000000000000000001 SepoliaETH more/);
    expect(() =>
      checkDeployerBalance(estimate, deployer.address, estimate.requiredBalance, "Sepolia", "SepoliaETH"),
    ).to.not.throw();
  });

  it("a deployer funded with exactly the required balance deploys the suite, using no more gas than estimated; then nothing is left to deploy", async () => {
    const signer = deployer.connect(provider);
    const estimate = await estimateDeployment(signer, { deploymentsDir: dir });
    await (
      await funder.connect(provider).sendTransaction({ to: deployer.address, value: estimate.requiredBalance })
    ).wait();
    const first = await provider.getBlockNumber();
    await deploySuite(new NonceManager(signer), { deploymentsDir: dir });
    let used = 0n;
    for (let n = first + 1; n <= (await provider.getBlockNumber()); n++) {
      const block = await provider.getBlock(n, true);
      for (const tx of block!.prefetchedTransactions)
        if (tx.from === deployer.address) used += (await provider.getTransactionReceipt(tx.hash))!.gasUsed;
    }
    expect(used).to.be.at.most(estimate.gas);
    expect(Number(used)).to.be.at.least(Number(estimate.gas) * 0.9);

    const after = await estimateDeployment(signer, { deploymentsDir: dir });
    expect(after.contracts).to.deep.equal([]);
    expect(after.gas).to.equal(0n);
    expect(describeEstimate(after, "Sepolia", "SepoliaETH")).to.equal(
      "Sepolia (chain 11155111): nothing left to deploy",
    );
    expect(() => checkDeployerBalance(after, deployer.address, 0n, "Sepolia", "SepoliaETH")).to.not.throw();
  });
});
