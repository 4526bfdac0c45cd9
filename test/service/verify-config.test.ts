import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import hre from "hardhat";
import { ContractFactory, JsonRpcProvider, NonceManager } from "ethers";
import { Etherscan } from "@nomicfoundation/hardhat-verify/etherscan";
import { deploySuite } from "../../scripts/lib/deploy-suite";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { ETHERSCAN_V2_API_URL, etherscanConfig } from "../../scripts/lib/verify-config";
import { verificationPlan } from "../../scripts/verify";
import { networkById } from "../../service/chains/networks";
import { testAccounts } from "../helpers/sandbox";

/**
 * Contract verification (@nomicfoundation/hardhat-verify) for Sepolia and Base Sepolia: the configuration, and what
 * scripts/verify.ts would submit. The upload itself needs the explorers, which no test reaches.
 */
describe("contract verification configuration (hardhat-verify, scripts/verify.ts)", function () {
  this.timeout(120_000);

  it("the API key comes from ETHERSCAN_API_KEY, and hre.config.etherscan is that configuration", () => {
    expect(etherscanConfig({ ETHERSCAN_API_KEY: "ABC123" }).apiKey).to.equal("ABC123");
    expect(etherscanConfig({}).apiKey).to.equal("");
    expect(hre.config.etherscan).to.deep.include(etherscanConfig(process.env));
    expect(hre.config.etherscan.enabled).to.equal(true);
  });

  for (const [network, chainId, browser] of [
    ["sepolia", 11155111, "https://sepolia.etherscan.io"],
    ["baseSepolia", 84532, "https://sepolia.basescan.org"],
  ] as const) {
    it(`--network ${network} (chain ${chainId}) verifies through Etherscan's v2 API with chainid ${chainId} and links to ${browser}`, async () => {
      expect(hre.config.networks[network].chainId).to.equal(chainId);
      expect(networkById(chainId)!.blockExplorerUrl).to.equal(browser);
      const chain = await startLocalChain(hre, { chainId });
      try {
        // What the plugin does: asks the network's node for its chain id and picks the explorer configured for it.
        const node = { send: (method: string, params: unknown[] = []) => chain.provider.request({ method, params }) };
        const chainConfig = await Etherscan.getCurrentChainConfig(
          network,
          node as never,
          hre.config.etherscan.customChains,
        );
        expect(chainConfig).to.deep.equal({
          network,
          chainId,
          urls: { apiURL: ETHERSCAN_V2_API_URL, browserURL: browser },
        });
        const etherscan = Etherscan.fromChainConfig("ABC123", chainConfig);
        expect(etherscan.apiUrl).to.equal(ETHERSCAN_V2_API_URL);
        expect(etherscan.chainId).to.equal(chainId);
        expect(etherscan.browserUrl).to.equal(browser);
        expect(etherscan.getContractUrl("0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238")).to.equal(
          `${browser}/address/0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238#code`,
        );
      } finally {
        await chain.close();
      }
    });
  }

  it("scripts/verify.ts submits each contract the suite deployed (not the network's USDC) with the constructor arguments it was created with", async () => {
    const chain: LocalChain = await startLocalChain(hre, { chainId: 84532 });
    const provider = new JsonRpcProvider(chain.url, chain.chainId, {
      staticNetwork: true,
      pollingInterval: 100,
      cacheTimeout: -1,
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-verify-"));
    try {
      const deployer = testAccounts(1)[0].connect(provider);
      const { deployment } = await deploySuite(new NonceManager(deployer), { deploymentsDir: dir });
      // Every contract creation of the deployer, by the address it created.
      const creations = new Map<string, string>();
      for (let n = 1; n <= (await provider.getBlockNumber()); n++) {
        for (const tx of (await provider.getBlock(n, true))!.prefetchedTransactions) {
          if (tx.to === null) creations.set((await provider.getTransactionReceipt(tx.hash))!.contractAddress!, tx.data);
        }
      }
      const plan = await verificationPlan(deployment);
      expect(plan.map((p) => p.name)).to.have.members(
        Object.keys(deployment.contracts).filter((name) => name !== "USDC"),
      );
      for (const item of plan) {
        const artifact = await hre.artifacts.readArtifact(item.contract);
        expect(`${artifact.sourceName}:${artifact.contractName}`).to.equal(item.contract);
        const expected = (
          await new ContractFactory(artifact.abi, artifact.bytecode).getDeployTransaction(...item.constructorArguments)
        ).data;
        expect(creations.get(item.address), item.name).to.equal(expected);
      }
      expect(plan.find((p) => p.name === "TokenFactory")!.constructorArguments).to.deep.equal([
        deployment.contracts.SecurityTokenImplementation,
        deployment.contracts.StoEscrowImplementation,
        deployment.deployer,
      ]);
    } finally {
      provider.destroy();
      await chain.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
