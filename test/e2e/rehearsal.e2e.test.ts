// tier: chaos
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import hre from "hardhat";
import { Contract, Interface, JsonRpcProvider, TypedDataEncoder, Wallet, getAddress, parseUnits } from "ethers";
import { createRehearsal, runDeployScript, type Rehearsal, type RehearsalChain } from "../../scripts/lib/rehearsal";
import {
  fiatTokenProxyArtifact,
  fiatTokenV2_2Artifact,
  PROXY_ADMIN_SLOT,
  PROXY_IMPLEMENTATION_SLOT,
} from "../../scripts/lib/circle-usdc";
import type { ServiceProcess } from "../../scripts/lib/service-process";
import { AgentMandate__factory, BKN__factory, ComplianceProvider__factory } from "../../typechain-types";
import { multicall3Interface } from "../../service/chains/contracts";
import { MULTICALL3_ADDRESS } from "../../service/chains/networks";
import { decodePaymentResponse, payWithEthers, quoteOf } from "../helpers/x402";

const CIRCLE = {
  11155111: "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
  84532: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
} as const;
const FAUCET_PRICE = 10_000n;

/**
 * The rehearsal network (scripts/lib/rehearsal.ts) with short blocks (1 s and 0.5 s): Circle's USDC at Circle's
 * addresses, the suite deployed by scripts/deploy.ts as docs/deploying.md says, the service as its own process, and an
 * x402 payment settled through Circle's FiatToken v2.2.
 */
describe("e2e: the rehearsal network (public test networks as they really are)", function () {
  this.timeout(180_000);
  let dir: string;
  let rehearsal: Rehearsal;
  let service: ServiceProcess;
  const emptyDeployer = Wallet.createRandom();
  let refusal: Promise<string>;
  const children = new Set<ChildProcess>();
  const providers: JsonRpcProvider[] = [];

  const providerFor = (chain: RehearsalChain) => {
    const provider = new JsonRpcProvider(chain.url, chain.chainId, {
      staticNetwork: true,
      pollingInterval: 100,
      cacheTimeout: -1,
    });
    providers.push(provider);
    return provider;
  };
  const usdcOn = (chain: RehearsalChain) => new Contract(chain.usdc, fiatTokenV2_2Artifact().abi, providerFor(chain));
  const request = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(service.url + route, {
      method,
      headers: { ...(body ? { "content-type": "application/json" } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // text, as /metrics answers
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };

  before(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-rehearsal-"));
    rehearsal = await createRehearsal(hre, {
      deploymentsDir: path.join(dir, "deployments"),
      dataDir: dir,
      blockTimes: { 11155111: 1, 84532: 0.5 },
    });
    // The deploy script with an empty deployer runs while the service starts (both are processes of their own).
    refusal = runDeployScript(rehearsal.sepolia, {
      deployerKey: emptyDeployer.privateKey,
      deploymentsDir: path.join(dir, "refused"),
      children,
    }).then(
      () => "",
      (error: Error) => error.message,
    );
    service = await rehearsal.startService({ SEND_WAIT_MS: "60000" });
  });

  after(async function () {
    this.timeout(60_000);
    for (const provider of providers) provider.destroy();
    for (const child of children) child.kill("SIGKILL");
    await rehearsal?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("scripts/deploy.ts --network sepolia / baseSepolia wrote deployment files that name Circle's USDC (no USDT on the testnets) and handed out the RAMS roles", async () => {
    for (const chain of rehearsal.chains) {
      const id = chain.chainId as 11155111 | 84532;
      const file = JSON.parse(fs.readFileSync(path.join(dir, "deployments", `${id}.json`), "utf8"));
      expect(file.chainId).to.equal(id);
      expect(file.contracts.USDC).to.equal(CIRCLE[id]);
      expect(file.contracts.USDT).to.equal(undefined);
      expect(file.deployer).to.equal(rehearsal.wallets.deployer.address);
      const provider = providerFor(chain);
      for (const [name, address] of Object.entries(file.contracts as Record<string, string>))
        expect(await provider.getCode(address), name).to.not.equal("0x");
      expect(rehearsal.deployments[id]).to.deep.equal(file);
    }
    const sepolia = rehearsal.deployments[11155111];
    const mandate = AgentMandate__factory.connect(sepolia.contracts.AgentMandate, providerFor(rehearsal.sepolia));
    expect(await mandate.hasRole(await mandate.ENFORCER_ROLE(), rehearsal.wallets.ramsEnforcer.address)).to.equal(true);
    expect(await mandate.hasRole(await mandate.DEFAULT_ADMIN_ROLE(), rehearsal.wallets.deployer.address)).to.equal(
      true,
    );
    const compliance = ComplianceProvider__factory.connect(
      sepolia.contracts.ComplianceProvider,
      providerFor(rehearsal.sepolia),
    );
    expect(await compliance.owner()).to.equal(rehearsal.wallets.ramsComplianceOwner.address);
  });

  it("scripts/deploy.ts refuses an empty deployer before sending anything, naming the cost and what to send", async () => {
    const empty = emptyDeployer;
    const otherDir = path.join(dir, "refused");
    const failure = await refusal;
    expect(failure).to.include(
      `The deployer ${empty.address} holds 0.0 SepoliaETH on Sepolia (chain 11155111), not enough to deploy`,
    );
    expect(failure).to.match(
      /11 contract\(s\) and 0 role transaction\(s\), [\d,]+ gas; at the base fee of [\d.]+ gwei/,
    );
    expect(failure).to.match(new RegExp(`Send at least [\\d.]+ SepoliaETH more to ${empty.address}`));
    expect(await providerFor(rehearsal.sepolia).getTransactionCount(empty.address)).to.equal(0);
    expect(fs.existsSync(otherDir)).to.equal(false);
  });

  it("the token at Circle's address is Circle's FiatToken v2.2 behind FiatTokenProxy, initialised as the public tokens are (name USDC, version 2, 6 decimals)", async () => {
    const proxy = fiatTokenProxyArtifact();
    const token = fiatTokenV2_2Artifact();
    // The implementation's runtime code, with the linked library's address left out (it differs per deployment).
    const unlinked = (code: string) => {
      let masked = code.toLowerCase();
      for (const { start, length } of token.deployedLinkReferences["contracts/util/SignatureChecker.sol"]
        .SignatureChecker) {
        masked = masked.slice(0, 2 + start * 2) + "0".repeat(length * 2) + masked.slice(2 + (start + length) * 2);
      }
      return masked;
    };
    for (const chain of rehearsal.chains) {
      const provider = providerFor(chain);
      const address = CIRCLE[chain.chainId as 11155111 | 84532];
      expect(await provider.getCode(address)).to.equal(proxy.deployedBytecode.toLowerCase());
      const implementation = getAddress(
        "0x" + (await provider.getStorage(address, PROXY_IMPLEMENTATION_SLOT)).slice(26),
      );
      const admin = getAddress("0x" + (await provider.getStorage(address, PROXY_ADMIN_SLOT)).slice(26));
      const asProxy = new Contract(address, proxy.abi, provider);
      // The proxy answers admin() and implementation() only to its admin.
      expect(await asProxy.implementation({ from: admin })).to.equal(implementation);
      expect(unlinked(await provider.getCode(implementation))).to.equal(unlinked(token.deployedBytecode));

      const usdc = usdcOn(chain);
      expect(await usdc.name()).to.equal("USDC");
      expect(await usdc.symbol()).to.equal("USDC");
      expect(await usdc.version()).to.equal("2");
      expect(await usdc.decimals()).to.equal(6n);
      expect(await usdc.currency()).to.equal("USD");
      expect(await usdc.paused()).to.equal(false);
      expect(admin).to.not.equal(await usdc.owner());
      expect(await usdc.DOMAIN_SEPARATOR()).to.equal(
        TypedDataEncoder.hashDomain({ name: "USDC", version: "2", chainId: chain.chainId, verifyingContract: address }),
      );
      expect(await usdc.isMinter(rehearsal.wallets.circleMinter.address)).to.equal(true);
      expect(await usdc.balanceOf(rehearsal.accounts[3].address)).to.equal(parseUnits("1000000", 6));
    }
  });

  it("mines on an interval with an EIP-1559 base fee that starts where the public network's does and moves block by block", async () => {
    for (const chain of rehearsal.chains) {
      expect(chain.blockTime).to.equal(chain.chainId === 11155111 ? 1 : 0.5);
      const provider = providerFor(chain);
      const first = await provider.getBlockNumber();
      let block = await provider.getBlock(first);
      while (block!.number < first + 3) {
        await new Promise((r) => setTimeout(r, 200));
        block = await provider.getBlock("latest");
      }
      const fees = await Promise.all(
        [first, first + 1, first + 2, first + 3].map(async (n) => (await provider.getBlock(n))!.baseFeePerGas!),
      );
      const floor = chain.network.minBaseFeePerGas;
      if (floor === 0n) {
        // Sepolia: from 1 gwei, each nearly empty block takes up to 12.5% off.
        expect(fees[3], `${chain.chainId}: ${fees.join(", ")}`).to.be.lessThan(fees[0]);
        for (const fee of fees) expect(fee).to.be.at.most(chain.network.initialBaseFeePerGas);
      } else {
        // Base Sepolia: down to its 200,000 wei floor within seconds, and held there (a block mined before the
        // floor's keeper saw its parent, on a busy machine, may sit an EIP-1559 step or two, 12.5% each, under it).
        for (const fee of fees)
          expect(fee, `${chain.chainId}: ${fees.join(", ")}`).to.be.within(
            (floor * 3n) / 4n,
            chain.network.initialBaseFeePerGas,
          );
        expect(fees.filter((fee) => fee === floor).length, `${chain.chainId}: ${fees.join(", ")}`).to.be.at.least(2);
      }
      expect((await provider.getBlock("latest"))!.gasLimit).to.equal(BigInt(chain.network.blockGasLimit));
    }
  });

  it("an x402-paid faucet claim settles through Circle's FiatToken v2.2: a transferWithAuthorization on Base Sepolia, the payer's USDC down and the payee's up by the price", async () => {
    const payer = rehearsal.accounts[3];
    const payee = rehearsal.wallets.settlement.address;
    const recipient = Wallet.createRandom().address;
    const idempotencyKey = randomUUID();
    const claim = (headers: Record<string, string> = {}) =>
      request(
        "POST",
        "/faucet/bkn",
        { recipientAddress: recipient },
        { "Idempotency-Key": idempotencyKey, ...headers },
      );

    const quote = quoteOf(await claim()).accepts[0];
    expect(quote).to.include({
      scheme: "exact",
      network: "eip155:84532",
      asset: CIRCLE[84532],
      amount: FAUCET_PRICE.toString(),
      payTo: payee,
    });
    expect(quote.extra).to.include({ name: "USDC", version: "2" });

    const usdc = usdcOn(rehearsal.baseSepolia);
    const before = {
      payer: (await usdc.balanceOf(payer.address)) as bigint,
      payee: (await usdc.balanceOf(payee)) as bigint,
    };
    const res = await claim({ "X-PAYMENT": await payWithEthers(payer, quote) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({ status: "confirmed", chainId: "11155111", amount: "100" });
    const settlement = decodePaymentResponse(res);
    expect(settlement).to.include({ success: true, network: "eip155:84532" });
    expect(settlement.payer).to.equal(payer.address);

    const base = providerFor(rehearsal.baseSepolia);
    // Settled in a batch: Multicall3's aggregate3 calls the FiatToken's transferWithAuthorization, failure allowed.
    const tx = await base.getTransaction(settlement.transaction);
    expect(tx!.to).to.equal(MULTICALL3_ADDRESS);
    expect(tx!.from).to.equal(payee);
    const [calls] = multicall3Interface.parseTransaction({ data: tx!.data })!.args;
    expect(calls.map((c: { target: string }) => c.target)).to.deep.equal([CIRCLE[84532]]);
    expect(calls[0].allowFailure).to.equal(true);
    const fiatToken = new Interface(fiatTokenV2_2Artifact().abi);
    expect(fiatToken.parseTransaction({ data: calls[0].callData })!.name).to.equal("transferWithAuthorization");
    const receipt = await base.getTransactionReceipt(settlement.transaction);
    expect(receipt!.status).to.equal(1);
    const events = receipt!.logs.filter((l) => l.address === CIRCLE[84532]).map((l) => fiatToken.parseLog(l)!);
    expect(events.map((e) => e.name)).to.include.members(["AuthorizationUsed", "Transfer"]);
    const transfer = events.find((e) => e.name === "Transfer")!;
    expect([transfer.args.from, transfer.args.to, transfer.args.value]).to.deep.equal([
      payer.address,
      payee,
      FAUCET_PRICE,
    ]);
    expect(events.find((e) => e.name === "AuthorizationUsed")!.args.authorizer).to.equal(payer.address);

    expect(await usdc.balanceOf(payer.address)).to.equal(before.payer - FAUCET_PRICE);
    expect(await usdc.balanceOf(payee)).to.equal(before.payee + FAUCET_PRICE);
    const bkn = BKN__factory.connect(rehearsal.deployments[11155111].contracts.BKN, providerFor(rehearsal.sepolia));
    expect(await bkn.balanceOf(recipient)).to.equal(parseUnits("100", 18));
  });

  it("GET /metrics (METRICS_TOKEN) shows the funded relayer and settlement wallets' balances, neither low", async () => {
    expect((await request("GET", "/metrics")).status).to.equal(401);
    const metrics = await request("GET", "/metrics", undefined, {
      authorization: `Bearer ${rehearsal.serviceEnv().METRICS_TOKEN}`,
    });
    expect(metrics.status).to.equal(200);
    const lines = (metrics.body as string).split("\n");
    const value = (name: string, chainId: number, wallet: string, address: string) =>
      lines
        .find(
          (l) =>
            l.startsWith(`${name}{`) &&
            l.includes(`chain_id="${chainId}"`) &&
            l.includes(`wallet="${wallet}"`) &&
            l.includes(`address="${address}"`),
        )
        ?.split(" ")
        .pop();
    const { relayer, settlement } = rehearsal.wallets;
    for (const chainId of [11155111, 84532]) {
      expect(
        Number(value("tak_wallet_balance_eth", chainId, "relayer", relayer.address)),
        String(chainId),
      ).to.be.within(0.4, 0.5);
      expect(value("tak_wallet_balance_low", chainId, "relayer", relayer.address)).to.equal("0");
    }
    expect(Number(value("tak_wallet_balance_eth", 84532, "settlement", settlement.address))).to.be.within(0.09, 0.1);
    expect(value("tak_wallet_balance_low", 84532, "settlement", settlement.address)).to.equal("0");
  });
});
