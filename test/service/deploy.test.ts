import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import hre from "hardhat";
import { JsonRpcProvider, NonceManager, Wallet } from "ethers";
import { deploySuite } from "../../scripts/lib/deploy-suite";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { deploymentSchema, readDeployment, type ContractName } from "../../service/chains/deployments";
import { TokenFactory__factory } from "../../typechain-types";
import { DEPLOYMENT_SCHEMA_FILE, deploymentJsonSchema } from "../../scripts/deployment-schema";
import { testAccounts } from "../helpers/sandbox";

/** Every contract a deployment file names (the six of the tokenization suite, plus whatever later suites add). */
const CONTRACTS = Object.keys(deploymentSchema.shape.contracts.shape) as ContractName[];
const SUITE: ContractName[] = [
  "TokenFactory",
  "SecurityTokenImplementation",
  "StoEscrowImplementation",
  "USDC",
  "USDT",
  "BKN",
];

describe("deploySuite (scripts/lib/deploy-suite.ts) on a fresh local chain (our own payment assets)", function () {
  this.timeout(120_000);
  let chain: LocalChain;
  let provider: JsonRpcProvider;
  let deployer: Wallet;
  let dir: string;
  let file: string;

  before(async () => {
    chain = await startLocalChain(hre, { chainId: 11155111 });
    // cacheTimeout -1: ethers otherwise answers a repeated eth_getTransactionCount from a 250 ms cache, so a signer
    // starting right after the previous run would be handed a stale pending nonce.
    provider = new JsonRpcProvider(chain.url, chain.chainId, {
      staticNetwork: true,
      pollingInterval: 100,
      cacheTimeout: -1,
    });
    deployer = testAccounts(1)[0].connect(provider);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-deploy-"));
    file = path.join(dir, "11155111.json");
  });

  after(async () => {
    provider?.destroy();
    await chain?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const codeOf = (address: string) => provider.getCode(address);
  /** A fresh NonceManager per run, as dev.ts and the sandbox use. */
  const signer = () => new NonceManager(deployer);

  it("deploys every contract (the six of the suite included) and writes <dir>/11155111.json", async () => {
    expect(CONTRACTS).to.include.members(SUITE);
    expect(await provider.getTransactionCount(deployer.address)).to.equal(0);
    const lines: string[] = [];
    const result = await deploySuite(signer(), {
      deploymentsDir: dir,
      paymentAssets: "local",
      log: (line) => lines.push(line),
    });
    expect(result.deployed).to.equal(true);
    expect(result.file).to.equal(path.resolve(file));
    expect(fs.existsSync(file)).to.equal(true);
    expect(fs.existsSync(path.join(dir, "11155111.partial.json"))).to.equal(false);

    const written = JSON.parse(fs.readFileSync(file, "utf8"));
    expect(written).to.deep.equal(result.deployment);
    expect(written).to.deep.include({
      chainId: 11155111,
      chainName: "Sepolia",
      currencyName: "SepoliaETH",
      blockExplorerUrl: "https://sepolia.etherscan.io",
      deployer: deployer.address,
    });
    expect(written.deploymentBlock).to.be.a("number").and.greaterThan(0);
    expect(written.deploymentBlock).to.be.at.most(await provider.getBlockNumber());
    expect(new Date(written.deployedAt).toISOString()).to.equal(written.deployedAt);
    expect(Object.keys(written.contracts).sort()).to.deep.equal([...CONTRACTS].sort());
    const addresses = new Set<string>();
    for (const name of CONTRACTS) {
      const address = written.contracts[name];
      expect(address, name).to.match(/^0x[0-9a-fA-F]{40}$/);
      expect(await codeOf(address), name).to.not.equal("0x");
      addresses.add(address.toLowerCase());
    }
    expect(addresses.size).to.equal(CONTRACTS.length);
    expect(readDeployment(dir, 11155111)).to.deep.equal(written);
    expect(await provider.getTransactionCount(deployer.address)).to.equal(CONTRACTS.length);
    expect(lines.some((l) => l.includes("deployment written"))).to.equal(true);
  });

  it("the TokenFactory points at the implementations of the file", async () => {
    const deployment = readDeployment(dir, 11155111)!;
    const factory = TokenFactory__factory.connect(deployment.contracts.TokenFactory, provider);
    expect(await factory.tokenImplementation()).to.equal(deployment.contracts.SecurityTokenImplementation);
    expect(await factory.escrowImplementation()).to.equal(deployment.contracts.StoEscrowImplementation);
  });

  it("a second run finds the complete deployment and sends nothing", async () => {
    const before = fs.readFileSync(file, "utf8");
    const nonce = await provider.getTransactionCount(deployer.address);
    const block = await provider.getBlockNumber();
    const result = await deploySuite(signer(), { deploymentsDir: dir, paymentAssets: "local" });
    expect(result.deployed).to.equal(false);
    expect(result.deployment).to.deep.equal(JSON.parse(before));
    expect(await provider.getTransactionCount(deployer.address)).to.equal(nonce);
    expect(await provider.getBlockNumber()).to.equal(block);
    expect(fs.readFileSync(file, "utf8")).to.equal(before);
  });

  it("resumes an interrupted run from <chainId>.partial.json, reusing what it had deployed", async () => {
    const first = readDeployment(dir, 11155111)!;
    fs.rmSync(file);
    const partialFile = path.join(dir, "11155111.partial.json");
    fs.writeFileSync(
      partialFile,
      JSON.stringify({
        USDC: first.contracts.USDC,
        USDT: first.contracts.USDT,
        BKN: first.contracts.BKN,
        deploymentBlock: first.deploymentBlock,
      }),
    );
    const nonce = await provider.getTransactionCount(deployer.address);

    const result = await deploySuite(signer(), { deploymentsDir: dir, paymentAssets: "local" });
    expect(result.deployed).to.equal(true);
    const second = readDeployment(dir, 11155111)!;
    expect(second).to.deep.equal(result.deployment);
    expect(second.contracts.USDC).to.equal(first.contracts.USDC);
    expect(second.contracts.USDT).to.equal(first.contracts.USDT);
    expect(second.contracts.BKN).to.equal(first.contracts.BKN);
    expect(second.deploymentBlock).to.equal(first.deploymentBlock);
    const redeployed = CONTRACTS.filter((name) => !["USDC", "USDT", "BKN"].includes(name));
    expect(redeployed).to.include.members(["SecurityTokenImplementation", "StoEscrowImplementation", "TokenFactory"]);
    for (const name of redeployed) {
      expect(second.contracts[name], name).to.not.equal(first.contracts[name]);
      expect(await codeOf(second.contracts[name]!), name).to.not.equal("0x");
    }
    // Exactly the missing contracts were deployed.
    expect(await provider.getTransactionCount(deployer.address)).to.equal(nonce + redeployed.length);
    expect(fs.existsSync(partialFile)).to.equal(false);

    const factory = TokenFactory__factory.connect(second.contracts.TokenFactory, provider);
    expect(await factory.tokenImplementation()).to.equal(second.contracts.SecurityTokenImplementation);
    expect(await factory.escrowImplementation()).to.equal(second.contracts.StoEscrowImplementation);
  });

  it("redeploys when the file names addresses without code (e.g. a restarted local chain)", async () => {
    const current = readDeployment(dir, 11155111)!;
    const bogus = {
      ...current,
      contracts: { ...current.contracts, USDC: "0x000000000000000000000000000000000000dEaD" },
    };
    fs.writeFileSync(file, JSON.stringify(bogus, null, 2));
    const nonce = await provider.getTransactionCount(deployer.address);
    const result = await deploySuite(signer(), { deploymentsDir: dir, paymentAssets: "local" });
    expect(result.deployed).to.equal(true);
    for (const name of CONTRACTS) expect(await codeOf(result.deployment.contracts[name]!), name).to.not.equal("0x");
    expect(await provider.getTransactionCount(deployer.address)).to.equal(nonce + CONTRACTS.length);
    expect(readDeployment(dir, 11155111)).to.deep.equal(result.deployment);
  });
});

describe("deploySuite on a public network: its real payment assets, never ours", function () {
  this.timeout(120_000);
  let chain: LocalChain;
  let provider: JsonRpcProvider;
  let deployer: Wallet;
  let dir: string;

  before(async () => {
    // A chain with Base Sepolia's id stands in for the network: the suite must not deploy a USDC or USDT there.
    chain = await startLocalChain(hre, { chainId: 84532 });
    provider = new JsonRpcProvider(chain.url, chain.chainId, {
      staticNetwork: true,
      pollingInterval: 100,
      cacheTimeout: -1,
    });
    deployer = testAccounts(2)[1].connect(provider);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-deploy-public-"));
  });
  after(async () => {
    provider?.destroy();
    await chain?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("names Circle's USDC from the network table, deploys no payment asset, and a re-run sends nothing", async () => {
    const before = await provider.getTransactionCount(deployer.address);
    const result = await deploySuite(new NonceManager(deployer), { deploymentsDir: dir });
    expect(result.deployment.contracts.USDC).to.equal("0x036CbD53842c5426634e7929541eC2318f3dCF7e");
    expect(result.deployment.contracts).to.not.have.property("USDT"); // Tether issues no USDT on Base Sepolia
    const deployed = CONTRACTS.filter((name) => name !== "USDC" && name !== "USDT");
    expect(await provider.getTransactionCount(deployer.address)).to.equal(before + deployed.length);
    for (const name of deployed)
      expect(await provider.getCode(result.deployment.contracts[name]!), name).to.not.equal("0x");
    expect(deploymentSchema.parse(JSON.parse(fs.readFileSync(result.file, "utf8")))).to.deep.equal(result.deployment);
    const again = await deploySuite(new NonceManager(deployer), { deploymentsDir: dir });
    expect(again.deployed).to.equal(false);
    expect(await provider.getTransactionCount(deployer.address)).to.equal(before + deployed.length);
  });

  it("on a production network it needs the governance token's address (no faucet token on mainnet)", async () => {
    const mainnet = await startLocalChain(hre, { chainId: 8453 });
    const mainnetProvider = new JsonRpcProvider(mainnet.url, 8453, { staticNetwork: true, cacheTimeout: -1 });
    try {
      const signer = new NonceManager(testAccounts(3)[2].connect(mainnetProvider));
      let refusal = "";
      await deploySuite(signer, { deploymentsDir: dir }).catch((error: Error) => (refusal = error.message));
      expect(refusal).to.match(/production network: give the governance token's address \(BKN_ADDRESS\)/);
      const governanceToken = "0x0000000000000000000000000000000000000B4E";
      const result = await deploySuite(signer, { deploymentsDir: dir, governanceToken });
      expect(result.deployment.contracts).to.include({
        BKN: governanceToken,
        USDC: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      });
    } finally {
      mainnetProvider.destroy();
      await mainnet.close();
    }
  });
});

describe("deployments/ (committed)", () => {
  it("deployment.schema.json is the JSON Schema of the zod schema the service reads deployment files with", () => {
    const committed = JSON.parse(fs.readFileSync(DEPLOYMENT_SCHEMA_FILE, "utf8"));
    expect(committed, "stale: run npx ts-node --transpile-only scripts/deployment-schema.ts").to.deep.equal(
      deploymentJsonSchema(),
    );
  });

  it("every committed <chainId>.json is a valid deployment of a network in the table", () => {
    const dir = path.dirname(DEPLOYMENT_SCHEMA_FILE);
    for (const file of fs.readdirSync(dir).filter((f) => /^\d+\.json$/.test(f))) {
      const chainId = Number(file.replace(".json", ""));
      expect(readDeployment(dir, chainId), file).to.not.equal(undefined);
    }
  });
});
