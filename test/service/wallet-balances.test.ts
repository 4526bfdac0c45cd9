import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { expect } from "chai";
import pino from "pino";
import { JsonRpcProvider, Wallet, parseEther } from "ethers";
import { LOW_BALANCE, WalletBalances } from "../../service/wallet-balances";
import { getSandbox, providerFor, SETTLEMENT_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/** One sample of a Prometheus text exposition: the value of `name{labels}` (labels matched as given), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (.+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...match[2].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

/** The service warns at start about a low relayer or settlement wallet and exposes both wallets' balances in /metrics. */
describe("relayer and settlement wallet balances (service/wallet-balances.ts)", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  const relayer = Wallet.createRandom();
  const logLines: string[] = [];

  before(async () => {
    sandbox = await getSandbox();
    const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
    // A relayer nobody funded yet: a new deployment's first start.
    service = await startTestService(sandbox, {
      env: { RELAYER_PRIVATE_KEY: relayer.privateKey },
      logger: pino({ level: "info" }, sink),
    });
  });
  after(async () => service?.stop());

  const warnings = () =>
    logLines.map((l) => JSON.parse(l)).filter((l) => l.level === 40 && l.component === "wallet-balances");

  it("warns at start, once per chain, that the empty relayer is low, naming the chain, the address and what it has; not the funded settlement wallet", async () => {
    const deadline = Date.now() + 10_000;
    while (warnings().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const found = warnings();
    expect(found.map((w) => [w.wallet, w.chainId]).sort()).to.deep.equal([
      ["relayer", 11155111],
      ["relayer", 84532],
    ]);
    for (const w of found) {
      expect(w.address).to.equal(relayer.address);
      expect(w.balance).to.equal("0.0");
      expect(w.msg)
        .to.include(`the relayer wallet ${relayer.address} is low on chain ${w.chainId}: 0.0 left`)
        .and.include("fund it");
    }
    expect(logLines.join("")).to.not.include(relayer.privateKey.slice(2));
  });

  it("GET /metrics: tak_wallet_balance_eth and tak_wallet_balance_low per wallet and chain; funding the relayer clears its low flag at the next reading", async () => {
    const settlement = sandbox.accounts[SETTLEMENT_INDEX].address;
    const scrape = async () => (await fetch(`${service.url}/metrics`)).text();
    let text = await scrape();
    for (const chainId of ["11155111", "84532"]) {
      expect(
        sample(text, "tak_wallet_balance_eth", { chain_id: chainId, wallet: "relayer", address: relayer.address }),
        chainId,
      ).to.equal(0);
      expect(
        sample(text, "tak_wallet_balance_low", { chain_id: chainId, wallet: "relayer", address: relayer.address }),
        chainId,
      ).to.equal(1);
    }
    // The settlement wallet pays gas on the x402 payment chain only.
    const settlementBalance = await providerFor(sandbox.baseSepolia).getBalance(settlement);
    expect(
      sample(text, "tak_wallet_balance_eth", { chain_id: "84532", wallet: "settlement", address: settlement }),
    ).to.be.closeTo(Number(settlementBalance) / 1e18, 1e-6);
    expect(
      sample(text, "tak_wallet_balance_low", { chain_id: "84532", wallet: "settlement", address: settlement }),
    ).to.equal(0);
    expect(sample(text, "tak_wallet_balance_eth", { chain_id: "11155111", wallet: "settlement" })).to.equal(undefined);

    const funder = sandbox.accounts[0].connect(providerFor(sandbox.sepolia));
    await (await funder.sendTransaction({ to: relayer.address, value: parseEther("1") })).wait();
    await service.services.walletBalances.refresh();
    text = await scrape();
    expect(
      sample(text, "tak_wallet_balance_eth", { chain_id: "11155111", wallet: "relayer", address: relayer.address }),
    ).to.equal(1);
    expect(
      sample(text, "tak_wallet_balance_low", { chain_id: "11155111", wallet: "relayer", address: relayer.address }),
    ).to.equal(0);
    expect(
      sample(text, "tak_wallet_balance_low", { chain_id: "84532", wallet: "relayer", address: relayer.address }),
    ).to.equal(1);
  });

  it("a stalled chain never holds a reading up: the last one stays, and a stale one is waited for at most the given time", async () => {
    // An RPC endpoint that takes connections and never answers.
    const stalled = http.createServer(() => undefined);
    await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
    const provider = new JsonRpcProvider(`http://127.0.0.1:${(stalled.address() as AddressInfo).port}`, 11155111, {
      staticNetwork: true,
    });
    const logger = pino({ level: "silent" });
    try {
      const balances = new WalletBalances(
        [{ role: "relayer", chainId: 11155111, address: relayer.address, provider }],
        logger,
        { readTimeoutMs: 2000 },
      );
      const started = Date.now();
      const readings = await balances.current(0, 300);
      expect(Date.now() - started).to.be.lessThan(1000);
      expect(readings).to.deep.equal([{ role: "relayer", chainId: 11155111, address: relayer.address }]);
      await balances.refresh(); // gives up after the read timeout
      expect(Date.now() - started).to.be.within(1900, 5000);
    } finally {
      provider.destroy();
      stalled.closeAllConnections();
      stalled.close();
    }
    expect(LOW_BALANCE).to.deep.equal({ transactions: 100n, gas: 200_000n });
  });
});
