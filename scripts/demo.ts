import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { formatUnits, id as keccakId, JsonRpcProvider, parseUnits, Wallet } from "ethers";
import {
  ApiRequestError,
  createApiClient,
  execute,
  paymentTerms,
  ramsPrepareSigned,
  send,
  unwrap,
  x402Fetch,
  type ApiClient,
  type Executed,
} from "../client/index";
import { parseSelectorSpec, setupExecutor } from "../service/operator/rams-setup";
import { firstStreamedEvent, WebhookListener, type ListenedEvent } from "./lib/webhook-listener";

/**
 * `npm run demo`: a guided tour of the API against a running `npm start`, through the typed client (client/).
 *
 *   tokenization → offering → investment → close → claim → dividend     (API key, client-signed by the sandbox accounts)
 *   an agent registered by the service's relayer and paid with x402       (no key: USDC on Base Sepolia, @x402/fetch)
 *   a RAMS mandate granted by signature and executed within its caps     (the EIP-712 round trip, a capped execution)
 *   every change of the tour received as a signed webhook by a local receiver, verified (Standard Webhooks), and the
 *   event stream (GET /events) resumed from an event id
 *
 * Each step prints a progress line, the transactions it sent and the reads that prove it. It reads the sandbox's
 * <DATA_DIR>/sandbox/dev-credentials.json (what `npm start` writes), or DEMO_CREDENTIALS; DEMO_BASE_URL overrides the
 * URL. Every run uses fresh names, so it can run again against the same sandbox.
 */

interface Credentials {
  baseUrl: string;
  apiKey: string;
  /** Seconds between blocks (0: a block per transaction); a rehearsal also gives each chain's own. */
  blockTime?: number;
  chains: Record<string, { rpcUrl: string; blockTime?: number; deployment: { contracts: Record<string, string> } }>;
  accounts: { address: string; privateKey: string; role: string }[];
}

const SEPOLIA = "11155111";
const STEPS = 15;
let step = 0;
let stepStarted = 0;

const dim = (text: string) => (process.stdout.isTTY ? `\x1b[2m${text}\x1b[0m` : text);
const bold = (text: string) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);

function begin(title: string): void {
  step++;
  stepStarted = Date.now();
  console.log(`\n${bold(`[${String(step).padStart(2)}/${STEPS}] ${title}`)}`);
}
const say = (line: string) => console.log(`        ${line}`);
const proof = (read: string, facts: string) => console.log(`        ✓ ${read}: ${facts}`);
function done(): void {
  console.log(dim(`        done in ${((Date.now() - stepStarted) / 1000).toFixed(1)} s`));
}
function transactions(label: string, result: { status: { txHashes: string[]; blockNumber: number | null } }): void {
  for (const hash of result.status.txHashes) say(`${label} tx ${hash}`);
}

function loadCredentials(): Credentials {
  const file =
    process.env.DEMO_CREDENTIALS ??
    path.join(path.resolve(process.env.DATA_DIR ?? ".data"), "sandbox", "dev-credentials.json");
  if (!fs.existsSync(file)) {
    throw new Error(
      `No sandbox credentials at ${file}: start the sandbox first with \`npm start\` (in another terminal), or set DEMO_CREDENTIALS`,
    );
  }
  const credentials = JSON.parse(fs.readFileSync(file, "utf8")) as Credentials;
  if (process.env.DEMO_BASE_URL) credentials.baseUrl = process.env.DEMO_BASE_URL;
  return credentials;
}

async function main() {
  const started = Date.now();
  const credentials = loadCredentials();
  const wallet = (i: number) => new Wallet(credentials.accounts[i].privateKey);
  const issuer = wallet(1);
  const investor = wallet(2);
  const payer = wallet(3);
  const principal = wallet(4);
  const agent = wallet(5);
  const complianceOwner = wallet(6);
  const admin = wallet(0);
  const sepolia = credentials.chains[SEPOLIA].deployment.contracts;
  const run = randomBytes(3).toString("hex").toUpperCase().slice(0, 4);
  const symbol = `D${run}`;
  const tokenizerEmail = `issuer-${run.toLowerCase()}@demo.example`;
  const investorEmail = `investor-${run.toLowerCase()}@demo.example`;
  const api: ApiClient = createApiClient({ baseUrl: credentials.baseUrl, apiKey: credentials.apiKey });
  const chainId = "aa36a7";

  console.log(bold(`Tokenized-Asset Transaction API — guided demo against ${credentials.baseUrl}`));
  console.log(
    dim(
      `token ${symbol}; issuer #1 ${issuer.address}, investor #2 ${investor.address}, x402 payer #3 ${payer.address}`,
    ),
  );

  // 1. The service and its chains.
  begin("Connect: the service, its chains and their contracts");
  const ready = unwrap(await api.GET("/ready"));
  say(
    `service ${ready.status} (${ready.environment}, database ${ready.database.kind}); chains ${ready.chains.map((c) => `${c.chainId} at block ${c.blockNumber}`).join(", ")}`,
  );
  for (const id of ["aa36a7", "14a34"]) {
    const info = unwrap(await api.GET("/get-network-info", { params: { query: { chainId: id } } }));
    proof(`get-network-info ${info.chainName}`, `factory ${info.factoryAddress}, USDC ${info.USDCAddress}`);
  }
  done();

  // 2. Webhooks: a local receiver for every event of the key, each verified as it arrives.
  begin(
    "Webhooks: a local receiver for every event of this key, signed per Standard Webhooks and verified as they arrive",
  );
  const short = (id: string | null) => (id ? `${id.slice(0, 10)}…` : "");
  const listener = await WebhookListener.start((event: ListenedEvent) =>
    console.log(dim(`        ⚡ event ${event.id} ${event.type} ${short(event.txId)} (signature verified)`)),
  );
  const endpoint = unwrap(await api.POST("/webhooks", { body: { url: listener.url, description: "npm run demo" } }));
  listener.useSecret(endpoint.secret);
  say(
    `endpoint ${endpoint.id} → ${listener.url}; its secret ${endpoint.secret.slice(0, 10)}… is shown once, at creation`,
  );
  done();

  // 3. Tokenization.
  begin(`Tokenize an asset: newTokenization ${symbol} (the issuer signs, the service broadcasts)`);
  const tokenized = await execute(api, issuer, {
    method: "newTokenization",
    chainId,
    signerAddress: issuer.address,
    tokenizerEmail,
    name: `Demo Real Estate ${run}`,
    tokenSymbol: symbol,
    tokenType: "RWA_TOKEN",
    supplyCap: "1000000",
  });
  transactions("newTokenization", tokenized);
  const tokenizer = unwrap(await api.GET("/get-tokenizer-info", { params: { query: { tokenSymbol: symbol } } }));
  proof(
    "get-tokenizer-info",
    `token ${tokenizer.tokenAddress}, its offering escrow ${tokenizer.escrowAddress}, pays in ${tokenizer.paymentTokenSymbol}`,
  );
  const record = unwrap(await api.GET("/get-token-info", { params: { query: { tokenSymbol: symbol } } }));
  proof(
    "get-token-info",
    `${"tokenType" in record ? `${record.tokenType}, max supply ${record.maxTokenSupply}, ${record.allowedTokenDecimals} decimals` : ""}`,
  );
  done();

  // 4. Whitelist.
  begin("Whitelist the investor (only whitelisted wallets may hold the security token)");
  const whitelisted = await execute(api, issuer, {
    method: "whitelist",
    chainId,
    signerAddress: issuer.address,
    tokenSymbol: symbol,
    userToWhitelist: [{ investorAddress: investor.address, investorEmail, whitelistStatus: true }],
  });
  transactions("whitelist", whitelisted);
  const listed = unwrap(
    await api.GET("/get-whitelist-status", {
      params: { query: { tokenSymbol: symbol, investorAddress: investor.address } },
    }),
  );
  proof("get-whitelist-status", `${investor.address} whitelisted: ${listed.whitelistStatus}`);
  done();

  // 5. The offering.
  // The start must still be ahead when the block that opens the offering is mined: on 12 s blocks that is up to a
  // block and a half away (the send waits for the next block, which may be stamped a little later).
  const blockTime = credentials.chains[SEPOLIA].blockTime ?? credentials.blockTime ?? 0;
  const lead = 10 + Math.ceil(2 * blockTime);
  begin(`Open an offering: newSto, 1,000 tokens at 10 USDC, soft cap 1,000 USDC, starting in ${lead} s`);
  const provider = new JsonRpcProvider(credentials.chains[SEPOLIA].rpcUrl, Number(SEPOLIA), { staticNetwork: true });
  const chainTime = async () => Math.max((await provider.getBlock("latest"))!.timestamp, Math.floor(Date.now() / 1000));
  const start = (await chainTime()) + lead;
  const offering = await execute(api, issuer, {
    method: "newSto",
    chainId,
    signerAddress: issuer.address,
    tokenizerEmail,
    tokenSymbol: symbol,
    offeringName: `Series A ${run}`,
    tokenAmount: "1000",
    acceptedCoin: "USDC",
    startDate: new Date(start * 1000).toISOString(),
    endDate: new Date((start + 86_400) * 1000).toISOString(),
    minRaiseUSD: "1000",
    maxRaiseUSD: "10000",
    minInvestment: "100",
    maxInvestment: "5000",
  });
  transactions("newSto", offering);
  const sto = unwrap(await api.GET("/get-stos", { params: { query: { tokenSymbol: symbol } } })).status[0];
  proof(
    "get-stos",
    `offering ${sto.uuid} "${sto.name}" is ${sto.status}, ${sto.tokenAmount} tokens at ${sto.tokenPrice} ${sto.acceptedCoin}`,
  );
  const balance = () =>
    api.GET("/get-sto-balance", { params: { query: { tokenSymbol: symbol, id: sto.uuid } } }).then(unwrap);
  let current = await balance();
  while (current.status !== "ACTIVE") {
    say(`waiting for the start (${new Date(start * 1000).toISOString()}); now ${current.status}`);
    await new Promise((r) => setTimeout(r, 2000));
    current = await balance();
  }
  proof("get-sto-balance", `status ${current.status}`);
  done();

  // 6. Investment.
  begin("Invest: the investor puts in 2,000 USDC (approve, then invest: two transactions, in order)");
  const invested = await execute(api, investor, {
    method: "newInvest",
    chainId,
    investorAddress: investor.address,
    investorEmail,
    tokenSymbol: symbol,
    investmentAmount: "2000",
  });
  transactions("newInvest", invested);
  current = await balance();
  proof(
    "get-sto-balance",
    `raised ${current.currentAmountRaised} USDC, ${current.availableAmount} tokens still for sale`,
  );
  done();

  // 7. Close.
  begin("Close the offering: closeOffer (raised ≥ soft cap: COMPLETED, the funds go to the issuer)");
  transactions(
    "closeOffer",
    await execute(api, issuer, {
      method: "closeOffer",
      chainId,
      signerAddress: issuer.address,
      tokenizerEmail,
      tokenSymbol: symbol,
    }),
  );
  current = await balance();
  proof("get-sto-balance", `status ${current.status}, raised ${current.currentAmountRaised} USDC`);
  done();

  // 8. Claim.
  begin("Claim: the investor's tokens are minted to it (claimTokens)");
  transactions(
    "claimTokens",
    await execute(api, investor, {
      method: "claimTokens",
      chainId,
      investorAddress: investor.address,
      investorEmail,
      tokenSymbol: symbol,
    }),
  );
  const holding = unwrap(
    await api.GET("/get-balance-whitelist", {
      params: { query: { tokenSymbol: symbol, investorAddress: investor.address } },
    }),
  );
  proof("get-balance-whitelist", `${investor.address} holds ${holding.tokenBalance} ${symbol}`);
  const investments = unwrap(
    await api.GET("/get-investments-by-sto-id", { params: { query: { tokenSymbol: symbol, id: sto.uuid } } }),
  );
  proof(
    "get-investments-by-sto-id",
    investments.offeringTransactionsList
      .map((i) => `${i.user} ${i.amountInUSD} ${i.currency} (${i.status})`)
      .join("; "),
  );
  done();

  // 9. Dividend.
  begin("Pay a dividend: the issuer approves 500 USDC to the token and distributes it; the holder withdraws its share");
  transactions(
    "approve",
    await execute(api, issuer, {
      method: "approve",
      chainId,
      signerAddress: issuer.address,
      tokenSymbol: "USDC",
      spenderAddress: tokenizer.tokenAddress,
      amount: "500",
      tokenizerAddress: issuer.address,
    }),
  );
  transactions(
    "dividendDistribution",
    await execute(api, issuer, {
      method: "dividendDistribution",
      chainId,
      signerAddress: issuer.address,
      tokenSymbol: symbol,
      amount: "500",
    }),
  );
  transactions(
    "claimDividends",
    await execute(api, investor, {
      method: "claimDividends",
      chainId,
      signerAddress: investor.address,
      tokenSymbol: symbol,
    }),
  );
  const dividends = unwrap(await api.GET("/get-dividend-distribution", { params: { query: { tokenSymbol: symbol } } }));
  proof(
    "get-dividend-distribution",
    `${dividends.totalDistributed} ${dividends.paymentToken.symbol} distributed; ${dividends.holders.map((h) => `${h.address} withdrew ${h.withdrawn}`).join("; ")}`,
  );
  done();

  // 10. An agent, paid with x402.
  begin("Register an AI agent (ERC-8004), relayed by the service and paid with x402 — no API key");
  const anonymous = createApiClient({ baseUrl: credentials.baseUrl });
  const terms = await paymentTerms(anonymous);
  say(`payments: USDC ${terms.asset} on ${terms.network}, to ${terms.payTo}`);
  const paying = createApiClient({
    baseUrl: credentials.baseUrl,
    fetch: await x402Fetch(payer, { ...terms, maxAmountPerPayment: "100000" }),
  });
  const registration = unwrap(
    await paying.POST("/x402/agent/register", {
      body: {
        chainId: "84532",
        name: `Demo agent ${run}`,
        description: "An agent registered by npm run demo",
        image: "https://example.com/agent.png",
        services: [{ name: "web", endpoint: "https://example.com/agent" }],
      } as never,
    }),
  );
  say(`prepared ${registration.txId} (free: service-relayed; the send is paid)`);
  const registered = await send(paying, registration.txId);
  for (const hash of registered.summary.txHashes) say(`agentRegister tx ${hash} (sent by the relayer)`);
  say(
    `paid ${registered.summary.payment ? formatUnits(registered.summary.payment.amount, 6) : "?"} USDC; settlement tx ${registered.settlement?.transaction}`,
  );
  const agentUuid = String(registration.info.agentUuid);
  const agentInfo = unwrap(await paying.GET("/get-agent-info", { params: { query: { agentUuid } } }));
  proof(
    "get-agent-info (paid by its owner, 0.000001 USDC)",
    `agentId ${agentInfo.agentId}, owner ${agentInfo.ownerWalletAddress}, NFT held by the relayer ${agentInfo.heldByRelayer}, URI ${agentInfo.agentURI}`,
  );
  done();

  // 11. RAMS: the operator's set-up and the principal's eligibility.
  begin("RAMS set-up: an executor for the principal (operator step) and the principal made eligible (grant-principal)");
  const identityRef = keccakId(`demo:${run}:principal`);
  const sepoliaProvider = new JsonRpcProvider(credentials.chains[SEPOLIA].rpcUrl, Number(SEPOLIA), {
    staticNetwork: true,
    cacheTimeout: -1,
  });
  const setup = await setupExecutor({
    provider: sepoliaProvider,
    chainId: Number(SEPOLIA),
    registry: sepolia.AgentMandate,
    complianceProvider: sepolia.ComplianceProvider,
    principal: principal.address,
    selectors: [parseSelectorSpec("transferFrom:2")],
    asset: sepolia.USDC,
    keys: { admin, principal },
  });
  say(
    `(npm run admin -- rams setup-executor) executor ${setup.executor}: ${setup.steps.map((s) => `${s.name} ${s.status}`).join(", ")}`,
  );
  const granted = await execute(api, complianceOwner, {
    method: "ramsGrantPrincipal",
    chainId,
    signerAddress: complianceOwner.address,
    principal: principal.address,
    identityRef,
  });
  transactions("ramsGrantPrincipal", granted);
  const compliance = unwrap(
    await api.GET("/rams/compliance-status", {
      params: { query: { chainId, principal: principal.address, identityRef } },
    }),
  ).data;
  proof("rams/compliance-status", `${principal.address} eligible: ${compliance.eligible} (${compliance.reason})`);
  done();

  // 12. RAMS: the mandate, by the principal's signature, relayed and paid with x402.
  begin(
    "RAMS mandate: typed data → the principal signs → granted by the relayer, paid with x402 (caps 100 / 150 USDC)",
  );
  const existing = unwrap(
    await api.GET("/rams/mandate", {
      params: { query: { chainId, agent: agent.address, principal: principal.address } },
    }),
  ).data;
  if (existing.status === "active" || existing.status === "pending") {
    say(`an earlier run left its mandate ${existing.status}: the principal revokes it first`);
    await execute(api, principal, {
      method: "ramsRevokeMandate",
      chainId,
      signerAddress: principal.address,
      agent: agent.address,
      principal: principal.address,
    });
  }
  const usdc = (amount: string) => parseUnits(amount, 6).toString();
  const params = {
    chainId,
    agent: agent.address,
    principal: principal.address,
    validUntil: String((await chainTime()) + 86_400),
    identityRef,
    asset: sepolia.USDC,
    maxTransactionValue: usdc("100"),
    maxCumulativeValue: usdc("150"),
    actions: ["0x23b872dd"],
  };
  const signed = await ramsPrepareSigned(paying, "grant-mandate", params, principal, {
    executionMode: "service-relayed",
  });
  say(
    `typed data ${signed.typedData.typedDataId} (nonce ${signed.typedData.nonce}, deadline ${signed.typedData.deadline}) signed by the principal`,
  );
  const mandateSent = await send(paying, signed.prepared.txId);
  for (const hash of mandateSent.summary.txHashes)
    say(`ramsGrantMandate tx ${hash} (sent by the relayer; settlement ${mandateSent.settlement?.transaction})`);
  let mandate = unwrap(
    await api.GET("/rams/mandate", {
      params: { query: { chainId, agent: agent.address, principal: principal.address } },
    }),
  ).data;
  proof(
    "rams/mandate",
    `status ${mandate.status}, caps ${formatUnits(mandate.mandate!.maxTransactionValue, 6)} per transaction / ${formatUnits(mandate.mandate!.maxCumulativeValue, 6)} in all`,
  );
  done();

  // 13. RAMS: a capped execution.
  begin(
    "RAMS execution: the agent moves 60 USDC of the principal's through the executor; 120 is refused (over the cap)",
  );
  const executed: Executed = await execute(api, agent, {
    method: "ramsExecute",
    chainId,
    signerAddress: agent.address,
    executorAddress: setup.executor,
    asset: sepolia.USDC,
    from: principal.address,
    to: investor.address,
    amount: usdc("60"),
  });
  transactions("ramsExecute", executed);
  mandate = unwrap(
    await api.GET("/rams/mandate", {
      params: { query: { chainId, agent: agent.address, principal: principal.address } },
    }),
  ).data;
  proof(
    "rams/mandate",
    `cumulativeUsed ${formatUnits(mandate.mandate!.cumulativeUsed, 6)} USDC, ${formatUnits(mandate.mandate!.remainingCumulativeValue, 6)} left`,
  );
  const refused = await api.POST("/prepare-transactions", {
    body: {
      method: "ramsExecute",
      chainId,
      signerAddress: agent.address,
      executorAddress: setup.executor,
      asset: sepolia.USDC,
      from: principal.address,
      to: investor.address,
      amount: usdc("120"),
    },
  });
  if (refused.response.status !== 400)
    throw new Error(`an execution above the cap was not refused (${refused.response.status})`);
  proof(
    "prepare ramsExecute 120 USDC",
    `refused before anything is signed: ${refused.response.status} ${refused.error?.message}`,
  );
  const check = unwrap(
    await api.GET("/rams/can-execute", {
      params: {
        query: {
          chainId,
          agent: agent.address,
          principal: principal.address,
          asset: sepolia.USDC,
          amount: usdc("100"),
        },
      },
    }),
  ).data;
  proof("rams/can-execute 100 USDC", `allowed ${check.allowed}: ${check.reason?.code} (${check.reason?.message})`);
  done();

  // 14. Events.
  begin("Events: every change of the tour arrived as a signed webhook; the stream replays from an event id");
  for (
    let i = 0;
    i < 100 && unwrap(await api.GET("/webhooks/{id}", { params: { path: { id: endpoint.id } } })).pendingDeliveries > 0;
    i++
  )
    await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 300));
  const byType = new Map<string, number>();
  for (const e of listener.events) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
  if (listener.unverified) throw new Error(`${listener.unverified} webhook(s) failed signature verification`);
  proof(
    "webhooks",
    `${listener.events.length} events received, every signature verified (standardwebhooks): ${[...byType].map(([t, n]) => `${t} ×${n}`).join(", ")}`,
  );
  const tokenEvent = listener.events.find((e) => e.type === "token.created");
  if (tokenEvent) {
    const replayed = await firstStreamedEvent(credentials.baseUrl, credentials.apiKey, {
      lastEventId: String(BigInt(tokenEvent.id) - 1n),
      types: "token.created",
    });
    proof(
      "GET /events (Server-Sent Events) from Last-Event-ID",
      `${replayed?.type} ${replayed?.id} for ${(replayed?.data as { tokenSymbol?: string })?.tokenSymbol}, the event the webhook got`,
    );
  }
  await api.DELETE("/webhooks/{id}", { params: { path: { id: endpoint.id } } });
  await listener.close();
  done();

  // 15. Done.
  begin("Done");
  const status = unwrap(
    await api.GET("/get-transaction-status", { params: { query: { txId: executed.prepared.txId } } }),
  );
  proof("get-transaction-status", `the last batch ${executed.prepared.txId} is ${status.status}`);
  say(
    `the whole tour took ${((Date.now() - started) / 1000).toFixed(0)} s; explore the API at ${credentials.baseUrl}/docs`,
  );
  provider.destroy();
  sepoliaProvider.destroy();
}

main().then(
  () => process.exit(0),
  (error) => {
    const reason =
      error instanceof ApiRequestError
        ? `${error.message} (x-request-id ${error.requestId})`
        : error instanceof Error
          ? error.message
          : String(error);
    console.error(`\ndemo failed at step ${step}: ${reason}`);
    process.exit(1);
  },
);
