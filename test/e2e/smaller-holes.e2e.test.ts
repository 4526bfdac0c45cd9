import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Interface, JsonRpcProvider, Wallet, id as keccakId } from "ethers";
import { RAMS_COMPLIANCE_OWNER_INDEX, RAMS_ENFORCER_INDEX } from "../../scripts/lib/sandbox";
import { parseSelectorSpec, setupExecutor } from "../../service/operator/rams-setup";
import { runAdminCommand } from "../../service/operator/commands";
import { REQUEST_LIMITS } from "../../service/auth/request-limits";
import { AgentMandate__factory, ForgedMandateRegistry__factory } from "../../typechain-types";
import { distinctClient } from "../helpers/relayed";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";

/**
 * Issue 41, item 5, each hole tried through HTTP: status by unknown hashes without a limit, prepared batches never
 * pruned, a relayed appendResponse anyone could pay for on an agent the relayer holds, RAMS overrides to any contract
 * and events parsed from any emitter, and a paid getter that named the owner before the payment was checked. (Uploads:
 * test/e2e/stored-documents.e2e.test.ts; a reported hash must name a transaction the node knows and that matches the
 * prepared one: test/e2e/hardening.e2e.test.ts and payment-integrity.e2e.test.ts.)
 */
describe("e2e: smaller holes (status by hash, expiry of prepares, feedback responses, RAMS contracts and events, paid getters)", function () {
  this.timeout(300_000);
  const SEPOLIA = 11155111;
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let keyed: ApiClient;
  let keyId: string;
  let sepolia: JsonRpcProvider;
  let base: JsonRpcProvider;

  const status = (res: ApiResponse, expected: number, label = "") => {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.equal(expected);
    return res.body;
  };
  const fundedWallet = async (provider: JsonRpcProvider) => {
    const wallet = new Wallet(Wallet.createRandom().privateKey, provider);
    await (
      await sandbox.accounts[0].connect(provider).sendTransaction({ to: wallet.address, value: 10n ** 18n })
    ).wait();
    return wallet;
  };
  /** prepare under the key → sign → send; the batch must succeed. */
  const keyedCall = async (path: string, wallet: Wallet, body: Record<string, unknown>, envelope = false) => {
    const answer = status(
      await keyed.post(path, { signerAddress: wallet.address, executionMode: "client-signed", ...body }),
      200,
      path,
    );
    const prepared = envelope ? answer.data : answer;
    const signedTransactions = await Promise.all(prepared.transactions.map((t: object) => wallet.signTransaction(t)));
    const sent = status(
      await keyed.post("/send-transactions", { txId: prepared.txId, signedTransactions }),
      200,
      `${path} send`,
    );
    expect(sent.status, JSON.stringify(sent)).to.equal("success");
    return { prepared, sent };
  };
  const profile = (name: string) => ({
    name,
    description: `${name}, an agent`,
    image: "https://example.com/agent.png",
    services: [{ name: "A2A", endpoint: "https://agent.example.com/.well-known/agent-card.json", version: "0.3.0" }],
  });

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    api = service.api;
    const created = await service.services.apiKeys.create({ email: "holes@issue41.test", plan: "Enterprise" });
    keyed = api.withKey(created.key);
    keyId = created.record.id;
    sepolia = providerFor(sandbox.sepolia);
    base = providerFor(sandbox.baseSepolia);
  });
  after(async () => {
    sepolia?.destroy();
    base?.destroy();
    await service?.stop();
  });

  it(`status by a hash this service never saw asks every chain: ${REQUEST_LIMITS.unknownHashes.points} a minute per client IP (or key), the next 429 with Retry-After; known batches are not counted`, async () => {
    const client = distinctClient();
    const unknown = () => "0x" + randomBytes(32).toString("hex");
    for (let i = 0; i < REQUEST_LIMITS.unknownHashes.points; i++)
      status(await api.get("/get-transaction-status", { hash: unknown() }, client), 404, `unknown hash ${i}`);
    const limited = status(await api.get("/get-transaction-status", { hash: unknown() }, client), 429, "one more");
    expect(limited.message).to.match(/status reads of unknown transaction hashes per minute/);
    // Another address is counted apart; a key is counted as the key.
    status(await api.get("/get-transaction-status", { hash: unknown() }, distinctClient()), 404, "another address");
    status(await keyed.get("/get-transaction-status", { hash: unknown() }, client), 404, "with a key");
    // A batch the service knows is answered from the database, whatever the count (a relayed prepare's txId).
    const prepared = status(
      await api.post(
        "/x402/token/create",
        {
          chainId: "84532",
          name: "Known",
          symbol: `K${randomBytes(2).toString("hex").toUpperCase()}`,
          agentWallet: Wallet.createRandom().address,
        },
        distinctClient(),
      ),
      200,
    );
    expect(
      status(await api.get("/get-transaction-status", { txId: prepared.txId }, client), 200, "a known txId").status,
    ).to.equal("prepared");
    const retryAfter = (
      await fetch(`${service.url}/get-transaction-status?hash=${unknown()}`, { headers: client })
    ).headers.get("retry-after");
    expect(Number(retryAfter)).to.be.within(1, 60);
  });

  it("a prepared batch nobody sent expires (PREPARED_BATCH_TTL_HOURS): its send answers 410 BATCH_EXPIRED and it is deleted; a batch a payment names stays", async () => {
    const ttl = 0.0005; // 1.8 s
    const short = await startTestService(sandbox, { env: { PREPARED_BATCH_TTL_HOURS: String(ttl) } });
    try {
      const payer = sandbox.accounts[2];
      await short.services.signers.add(payer.address, "all-keys");
      const free = status(
        await short.api.post(
          "/x402/token/create",
          {
            chainId: "84532",
            name: "Expiring",
            symbol: `E${randomBytes(2).toString("hex").toUpperCase()}`,
            agentWallet: payer.address,
          },
          distinctClient(),
        ),
        200,
      );
      // A client-signed prepare without a key pays half its price at prepare: what the payer paid for is kept.
      const body = {
        method: "agentCreateToken",
        chainId: "84532",
        signerAddress: payer.address,
        name: "Paid",
        symbol: `P${randomBytes(2).toString("hex").toUpperCase()}`,
        agentWallet: payer.address,
      };
      const quote = quoteOf(await short.api.post("/prepare-transactions", body, distinctClient())).accepts[0];
      const paid = status(
        await short.api.post("/prepare-transactions", body, {
          ...distinctClient(),
          "X-PAYMENT": await payWithEthers(payer, quote),
        }),
        200,
        "paid prepare",
      );
      expect(status(await short.api.get("/get-transaction-status", { txId: free.txId }), 200).status).to.equal(
        "prepared",
      );
      // The sweep is held back a moment so the send after expiry meets the batch still there.
      short.services.preparedExpiry.stop();
      await new Promise((r) => setTimeout(r, ttl * 3_600_000 + 300));
      const expired = status(await short.api.post("/send-transactions", { txId: free.txId }), 410, "send after expiry");
      expect(expired.error.code).to.equal("BATCH_EXPIRED");
      expect(expired.message).to.match(/expired; prepare it again/);
      // The sweep (at start, then every half TTL) deletes the free one; the paid one stays, and is expired for a send as well.
      short.services.preparedExpiry.start();
      const deadline = Date.now() + 10_000;
      while (
        (await short.api.get("/get-transaction-status", { txId: free.txId })).status !== 404 &&
        Date.now() < deadline
      )
        await new Promise((r) => setTimeout(r, 250));
      status(await short.api.get("/get-transaction-status", { txId: free.txId }), 404, "pruned");
      const rows = await short.services.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM batch_transactions WHERE tx_id = $1",
        [free.txId],
      );
      expect(rows[0].n).to.equal(0);
      expect(
        status(await short.api.get("/get-transaction-status", { txId: paid.txId }), 200, "paid stays").status,
      ).to.equal("prepared");
      status(
        await short.api.post("/send-transactions", {
          txId: paid.txId,
          signedTransactions: [await payer.signTransaction(paid.transactions[0])],
        }),
        410,
        "the paid one expired too",
      );
    } finally {
      await short.stop();
    }
  });

  it("appendResponse only by the feedback's addressee: relayed on an agent the relayer holds for a payer, another wallet's payment is refused before any USDC moves; client-signed, only its owner", async () => {
    const payer = sandbox.accounts[4];
    const rater = await fundedWallet(base);
    await service.services.signers.add(rater.address, { keyId });
    // The payer registers an agent, relayed: the relayer holds it for the payer.
    const register = status(await api.post("/x402/agent/register", profile("Held agent"), distinctClient()), 200);
    const registered = status(
      await api.post(
        "/send-transactions",
        { txId: register.txId },
        {
          "X-PAYMENT": await payWithEthers(
            payer,
            quoteOf(await api.post("/send-transactions", { txId: register.txId })).accepts[0],
          ),
        },
      ),
      200,
    );
    const agentId = registered.outcome.agentId as string;
    await keyedCall("/x402/agent/feedback/give", rater, { agentId, value: "2", tag1: "quality" });
    const respond = {
      agentId,
      clientAddress: rater.address,
      feedbackIndex: "1",
      responseURI: "https://example.com/not-the-owner.json",
    };

    // A stranger prepares the relayed response (free) and pays for it: before the fix the relayer, the agent's holder,
    // posted it, and it read as the owner's response.
    const stranger = sandbox.accounts[5];
    const prepared = status(await api.post("/x402/agent/feedback/respond", respond, distinctClient()), 200);
    const quote = quoteOf(await api.post("/send-transactions", { txId: prepared.txId })).accepts[0];
    const refused = status(
      await api.post(
        "/send-transactions",
        { txId: prepared.txId },
        { "X-PAYMENT": await payWithEthers(stranger, quote) },
      ),
      403,
      "the stranger pays",
    );
    expect(refused.message).to.match(/for whom the service holds this agent/);
    // Client-signed by the stranger: refused at prepare.
    await service.services.signers.add(stranger.address, { keyId });
    const direct = await keyed.post("/x402/agent/feedback/respond", {
      ...respond,
      signerAddress: stranger.address,
      executionMode: "client-signed",
    });
    expect(direct.status, JSON.stringify(direct.body)).to.equal(400);
    expect(direct.body.message).to.match(/held by the service's relayer/);
    // The payer it is held for responds.
    const own = status(
      await api.post(
        "/send-transactions",
        { txId: prepared.txId },
        {
          "X-PAYMENT": await payWithEthers(
            payer,
            quoteOf(await api.post("/send-transactions", { txId: prepared.txId })).accepts[0],
          ),
        },
      ),
      200,
      "the payer pays",
    );
    expect(own.status).to.equal("success");
  });

  describe("RAMS: contracts a call names and the events a batch reports", () => {
    let forged: string;
    let victimUuid: string;
    let victimWallet: Wallet;

    before(async () => {
      const admin = sandbox.accounts[0].connect(sepolia);
      const contract = await new ForgedMandateRegistry__factory(admin).deploy();
      await contract.waitForDeployment();
      forged = await contract.getAddress();
      // The victim: an ERC-8004 agent registered here (client-signed), its agent wallet its owner.
      victimWallet = await fundedWallet(base);
      await service.services.signers.add(victimWallet.address, { keyId });
      const { prepared } = await keyedCall("/x402/agent/register", victimWallet, profile("Victim"));
      victimUuid = prepared.info.agentUuid;
    });
    const ramsHistory = async () =>
      status(
        await keyed.get("/get-agent-transactions", { agentUuid: victimUuid, limit: "100" }),
        200,
      ).transactions.filter((t: { category: string }) => t.category === "rams");

    it("a registry override that is not this version's AgentMandate is refused (400 naming agentMandateAddress), so it cannot put a forged freeze in another agent's history; a genuine copy is taken; the operator may allow one", async () => {
      const attacker = await fundedWallet(sepolia);
      await service.services.signers.add(attacker.address, { keyId });
      const freeze = {
        method: "ramsFreezeAgent",
        chainId: "aa36a7",
        signerAddress: attacker.address,
        agent: victimWallet.address,
        agentMandateAddress: forged,
      };
      const refused = status(await keyed.post("/prepare-transactions", freeze), 400, "a forged registry");
      expect(refused.error.param ?? refused.error.details.field).to.equal("agentMandateAddress");
      expect(refused.message).to.match(/runs code that is not this version's AgentMandate/);
      expect(await ramsHistory()).to.deep.equal([]);
      for (const [path, query] of [
        ["/rams/status", { agentMandateAddress: forged }],
        ["/rams/compliance-status", { complianceProviderAddress: forged, identityRef: keccakId("x") }],
      ] as const) {
        const read = status(
          await keyed.get(path, {
            chainId: "aa36a7",
            agent: victimWallet.address,
            principal: attacker.address,
            ...query,
          }),
          400,
          path,
        );
        expect(read.message).to.match(/runs code that is not this version's/);
      }
      // A registry deployed from this version's code (another admin, its own address) is taken.
      const copy = await new AgentMandate__factory(sandbox.accounts[0].connect(sepolia)).deploy(attacker.address);
      await copy.waitForDeployment();
      const genuine = status(
        await keyed.get("/rams/status", {
          chainId: "aa36a7",
          agent: victimWallet.address,
          principal: attacker.address,
          agentMandateAddress: await copy.getAddress(),
        }),
        200,
        "a genuine copy",
      );
      expect(genuine.data).to.include({ isFrozen: false, nonce: "0" });
      // The operator's allow-list: the forged contract gets past the code check (and then fails as what it is not).
      const allowing = await startTestService(sandbox, { env: { RAMS_ALLOWED_CONTRACTS: forged } });
      try {
        const { key } = await allowing.services.apiKeys.create({ email: "allow@issue41.test", plan: "Starter" });
        const read = status(
          await allowing.api.withKey(key).get("/rams/status", {
            chainId: "aa36a7",
            agent: victimWallet.address,
            principal: attacker.address,
            agentMandateAddress: forged,
          }),
          400,
        );
        expect(read.message).to.match(/^agentMandateAddress 0x[0-9a-fA-F]{40} does not answer /);
      } finally {
        await allowing.stop();
      }
    });

    it("an execution whose target emits the registry's events: they are not RAMS events of the batch, and nothing enters another agent's history", async () => {
      const complianceOwner = sandbox.accounts[RAMS_COMPLIANCE_OWNER_INDEX];
      const [principal, agent] = [await fundedWallet(sepolia), await fundedWallet(sepolia)];
      for (const w of [complianceOwner, principal, agent]) await service.services.signers.add(w.address, { keyId });
      const registry = sandbox.deployments[SEPOLIA].contracts.AgentMandate;
      const complianceProvider = sandbox.deployments[SEPOLIA].contracts.ComplianceProvider;
      const identityRef = keccakId(`kyc:issue41-${randomBytes(4).toString("hex")}`);
      await keyedCall(
        "/x402/rams/grant-principal",
        complianceOwner,
        { principal: principal.address, identityRef },
        true,
      );
      const setup = await setupExecutor({
        provider: sepolia,
        chainId: SEPOLIA,
        registry,
        complianceProvider,
        principal: principal.address,
        selectors: [parseSelectorSpec("transferFrom:2")],
        enforcer: sandbox.accounts[RAMS_ENFORCER_INDEX].address,
        keys: { admin: sandbox.accounts[0], principal },
      });
      await runAdminCommand(service.services, {
        command: "rams.executors.record",
        chainId: SEPOLIA,
        executor: setup.executor,
        registry: setup.registry,
        principal: setup.principal,
        owner: setup.owner,
      });
      const now = (await sepolia.getBlock("latest"))!.timestamp;
      await keyedCall(
        "/x402/rams/grant-mandate",
        principal,
        {
          agent: agent.address,
          principal: principal.address,
          validUntil: String(now + 86_400),
          identityRef,
          asset: forged,
          maxTransactionValue: "100",
          maxCumulativeValue: "500",
          actions: ["0x23b872dd"],
        },
        true,
      );
      // The forged target's transferFrom emits AgentFrozen naming the victim agent's wallet.
      const data = new Interface(["function transferFrom(address,address,uint256)"]).encodeFunctionData(
        "transferFrom",
        [principal.address, victimWallet.address, 1n],
      );
      const { sent } = await keyedCall(
        "/x402/rams/execute",
        agent,
        { executorAddress: setup.executor, target: forged, data },
        true,
      );
      const receipt = (await sepolia.getTransactionReceipt(sent.txHashes[0]))!;
      expect(
        receipt.logs.some((l) => l.address.toLowerCase() === forged.toLowerCase()),
        "the forged event is on chain",
      ).to.equal(true);
      const events = (sent.outcome.events as { contract: string; event: string }[]).map(
        (e) => `${e.event}@${e.contract.toLowerCase()}`,
      );
      expect(
        events.some((e) => e.endsWith(`@${forged.toLowerCase()}`)),
        events.join(),
      ).to.equal(false);
      expect(events).to.include(`ExecutionRecorded@${registry.toLowerCase()}`);
      expect(await ramsHistory(), "nothing in the victim agent's history").to.deep.equal([]);
    });
  });

  it("a paid getter checks the payment before it says anything about the owner: a payload naming any wallet with a bad signature is a 402, and a valid payment of another wallet a 403 that does not name the owner", async () => {
    const owner = await fundedWallet(base);
    await service.services.signers.add(owner.address, { keyId });
    const { prepared } = await keyedCall("/x402/agent/register", owner, profile("Owned"));
    const agentUuid = prepared.info.agentUuid;
    const quote = quoteOf(await api.get("/get-agent-info", { agentUuid })).accepts[0];
    const forger = new Wallet(Wallet.createRandom().privateKey);
    const guesses = [owner.address, Wallet.createRandom().address];
    const answers = [];
    for (const guess of guesses) {
      // Signed by the forger, claiming to be `guess`: before the fix, a guess that was not the owner got a 403 naming
      // the owner, and the owner itself a 402: an oracle of whom the agent belongs to.
      const res = await api.get(
        "/get-agent-info",
        { agentUuid },
        { "X-PAYMENT": await payWithEthers(forger, quote, { from: guess }) },
      );
      answers.push(res.status);
      expect(JSON.stringify(res.body).toLowerCase(), guess).not.to.include(owner.address.slice(2).toLowerCase());
    }
    expect(answers).to.deep.equal([402, 402]);
    const stranger = sandbox.accounts[3];
    const res = await api.get("/get-agent-info", { agentUuid }, { "X-PAYMENT": await payWithEthers(stranger, quote) });
    status(res, 403, "a valid payment of another wallet");
    expect(JSON.stringify(res.body).toLowerCase()).not.to.include(owner.address.slice(2).toLowerCase());
    expect(res.headers.get("payment-response")).to.equal(null);
  });
});
