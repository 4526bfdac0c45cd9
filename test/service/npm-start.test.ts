// tier: release
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ScriptProcess, type Credentials } from "../helpers/script-process";
import { Contract, JsonRpcProvider, parseUnits } from "ethers";

const BANNER = "sandbox is up";

const ERC20_ABI = ["function balanceOf(address) view returns (uint256)", "function decimals() view returns (uint8)"];

describe("npm start (scripts/dev.ts) end to end", function () {
  this.timeout(180_000);
  let dataDir: string;
  let credentialsFile: string;
  const processes: ScriptProcess[] = [];

  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-npm-start-"));
    credentialsFile = path.join(dataDir, "sandbox", "dev-credentials.json");
  });

  after(async function () {
    this.timeout(30_000);
    for (const dev of processes) {
      // The group outlives npm when dev.ts is orphaned, so it is signalled whether or not npm is still there.
      try {
        process.kill(-dev.child.pid!, "SIGKILL");
      } catch {
        // nothing left
      }
      await dev.exitedWithin(10_000);
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<{ dev: ScriptProcess; credentials: Credentials }> {
    const dev = new ScriptProcess(dataDir);
    processes.push(dev);
    await dev.waitFor(
      "banner and credentials file",
      () => dev.stdout.includes(BANNER) && fs.existsSync(credentialsFile),
      150_000,
    );
    const credentials = JSON.parse(fs.readFileSync(credentialsFile, "utf8")) as Credentials;
    return { dev, credentials };
  }

  async function get(url: string, headers: Record<string, string> = {}) {
    const response = await fetch(url, { headers });
    return { status: response.status, body: (await response.json()) as any };
  }

  /** SIGINT to dev.ts: it stops the service and the chains and exits 0. */
  async function stop(dev: ScriptProcess) {
    process.kill(dev.scriptPid(), "SIGINT");
    const exited = await dev.exitedWithin(20_000);
    expect(exited, `dev.ts still running 20 s after SIGINT\n${dev.output()}`).to.equal(true);
    expect(dev.exit, dev.output()).to.deep.equal({ code: 0, signal: null });
    expect(dev.stdout).to.include("stopping");
  }

  /** Waits until a process is gone (it is not our child, so its exit code cannot be read). */
  async function gone(pid: number, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      try {
        process.kill(pid, 0);
      } catch {
        return true;
      }
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it("starts the sandbox, serves it, stops on SIGINT with code 0, and keeps the API key across restarts", async () => {
    const { dev, credentials } = await start();

    // The credentials file.
    expect(credentials.baseUrl).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(credentials.baseUrl).to.not.match(/:(3000|8545|8546)$/);
    expect(credentials.apiKey).to.match(/^tak_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(Object.keys(credentials.chains).sort()).to.deep.equal(["11155111", "84532"]);
    for (const [id, chain] of Object.entries(credentials.chains)) {
      expect(chain.rpcUrl, id).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(chain.deployment.chainId).to.equal(Number(id));
      for (const name of [
        "TokenFactory",
        "SecurityTokenImplementation",
        "StoEscrowImplementation",
        "USDC",
        "USDT",
        "BKN",
      ]) {
        expect(chain.deployment.contracts[name], `${id} ${name}`).to.match(/^0x[0-9a-fA-F]{40}$/);
      }
    }
    expect(credentials.accounts.length).to.be.greaterThanOrEqual(5);
    for (const account of credentials.accounts) {
      expect(account.address).to.match(/^0x[0-9a-fA-F]{40}$/);
      expect(account.privateKey).to.match(/^0x[0-9a-fA-F]{64}$/);
    }
    expect(dev.stdout).to.include(credentials.baseUrl);
    expect(dev.stdout).to.include(credentials.apiKey);
    if (process.platform !== "win32") expect(fs.statSync(credentialsFile).mode & 0o077).to.equal(0);

    // Network info matches the deployment of the credentials file.
    const sepolia = credentials.chains["11155111"].deployment.contracts;
    const info = await get(`${credentials.baseUrl}/get-network-info?chainId=aa36a7`);
    expect(info.status, JSON.stringify(info.body)).to.equal(200);
    expect(info.body).to.deep.include({
      factoryAddress: sepolia.TokenFactory,
      BKNAddress: sepolia.BKN,
      USDTAddress: sepolia.USDT,
      USDCAddress: sepolia.USDC,
    });
    const base = await get(`${credentials.baseUrl}/get-network-info?chainId=14a34`);
    expect(base.status).to.equal(200);
    expect(base.body.USDCAddress).to.equal(credentials.chains["84532"].deployment.contracts.USDC);

    const health = await get(`${credentials.baseUrl}/health`);
    expect(health.status, JSON.stringify(health.body)).to.equal(200);

    // Account #1 holds 1,000,000 USDC on both chains.
    const holder = credentials.accounts[1].address;
    for (const [id, chain] of Object.entries(credentials.chains)) {
      const provider = new JsonRpcProvider(chain.rpcUrl, Number(id), { staticNetwork: true });
      try {
        expect(Number(await provider.send("eth_chainId", []))).to.equal(Number(id));
        const usdc = new Contract(chain.deployment.contracts.USDC, ERC20_ABI, provider);
        expect(await usdc.decimals()).to.equal(6n);
        expect(await usdc.balanceOf(holder), `USDC on ${id}`).to.equal(parseUnits("1000000", 6));
        const usdt = new Contract(chain.deployment.contracts.USDT, ERC20_ABI, provider);
        expect(await usdt.balanceOf(holder), `USDT on ${id}`).to.equal(parseUnits("1000000", 6));
      } finally {
        provider.destroy();
      }
    }

    // The sandbox key is accepted; a missing key is not.
    const tokens = await get(`${credentials.baseUrl}/get-token-info`, { "x-api-key": credentials.apiKey });
    expect(tokens.status, JSON.stringify(tokens.body)).to.equal(200);
    expect(tokens.body.tokenSymbols).to.deep.equal([]);
    const anonymous = await get(`${credentials.baseUrl}/get-token-info`);
    expect(anonymous.status).to.equal(401);

    // Ctrl-C stops everything with exit code 0 and removes the runtime file.
    await stop(dev);
    expect(fs.existsSync(path.join(dataDir, "sandbox", "service.json"))).to.equal(false);
    await fetch(`${credentials.baseUrl}/health`).then(
      () => expect.fail("the service still answers after SIGINT"),
      () => undefined,
    );
    // The chains run in a process of their own, which dev.ts stops with itself.
    for (const chain of Object.values(credentials.chains))
      await fetch(chain.rpcUrl).then(
        () => expect.fail(`the chain at ${chain.rpcUrl} still answers after SIGINT to dev.ts`),
        () => undefined,
      );

    // A second start on the same DATA_DIR keeps the key, which is still accepted.
    const again = await start();
    try {
      expect(again.credentials.apiKey).to.equal(credentials.apiKey);
      expect(again.dev.stdout).to.not.include("created the sandbox API key");
      const tokensAgain = await get(`${again.credentials.baseUrl}/get-token-info`, {
        "x-api-key": again.credentials.apiKey,
      });
      expect(tokensAgain.status, JSON.stringify(tokensAgain.body)).to.equal(200);
      expect(tokensAgain.body.tokenSymbols).to.deep.equal([]);
      const infoAgain = await get(`${again.credentials.baseUrl}/get-network-info?chainId=aa36a7`);
      expect(infoAgain.status).to.equal(200);
      expect(infoAgain.body.factoryAddress).to.equal(
        again.credentials.chains["11155111"].deployment.contracts.TokenFactory,
      );
      const usdc = new Contract(
        again.credentials.chains["84532"].deployment.contracts.USDC,
        ERC20_ABI,
        new JsonRpcProvider(again.credentials.chains["84532"].rpcUrl, 84532, { staticNetwork: true }),
      );
      expect(await usdc.balanceOf(holder)).to.equal(parseUnits("1000000", 6));
      (usdc.runner as JsonRpcProvider).destroy();
    } catch (error) {
      again.dev.signalGroup("SIGKILL");
      throw error;
    }

    // Ctrl-C in a terminal signals the whole process group: dev.ts still stops cleanly (runtime file removed, ports closed).
    const scriptPid = again.dev.scriptPid();
    again.dev.signalGroup("SIGINT");
    expect(await again.dev.exitedWithin(20_000), again.dev.output()).to.equal(true);
    expect(await gone(scriptPid, 20_000), `dev.ts (pid ${scriptPid}) still running 20 s after Ctrl-C`).to.equal(true);
    await again.dev.closed;
    expect(again.dev.stdout).to.include("stopping");
    expect(fs.existsSync(path.join(dataDir, "sandbox", "service.json"))).to.equal(false);
    for (const url of [again.credentials.baseUrl, ...Object.values(again.credentials.chains).map((c) => c.rpcUrl)]) {
      await fetch(url).then(
        () => expect.fail(`${url} still answers after Ctrl-C`),
        () => undefined,
      );
    }
  });
});
