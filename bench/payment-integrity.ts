import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { JsonRpcProvider, NonceManager, Wallet, parseEther } from "ethers";
import { USDC__factory } from "../typechain-types";
import { createSandbox, RELAYER_INDEX, type Sandbox } from "../scripts/lib/sandbox";
import { serviceEnv } from "./reads";
import { startServiceProcess, type ServiceProcess } from "./service-process";

/**
 * Paid work is never given away: a hostile payer tries what the payment integrity issue measured on the old code
 * (USDC moved away right after the send is accepted, several authorisations against one balance, paid reads against
 * one balance, an operation that would revert, an authorization too short for its settlement), through HTTP, against a
 * service process on the sandbox chains. Counted from the chains and the API: operations that took effect without their
 * payment settled (given away; target 0), the relayer's gas on work whose payment was not settled (target 0), paid reads
 * answered beyond what was paid (target 0), and, for the record, payments settled for operations that then failed
 * (charged for the attempt: the written policy).
 */

const PRICE = 10_000n;
const READ_PRICE = 1_000n;
const BASE = 84532;
const SEPOLIA = 11155111;

export interface IntegrityResult {
  measuredAt: string;
  cpus: number;
  attempts: Record<string, number>;
  operationsGivenAway: number;
  relayerGasOnUnpaidWorkWei: string;
  paidReadsGivenAway: number;
  chargedForTheAttempt: number;
  pass: boolean;
}

let ip = 1;
const client = () => ({ "x-forwarded-for": `10.66.${(ip >> 8) & 255}.${ip++ & 255}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function measurePaymentIntegrity(
  hre: HardhatRuntimeEnvironment,
  opts: { rounds?: number; log?: (line: string) => void } = {},
): Promise<IntegrityResult> {
  const rounds = opts.rounds ?? 2;
  const log = opts.log ?? ((line: string) => console.log(line));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-integrity-"));
  const sandbox = await createSandbox(hre, { deploymentsDir: path.join(dir, "deployments") });
  const base = new JsonRpcProvider(sandbox.baseSepolia.url, BASE, { staticNetwork: true, cacheTimeout: -1 });
  const sepolia = new JsonRpcProvider(sandbox.sepolia.url, SEPOLIA, { staticNetwork: true, cacheTimeout: -1 });
  const service = await startServiceProcess(serviceEnv(sandbox, path.join(dir, "service"), "embedded"));
  const world = new HostileWorld(sandbox, service, base, sepolia);
  try {
    await sleep(1_000);
    const attempts: Record<string, number> = {};
    const count = (name: string, n = 1) => (attempts[name] = (attempts[name] ?? 0) + n);
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < 2; i++) count("USDC moved away after a faucet claim was accepted", await world.movedAway());
      count("four authorisations for one balance (faucet claims)", await world.oneBalance("claims"));
      count("four authorisations for one balance (relayed sends)", await world.oneBalance("relayed"));
      count("four paid reads for one balance", await world.paidReads());
      count("a relayed operation that would revert", await world.wouldRevert());
      count("an authorization valid for 8 s", await world.shortAuthorization());
    }
    const tally = await world.tally();
    const result: IntegrityResult = {
      measuredAt: new Date().toISOString(),
      cpus: os.cpus().length,
      attempts,
      operationsGivenAway: tally.givenAway,
      relayerGasOnUnpaidWorkWei: tally.unpaidGas.toString(),
      paidReadsGivenAway: world.readsGivenAway,
      chargedForTheAttempt: tally.chargedForAttempt,
      pass: tally.givenAway === 0 && tally.unpaidGas === 0n && world.readsGivenAway === 0,
    };
    log(
      `hostile payer: ${Object.values(attempts).reduce((a, b) => a + b, 0)} attempts; given away ${result.operationsGivenAway}, relayer gas on unpaid work ${result.relayerGasOnUnpaidWorkWei} wei, paid reads given away ${result.paidReadsGivenAway}`,
    );
    return result;
  } finally {
    await service.stop();
    base.destroy();
    sepolia.destroy();
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The hostile payer's moves, and what they produced (the batches it made, the reads it got). */
class HostileWorld {
  private readonly txIds: string[] = [];
  readsGivenAway = 0;
  private readonly funder: NonceManager;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly service: ServiceProcess,
    private readonly base: JsonRpcProvider,
    private readonly sepolia: JsonRpcProvider,
  ) {
    this.funder = new NonceManager(sandbox.accounts[3].connect(base));
  }

  private usdc(runner: JsonRpcProvider | Wallet = this.base) {
    return USDC__factory.connect(this.sandbox.deployments[BASE].contracts.USDC, runner);
  }

  private async payerWith(amount: bigint): Promise<Wallet> {
    const payer = new Wallet(Wallet.createRandom().privateKey, this.base);
    await (await this.funder.sendTransaction({ to: payer.address, value: parseEther("1") })).wait();
    await (
      await USDC__factory.connect(this.sandbox.deployments[BASE].contracts.USDC, this.funder).transfer(
        payer.address,
        amount,
      )
    ).wait();
    return payer;
  }

  private async call(method: string, pathAndQuery: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(this.service.url + pathAndQuery, {
      method,
      headers: { "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json().catch(() => undefined)) as any };
  }

  private quoteOf(res: { headers: Headers }) {
    return JSON.parse(Buffer.from(res.headers.get("payment-required")!, "base64").toString()).accepts[0];
  }

  private async pay(payer: Wallet, quote: any, validBefore = Math.floor(Date.now() / 1000) + 300): Promise<string> {
    const authorization = {
      from: payer.address,
      to: quote.payTo,
      value: quote.amount,
      validAfter: String(Math.floor(Date.now() / 1000) - 60),
      validBefore: String(validBefore),
      nonce: "0x" + randomBytes(32).toString("hex"),
    };
    const signature = await payer.signTypedData(
      { name: quote.extra.name, version: quote.extra.version, chainId: BASE, verifyingContract: quote.asset },
      {
        TransferWithAuthorization: [
          "from:address",
          "to:address",
          "value:uint256",
          "validAfter:uint256",
          "validBefore:uint256",
          "nonce:bytes32",
        ].map((f) => ({ name: f.split(":")[0], type: f.split(":")[1] })),
      },
      authorization,
    );
    const accepted = {
      scheme: quote.scheme,
      network: quote.network,
      asset: quote.asset,
      amount: quote.amount,
      payTo: quote.payTo,
    };
    return Buffer.from(JSON.stringify({ x402Version: 2, accepted, payload: { signature, authorization } })).toString(
      "base64",
    );
  }

  private async faucetQuote() {
    return this.quoteOf(
      await this.call(
        "POST",
        "/faucet/bkn",
        { recipientAddress: Wallet.createRandom().address },
        { "Idempotency-Key": randomUUID() },
      ),
    );
  }

  private async claim(payer: Wallet, quote: any, validBefore?: number) {
    const res = await this.call(
      "POST",
      "/faucet/bkn",
      { recipientAddress: Wallet.createRandom().address },
      { "Idempotency-Key": randomUUID(), "X-PAYMENT": await this.pay(payer, quote, validBefore), ...client() },
    );
    if (res.body?.txId) this.txIds.push(res.body.txId);
    return res;
  }

  /** A faucet claim accepted, then the payer's USDC sent away before the settlement is mined. */
  async movedAway(): Promise<number> {
    const payer = await this.payerWith(PRICE);
    const quote = await this.faucetQuote();
    const chain = this.sandbox.baseSepolia.provider;
    await chain.request({ method: "evm_setAutomine", params: [false] });
    try {
      const sending = this.claim(payer, quote);
      // Until something waits in the pool (the claim's settlement), or the claim answered.
      let answered = false;
      void sending.then(() => (answered = true));
      for (let i = 0; i < 200 && !answered; i++) {
        const pending = (await this.base.send("eth_getBlockByNumber", ["pending", false])) as {
          transactions: string[];
        };
        if (pending.transactions.length) break;
        await sleep(25);
      }
      const fees = await this.base.getFeeData();
      await this.usdc(payer).transfer(this.sandbox.accounts[3].address, PRICE, {
        gasLimit: 100_000n,
        maxPriorityFeePerGas: fees.maxFeePerGas! * 2n,
        maxFeePerGas: fees.maxFeePerGas! * 4n,
      });
      await chain.request({ method: "evm_mine", params: [] });
    } finally {
      await chain.request({ method: "evm_setAutomine", params: [true] });
    }
    return 1;
  }

  /** Four authorisations against a balance of one price, sent at once. */
  async oneBalance(kind: "claims" | "relayed"): Promise<number> {
    const payer = await this.payerWith(PRICE);
    if (kind === "claims") {
      const quote = await this.faucetQuote();
      await Promise.all([0, 1, 2, 3].map(() => this.claim(payer, quote)));
      return 4;
    }
    const prepared = await Promise.all([0, 1, 2, 3].map(() => this.relayedToken()));
    await Promise.all(
      prepared.map(async (p) =>
        this.call("POST", "/send-transactions", { txId: p.txId }, { "X-PAYMENT": await this.pay(payer, p.quote) }),
      ),
    );
    return 4;
  }

  private async relayedToken() {
    const symbol = "H" + randomBytes(3).toString("hex").toUpperCase();
    const res = await this.call(
      "POST",
      "/x402/token/create",
      { chainId: "84532", name: `Hostile ${symbol}`, symbol, agentWallet: this.sandbox.accounts[6].address },
      client(),
    );
    this.txIds.push(res.body.txId);
    return {
      txId: res.body.txId as string,
      quote: this.quoteOf(await this.call("POST", "/send-transactions", { txId: res.body.txId })),
    };
  }

  /** Four paid reads against a balance of one read's price. */
  async paidReads(): Promise<number> {
    const payer = await this.payerWith(READ_PRICE);
    const query = `/rams/mandate?chainId=aa36a7&agent=${Wallet.createRandom().address}&principal=${Wallet.createRandom().address}`;
    const quote = this.quoteOf(await this.call("GET", query));
    const before = await this.usdc().balanceOf(payer.address);
    const answers = await Promise.all(
      [0, 1, 2, 3].map(async () => this.call("GET", query, undefined, { "X-PAYMENT": await this.pay(payer, quote) })),
    );
    const delivered = answers.filter((a) => a.status === 200 && a.body?.data).length;
    const paid = Number((before - (await this.usdc().balanceOf(payer.address))) / READ_PRICE);
    this.readsGivenAway += Math.max(0, delivered - paid);
    return 4;
  }

  /** A relayed operation whose target reverts while it is sent (the factory's code swapped for revert(0, 0)). */
  async wouldRevert(): Promise<number> {
    const payer = await this.payerWith(PRICE);
    const { txId, quote } = await this.relayedToken();
    const factory = this.sandbox.deployments[BASE].contracts.AgentTokenFactory;
    const code = await this.base.getCode(factory);
    const chain = this.sandbox.baseSepolia.provider;
    await chain.request({ method: "hardhat_setCode", params: [factory, "0x60006000fd"] });
    try {
      await this.call("POST", "/send-transactions", { txId }, { "X-PAYMENT": await this.pay(payer, quote) });
    } finally {
      await chain.request({ method: "hardhat_setCode", params: [factory, code] });
    }
    return 1;
  }

  /** A faucet claim paid with an authorization valid for 8 s. */
  async shortAuthorization(): Promise<number> {
    const payer = await this.payerWith(PRICE);
    await this.claim(payer, await this.faucetQuote(), Math.floor(Date.now() / 1000) + 8);
    return 1;
  }

  /**
   * Every batch the hostile payer made, once ended: done without its payment settled (given away), the relayer's gas
   * on batches whose payment was not settled, and payments settled for batches that failed (charged for the attempt).
   */
  async tally(): Promise<{ givenAway: number; unpaidGas: bigint; chargedForAttempt: number }> {
    const relayer = this.sandbox.accounts[RELAYER_INDEX].address.toLowerCase();
    let givenAway = 0;
    let unpaidGas = 0n;
    let chargedForAttempt = 0;
    for (const txId of new Set(this.txIds)) {
      let status: any;
      for (let i = 0; i < 300; i++) {
        status = (await this.call("GET", `/get-transaction-status?txId=${txId}`)).body;
        const paymentsEnded = (status.payments ?? []).every(
          (p: any) => p.status === "settled" || p.status === "released",
        );
        if (status.status !== "pending" && paymentsEnded) break;
        await sleep(200);
      }
      if (status.status === "prepared") continue; // never sent (refused before payment: a 402)
      const settled = (status.payments ?? []).some((p: any) => p.status === "settled");
      if (status.status === "success" && !settled) givenAway++;
      if (status.status !== "success" && settled) chargedForAttempt++;
      if (settled) continue;
      for (const tx of status.transactions ?? []) {
        if (!tx.hash) continue;
        const provider = Number(tx.chainId) === SEPOLIA ? this.sepolia : this.base;
        const receipt = await provider.getTransactionReceipt(tx.hash);
        if (receipt && receipt.from.toLowerCase() === relayer) unpaidGas += receipt.gasUsed * receipt.gasPrice;
      }
    }
    return { givenAway, unpaidGas, chargedForAttempt };
  }
}
