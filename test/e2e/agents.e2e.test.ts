import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { Contract, id as topicOf, Interface, toUtf8String, Wallet, ZeroAddress, zeroPadValue } from "ethers";
import { USDC__factory } from "../../typechain-types";
import { agentWalletTypedData } from "../../service/methods/agents/agent-set-wallet";
import { send, signTransactions, unwrap, type ApiClient as TypedClient } from "../../client/index";
import { payingClient } from "../helpers/client";
import type { Prepared, Sent } from "../helpers/flow";
import { distinctClient } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";

/**
 * The agent half through HTTP (issue: agents): ERC-8004 identity and reputation, once client-signed with a key and once
 * service-relayed and paid with x402 by a wallet without a key; the agent-token surface; the getters; and the 4xx of
 * each bad input, with no payment taken.
 */
describe("e2e: agents (ERC-8004 identity, reputation, agent tokens, getters)", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let keyed: ApiClient;
  let owner: Wallet; // client-signed agent owner (with the key)
  let rater: Wallet; // gives feedback (with the key)
  let newWallet: Wallet;
  let heir: Wallet; // receives the agent
  let payer: Wallet; // pays relayed calls, holds no key
  let stranger: Wallet; // pays, but owns nothing
  let relayer: string;
  const identity = new Interface([
    "function ownerOf(uint256) view returns (address)",
    "function getAgentWallet(uint256) view returns (address)",
    "function tokenURI(uint256) view returns (string)",
    "function getMetadata(uint256, string) view returns (bytes)",
  ]);
  const reputation = new Interface([
    "function readFeedback(uint256, address, uint64) view returns (int128, uint8, string, string, bool)",
  ]);

  const base = () => providerFor(sandbox.baseSepolia);
  const registry = () => new Contract(sandbox.deployments[84532].contracts.IdentityRegistry, identity, base());
  const reputationRegistry = () =>
    new Contract(sandbox.deployments[84532].contracts.ReputationRegistry, reputation, base());
  const usdc = () => USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, base());
  const usdcOf = async (...wallets: string[]) => Promise.all(wallets.map((w) => usdc().balanceOf(w)));

  const profile = (name: string) => ({
    name,
    description: `${name}, an agent that answers questions`,
    image: "https://example.com/agent.png",
    services: [{ name: "A2A", endpoint: "https://agent.example.com/.well-known/agent-card.json", version: "0.3.0" }],
    tags: ["qa"],
    x402Support: "true",
  });

  const ok = (res: ApiResponse, label = "") => {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 202]);
    return res.body;
  };
  const expectError = (res: ApiResponse, status: number, message: RegExp | string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    if (typeof message === "string") expect(res.body.message).to.equal(message);
    else expect(res.body.message).to.match(message);
  };

  /**
   * A client-signed call prepared on a path (facade or /prepare-transactions) with the key, signed and sent, through the
   * typed client (client/).
   */
  async function keyedCall(path: string, wallet: Wallet, body: Record<string, unknown>) {
    const prepared = unwrap(
      await keyed.typed.POST(path as "/prepare-transactions", {
        body: { signerAddress: wallet.address, executionMode: "client-signed", ...body } as never,
      }),
    ) as Prepared;
    const sent = await send(keyed.typed, prepared.txId, await signTransactions(wallet, prepared.transactions));
    expect(sent.summary.status, JSON.stringify(sent.summary)).to.equal("success");
    return { prepared, sent: sent.summary as Sent };
  }

  const paying = new Map<string, TypedClient>();
  /** The typed client paying with `who`'s USDC through @x402/fetch (one per wallet). */
  const payingAs = async (who: Wallet) => {
    if (!paying.has(who.address)) paying.set(who.address, await payingClient(service.url, who));
    return paying.get(who.address)!;
  };

  /** A service-relayed call on a facade through the typed client, free to prepare, paid at send by `who` (no key) with @x402/fetch. */
  async function relayedCall(path: string, who: Wallet, body: Record<string, unknown>) {
    const prepared = unwrap(
      await api.typed.POST(path as "/x402/agent/register", {
        body: { executionMode: "service-relayed", ...body } as never,
        headers: distinctClient(),
      }),
    ) as Prepared;
    expect(prepared.executionMode).to.equal("service-relayed");
    const sent = await send(await payingAs(who), prepared.txId);
    expect(sent.summary.status, JSON.stringify(sent.summary)).to.equal("success");
    expect(sent.settlement).to.include({ success: true });
    return { prepared, sent: sent.summary as Sent };
  }

  /** Pays a relayed send with `who` and expects a refusal before any USDC moves. */
  async function refusedRelayedSend(txId: string, who: Wallet, status: number, message: RegExp) {
    const quote = quoteOf(await api.post("/send-transactions", { txId })).accepts[0];
    const before = await usdcOf(who.address);
    const res = await api.post("/send-transactions", { txId }, { "X-PAYMENT": await payWithEthers(who, quote) });
    expectError(res, status, message);
    expect(res.headers.get("payment-response")).to.equal(null);
    expect(await usdcOf(who.address)).to.deep.equal(before);
    expect((await api.get("/get-transaction-status", { txId })).body.status).to.equal("prepared");
  }

  /** A paid getter (no key) by `who`. */
  async function paidGet(path: string, query: Record<string, string>, who: Wallet) {
    const quote = quoteOf(await api.get(path, query)).accepts[0];
    expect(quote.amount).to.equal("1"); // 0.000001 USDC
    return api.get(path, query, { "X-PAYMENT": await payWithEthers(who, quote) });
  }

  const registrationOf = async (uuid: string) => {
    const res = await fetch(`${service.url}/agents/${uuid}/registration.json`);
    expect(res.status).to.equal(200);
    return (await res.json()) as Record<string, any>;
  };

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    api = service.api;
    [owner, rater, newWallet, heir, payer, stranger] = [4, 5, 6, 7, 2, 3].map((i) => sandbox.accounts[i]);
    relayer = sandbox.accounts[RELAYER_INDEX].address;
    const { key } = await service.services.apiKeys.create({ email: "agents@e2e.test", plan: "Enterprise" });
    keyed = api.withKey(key);
    for (const w of [owner, rater, newWallet, heir, payer]) await service.services.signers.add(w.address, "all-keys");
  });
  after(async () => service?.stop());

  describe("client-signed with an API key", () => {
    let agentUuid: string;
    let agentId: string;

    it("agentRegister: info carries agentUuid, agentURI, the registries and ERC-8004; the registration file is served with its agentId", async () => {
      const { prepared, sent } = await keyedCall("/prepare-transactions", owner, {
        method: "agentRegister",
        chainId: "14a34",
        ownerEmail: "owner@agents.test",
        ...profile("Keyed agent"),
      });
      expect(prepared.info).to.include({
        standard: "ERC-8004",
        registryAddress: sandbox.deployments[84532].contracts.IdentityRegistry,
        reputationRegistryAddress: sandbox.deployments[84532].contracts.ReputationRegistry,
        chainId: "eip155:84532",
      });
      agentUuid = prepared.info.agentUuid;
      expect(prepared.info.agentURI).to.equal(`${service.url}/agents/${agentUuid}/registration.json`);
      agentId = sent.outcome.agentId;
      expect(agentId).to.match(/^\d+$/);
      expect(await registry().ownerOf(agentId)).to.equal(owner.address);
      expect(await registry().tokenURI(agentId)).to.equal(prepared.info.agentURI);
      expect(await registry().getAgentWallet(agentId)).to.equal(owner.address);
      const file = await registrationOf(agentUuid);
      expect(file).to.include({
        type: "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        name: "Keyed agent",
        image: "https://example.com/agent.png",
        x402Support: true,
        active: true,
      });
      expect(file.services).to.deep.equal(profile("x").services);
      expect(file.registrations).to.deep.equal([
        {
          agentId: Number(agentId),
          agentRegistry: `eip155:84532:${sandbox.deployments[84532].contracts.IdentityRegistry}`,
        },
      ]);
    });

    it("agentSetURI (facade /x402/agent/set-uri, client-signed): rewrites the file, keeps the other fields, emits URIUpdated", async () => {
      const { prepared } = await keyedCall("/x402/agent/set-uri", owner, {
        agentUuid,
        description: "now also writes poems",
      });
      expect(prepared.info).to.include({
        agentUuid,
        agentId,
        agentURI: `${service.url}/agents/${agentUuid}/registration.json`,
      });
      const file = await registrationOf(agentUuid);
      expect(file.description).to.equal("now also writes poems");
      expect(file.name).to.equal("Keyed agent");
    });

    it("agentSetMetadata: json, string and hex encodings; aiModelName under its own key; the reserved key is refused", async () => {
      const { prepared } = await keyedCall("/x402/agent/set-metadata", owner, {
        agentId,
        metadataKey: "tasks",
        metadataValue: '{"tasks":["qa"]}',
        metadataEncoding: "json",
        aiModelName: "gpt-x",
      });
      expect(prepared.info).to.include({ metadataKey: "tasks", metadataValue: JSON.stringify('{"tasks":["qa"]}') });
      expect(toUtf8String(await registry().getMetadata(agentId, "tasks"))).to.equal(JSON.stringify('{"tasks":["qa"]}'));
      expect(toUtf8String(await registry().getMetadata(agentId, "aiModelName"))).to.equal("gpt-x");
      await keyedCall("/x402/agent/set-metadata", owner, {
        agentUuid,
        metadataKey: "raw",
        metadataValue: "0xdeadbeef",
        metadataEncoding: "hex",
      });
      expect(await registry().getMetadata(agentId, "raw")).to.equal("0xdeadbeef");
      expectError(
        await keyed.post("/x402/agent/set-metadata", {
          signerAddress: owner.address,
          executionMode: "client-signed",
          agentUuid,
          metadataKey: "agentWallet",
          metadataValue: "x",
        }),
        400,
        /reserved/,
      );
    });

    it("feedback: give (index 1), self-feedback refused, respond, revoke; the registry agrees", async () => {
      const { sent } = await keyedCall("/x402/agent/feedback/give", rater, {
        agentId,
        value: "4.5",
        tag1: "quality",
        feedbackURI: "https://example.com/fb.json",
      });
      expect(sent.outcome).to.include({ feedbackIndex: "1", clientAddress: rater.address });
      const [value, decimals, tag1, , revoked] = await reputationRegistry().readFeedback(agentId, rater.address, 1);
      expect([value, decimals, tag1, revoked]).to.deep.equal([45n, 1n, "quality", false]);
      expectError(
        await keyed.post("/x402/agent/feedback/give", {
          signerAddress: owner.address,
          executionMode: "client-signed",
          agentId,
          value: "5",
        }),
        400,
        /Self-feedback not allowed/,
      );
      await keyedCall("/x402/agent/feedback/respond", owner, {
        agentId,
        clientAddress: rater.address,
        feedbackIndex: "1",
        responseURI: "https://example.com/thanks.json",
      });
      await keyedCall("/x402/agent/feedback/revoke", rater, { agentId, feedbackIndex: "1" });
      expect((await reputationRegistry().readFeedback(agentId, rater.address, 1))[4]).to.equal(true);
      expectError(
        await keyed.post("/x402/agent/feedback/revoke", {
          signerAddress: rater.address,
          executionMode: "client-signed",
          agentId,
          feedbackIndex: "1",
        }),
        400,
        /already revoked/,
      );
      expectError(
        await keyed.post("/x402/agent/feedback/revoke", {
          signerAddress: rater.address,
          executionMode: "client-signed",
          agentId,
          feedbackIndex: "9",
        }),
        400,
        /does not exist/,
      );
    });

    it("agentSetWallet: the new wallet's EIP-712 AgentWalletSet signature sets it; a signature by another key is refused", async () => {
      const deadline = BigInt((await base().getBlock("latest"))!.timestamp + 200);
      const typed = agentWalletTypedData(84532, sandbox.deployments[84532].contracts.IdentityRegistry, {
        agentId: BigInt(agentId),
        newWallet: newWallet.address,
        owner: owner.address,
        deadline,
      });
      const bad = await stranger.signTypedData(typed.domain, typed.types, typed.message);
      expectError(
        await keyed.post("/x402/agent/set-wallet", {
          signerAddress: owner.address,
          executionMode: "client-signed",
          agentUuid,
          newWallet: newWallet.address,
          deadline: deadline.toString(),
          signature: bad,
        }),
        400,
        /AgentWalletSet signature/,
      );
      const signature = await newWallet.signTypedData(typed.domain, typed.types, typed.message);
      await keyedCall("/x402/agent/set-wallet", owner, {
        agentUuid,
        newWallet: newWallet.address,
        deadline: deadline.toString(),
        signature,
      });
      expect(await registry().getAgentWallet(agentId)).to.equal(newWallet.address);
    });

    it("agentTransferOwnership (facade default client-signed): the heir owns it, the agent wallet is cleared", async () => {
      const prepared = ok(
        await keyed.post("/x402/agent/transfer-ownership", {
          signerAddress: owner.address,
          agentUuid,
          newOwner: heir.address,
        }),
      );
      expect(prepared.executionMode).to.equal("client-signed");
      const signedTransactions = await Promise.all(prepared.transactions.map((tx: any) => owner.signTransaction(tx)));
      expect(ok(await keyed.post("/send-transactions", { txId: prepared.txId, signedTransactions })).status).to.equal(
        "success",
      );
      expect(await registry().ownerOf(agentId)).to.equal(heir.address);
      expect(await registry().getAgentWallet(agentId)).to.equal(ZeroAddress);
      expectError(
        await keyed.post("/x402/agent/set-uri", {
          signerAddress: owner.address,
          executionMode: "client-signed",
          agentUuid,
          description: "x",
        }),
        400,
        /not the owner/,
      );
    });

    it("getters with the key: get-agents (paged), get-agent-info (file, on-chain state), get-agent-transactions (erc8004)", async () => {
      await keyedCall("/prepare-transactions", owner, { method: "agentRegister", ...profile("Second keyed agent") });
      const all = ok(await keyed.get("/get-agents", { chainId: "14a34" }));
      expect(all.total).to.equal(2);
      const first = ok(await keyed.get("/get-agents", { limit: "1", offset: "0" }));
      const second = ok(await keyed.get("/get-agents", { limit: "1", offset: "1" }));
      expect([first.agents.length, second.agents.length, first.limit, second.offset]).to.deep.equal([1, 1, 1, 1]);
      expect(first.agents[0].uuid).to.not.equal(second.agents[0].uuid);
      expect(
        ok(await keyed.get("/get-agents", { ownerWalletAddress: heir.address })).agents.map((a: any) => a.uuid),
      ).to.deep.equal([agentUuid]);
      expectError(await keyed.get("/get-agents", { limit: "0" }), 400, /^limit /);
      expectError(await keyed.get("/get-agents", { limit: "101" }), 400, /^limit /);
      expectError(await keyed.get("/get-agents", { offset: "-1" }), 400, /^offset /);

      const info = ok(await keyed.get("/get-agent-info", { agentUuid }));
      expect(info).to.include({
        agentUuid,
        agentId,
        ownerWalletAddress: heir.address,
        agentWallet: null,
        prepareTxId: info.prepareTxId,
      });
      expect(info.registrationFile.description).to.equal("now also writes poems");
      expect(info.onchainMetadata).to.include({ owner: heir.address, agentWallet: ZeroAddress });
      expect(info.onchainMetadata.metadata.aiModelName.text).to.equal("gpt-x");
      expect(ok(await keyed.get("/get-agent-info", { agentId, chainId: "84532" })).agentUuid).to.equal(agentUuid);

      const history = ok(await keyed.get("/get-agent-transactions", { agentUuid, limit: "3" }));
      expect(history.total).to.equal(9); // register, set-uri, 2 set-metadata, give, respond, revoke, set-wallet, transfer
      expect(history.transactions).to.have.length(3);
      expect(history.transactions.map((t: any) => t.method)).to.deep.equal([
        "agentTransferOwnership",
        "agentSetWallet",
        "agentRevokeFeedback",
      ]);
      for (const t of history.transactions) expect(t).to.include({ category: "erc8004", status: "success" });
      const other = api.withKey(
        (await service.services.apiKeys.create({ email: "other@agents.test", plan: "Starter" })).key,
      );
      expectError(await other.get("/get-agent-info", { agentUuid }), 404, /under this API key/);
      expect(ok(await other.get("/get-agents", {})).total).to.equal(0);
    });
  });

  describe("RAMS actions on an agent's wallet join its history", () => {
    it("freezing and unfreezing the agent wallet (ERC-8226) shows as category rams in get-agent-transactions", async () => {
      const mine = ok(await keyed.get("/get-agents", { ownerWalletAddress: owner.address })).agents[0];
      expect(mine.agentWallet).to.equal(owner.address);
      const enforcer = sandbox.accounts[7]; // the sandbox registry's enforcer
      for (const method of ["ramsFreezeAgent", "ramsUnfreezeAgent"]) {
        await keyedCall("/prepare-transactions", enforcer, { method, chainId: "11155111", agent: owner.address });
      }
      const history = ok(await keyed.get("/get-agent-transactions", { agentUuid: mine.uuid, limit: "100" }));
      const rams = history.transactions.filter((t: any) => t.category === "rams");
      expect(rams.map((t: any) => t.method)).to.deep.equal(["ramsUnfreezeAgent", "ramsFreezeAgent"]);
      expect(rams[1].details.events.map((e: any) => e.event)).to.include("AgentFrozen");
    });
  });

  describe("service-relayed and paid with x402 by a wallet without a key", () => {
    let agentUuid: string;
    let agentId: string;

    it("register: the relayer sends it and holds the NFT for the payer, who is recorded as its owner wallet", async () => {
      const [payerBefore] = await usdcOf(payer.address);
      const { prepared, sent } = await relayedCall("/x402/agent/register", payer, profile("Relayed agent"));
      agentUuid = prepared.info.agentUuid;
      agentId = sent.outcome.agentId;
      expect(await registry().ownerOf(agentId)).to.equal(relayer);
      expect(payerBefore - (await usdcOf(payer.address))[0]).to.equal(10_000n);
      const info = ok(await paidGet("/get-agent-info", { agentUuid }, payer));
      expect(info).to.include({ ownerWalletAddress: payer.address, heldByRelayer: relayer });
    });

    it("set-uri and set-metadata relayed, paid by the payer; paid by another wallet → 403 before any USDC moves", async () => {
      await relayedCall("/x402/agent/set-uri", payer, { agentUuid, description: "relayed update" });
      expect((await registrationOf(agentUuid)).description).to.equal("relayed update");
      const prepared = ok(
        await api.post(
          "/x402/agent/set-metadata",
          { agentUuid, metadataKey: "k", metadataValue: "v" },
          distinctClient(),
        ),
      );
      await refusedRelayedSend(
        prepared.txId,
        stranger,
        403,
        /Only 0x[0-9a-fA-F]{40}, for whom the service holds this agent/,
      );
      await relayedCall("/x402/agent/set-metadata", payer, { agentUuid, metadataKey: "k", metadataValue: "v" });
      expect(toUtf8String(await registry().getMetadata(agentId, "k"))).to.equal("v");
    });

    it("feedback relayed: a stranger pays for feedback on another agent and may revoke it; the owner may not pay for feedback on its own", async () => {
      const target = ok(await keyed.get("/get-agents", {})).agents[0];
      const { sent } = await relayedCall("/x402/agent/feedback/give", stranger, {
        agentId: target.agentId,
        value: "80",
        valueDecimals: "0",
      });
      expect(sent.outcome.clientAddress).to.equal(relayer);
      const revoke = ok(
        await api.post(
          "/x402/agent/feedback/revoke",
          { agentId: target.agentId, feedbackIndex: sent.outcome.feedbackIndex },
          distinctClient(),
        ),
      );
      await refusedRelayedSend(revoke.txId, payer, 403, /Only 0x/);
      await relayedCall("/x402/agent/feedback/revoke", stranger, {
        agentId: target.agentId,
        feedbackIndex: sent.outcome.feedbackIndex,
      });
      // the heir owns target: its relayed feedback on it is refused at send, before paying
      const own = ok(
        await api.post("/x402/agent/feedback/give", { agentId: target.agentId, value: "100" }, distinctClient()),
      );
      await refusedRelayedSend(own.txId, heir, 400, /Self-feedback not allowed/);
      // the relayer holds the relayed agent: relayed feedback on it is self-feedback, refused at prepare
      expectError(
        await api.post("/x402/agent/feedback/give", { agentId, value: "1" }, distinctClient()),
        400,
        /Self-feedback not allowed/,
      );
    });

    it("set-wallet relayed: the new wallet signs with owner = the relayer (the NFT holder)", async () => {
      const deadline = BigInt((await base().getBlock("latest"))!.timestamp + 200);
      const typed = agentWalletTypedData(84532, sandbox.deployments[84532].contracts.IdentityRegistry, {
        agentId: BigInt(agentId),
        newWallet: payer.address,
        owner: relayer,
        deadline,
      });
      const signature = await payer.signTypedData(typed.domain, typed.types, typed.message);
      await relayedCall("/x402/agent/set-wallet", payer, {
        agentUuid,
        newWallet: payer.address,
        deadline: deadline.toString(),
        signature,
      });
      expect(await registry().getAgentWallet(agentId)).to.equal(payer.address);
    });

    it("transfer-ownership relayed, paid by the payer: it takes the NFT; later changes are client-signed by it", async () => {
      await relayedCall("/x402/agent/transfer-ownership", payer, { agentUuid, newOwner: payer.address });
      expect(await registry().ownerOf(agentId)).to.equal(payer.address);
      const info = ok(await paidGet("/get-agent-info", { agentUuid }, payer));
      expect(info).to.include({ ownerWalletAddress: payer.address, heldByRelayer: null });
      expectError(
        await api.post("/x402/agent/set-uri", { agentUuid, description: "x" }, distinctClient()),
        400,
        /must be client-signed by the owner/,
      );
    });

    it("paid getters: the owner pays 0.000001 USDC; a wallet that is not the owner → 403 and pays nothing", async () => {
      const list = ok(await paidGet("/get-agents", { chainId: "84532", ownerWalletAddress: payer.address }, payer));
      expect(list.agents.map((a: any) => a.uuid)).to.include(agentUuid);
      const history = ok(await paidGet("/get-agent-transactions", { agentUuid }, payer));
      expect(history.transactions.map((t: any) => t.method)).to.include.members([
        "agentRegister",
        "agentSetURI",
        "agentSetMetadata",
        "agentSetWallet",
        "agentTransferOwnership",
      ]);
      for (const [path, query] of [
        ["/get-agent-info", { agentUuid }],
        ["/get-agent-transactions", { agentUuid }],
        ["/get-agents", { chainId: "84532", ownerWalletAddress: payer.address }],
      ] as const) {
        const before = await usdcOf(stranger.address);
        const res = await paidGet(path, query, stranger);
        expectError(res, 403, /not the owner/);
        expect(await usdcOf(stranger.address)).to.deep.equal(before);
      }
      expectError(await api.get("/get-agents", { chainId: "84532" }), 400, /ownerWalletAddress is required/);
    });
  });

  describe("agent tokens", () => {
    let tokenAddress: string;
    const symbol = `AT${Math.random()
      .toString(36)
      .slice(2, 6)
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, "Q")}`;

    it("create with no premint: the receipt's first zero-address Transfer log names the token", async () => {
      const { sent } = await keyedCall("/prepare-transactions", heir, {
        method: "agentCreateToken",
        chainId: "84532",
        name: "Heir token",
        symbol,
        agentWallet: heir.address,
      });
      const receipt = (await base().getTransactionReceipt(sent.txHashes[0]))!;
      const transferTopic = topicOf("Transfer(address,address,uint256)");
      const mint = receipt.logs.find((l) => l.topics[0] === transferTopic && l.topics[1] === zeroPadValue("0x", 32));
      expect(mint, "zero-address Transfer log").to.not.equal(undefined);
      tokenAddress = mint!.address;
      expect(tokenAddress).to.equal(sent.outcome.tokenAddress);
      expect(BigInt(mint!.data)).to.equal(0n);
    });

    it("mint → transfer → approve → transfer-from → burn, each client-signed; balances follow", async () => {
      const token = new Contract(
        tokenAddress,
        [
          "function balanceOf(address) view returns (uint256)",
          "function allowance(address,address) view returns (uint256)",
        ],
        base(),
      );
      const unit = 10n ** 18n;
      await keyedCall("/x402/token/mint", heir, { tokenAddress, to: rater.address, amount: "100" });
      await keyedCall("/x402/token/transfer", rater, {
        tokenAddress,
        recipientAddress: newWallet.address,
        amount: "10",
      });
      await keyedCall("/x402/token/approve", rater, { tokenAddress, spender: owner.address, amount: "20" });
      expect(await token.allowance(rater.address, owner.address)).to.equal(20n * unit);
      await keyedCall("/x402/token/transfer-from", owner, {
        tokenAddress,
        from: rater.address,
        to: heir.address,
        amount: "20",
      });
      await keyedCall("/x402/token/burn", rater, { tokenAddress, amount: "5.5" });
      expect(await token.balanceOf(rater.address)).to.equal((645n * unit) / 10n);
      expect(await token.balanceOf(newWallet.address)).to.equal(10n * unit);
      expect(await token.balanceOf(heir.address)).to.equal(20n * unit);
      expectError(
        await keyed.post("/x402/token/mint", {
          signerAddress: rater.address,
          tokenAddress,
          to: rater.address,
          amount: "1",
        }),
        400,
        /not the owner/,
      );
      expectError(
        await keyed.post("/x402/token/burn", { signerAddress: rater.address, tokenAddress, amount: "1000" }),
        400,
        /less than/,
      );
      expectError(
        await keyed.post("/x402/token/mint", {
          signerAddress: heir.address,
          tokenAddress,
          to: rater.address,
          amount: "1",
          decimals: "6",
        }),
        400,
        /^decimals 6 does not match/,
      );
    });

    it("relayed transfer: the payer's own tokens move through its allowance to the relayer; without enough allowance → refused before paying", async () => {
      const token = new Contract(tokenAddress, ["function balanceOf(address) view returns (uint256)"], base());
      const prepared = ok(
        await api.post("/x402/token/transfer", { tokenAddress, to: stranger.address, amount: "3" }, distinctClient()),
      );
      await refusedRelayedSend(prepared.txId, rater, 400, /allows 0x[0-9a-fA-F]{40} to spend 0/);
      await keyedCall("/x402/token/approve", rater, { tokenAddress, spenderAddress: relayer, amount: "3" });
      await relayedCall("/x402/token/transfer", rater, { tokenAddress, to: stranger.address, amount: "3" });
      expect(await token.balanceOf(stranger.address)).to.equal(3n * 10n ** 18n);
    });

    it("the heir's agent shows its token's activity (category agentToken)", async () => {
      const agents = ok(await keyed.get("/get-agents", { ownerWalletAddress: heir.address })).agents;
      const history = ok(await keyed.get("/get-agent-transactions", { agentUuid: agents[0].uuid, limit: "100" }));
      const tokenOps = history.transactions.filter((t: any) => t.category === "agentToken").map((t: any) => t.method);
      expect(tokenOps).to.include.members(["agentCreateToken", "agentMintToken"]);
    });
  });

  describe("bad input: a clear 4xx, and no payment taken", () => {
    // Anonymous prepares are limited per signer wallet: rotate over whitelisted spare accounts.
    let spare = 0;
    const nextSigner = () => sandbox.accounts[10 + (spare++ % 10)];
    before(async () => {
      for (let i = 10; i < 20; i++) await service.services.signers.add(sandbox.accounts[i].address, "all-keys");
    });
    const halfQuote = async () =>
      quoteOf(
        await api.post(
          "/x402/token/create",
          {
            signerAddress: nextSigner().address,
            executionMode: "client-signed",
            name: "Q",
            symbol: "QQQ",
            agentWallet: payer.address,
          },
          distinctClient(),
        ),
      ).accepts[0];
    const paidPrepare = async (path: string, body: Record<string, unknown>) => {
      const quote = await halfQuote();
      const before = await usdcOf(payer.address);
      const res = await api.post(path, body, { ...distinctClient(), "X-PAYMENT": await payWithEthers(payer, quote) });
      expect(res.headers.get("payment-response")).to.equal(null);
      expect(await usdcOf(payer.address)).to.deep.equal(before);
      return res;
    };
    const clientSigned = () => ({ signerAddress: nextSigner().address, executionMode: "client-signed" });

    it("no image → 400 'image is required'", async () => {
      const { image: _image, ...noImage } = profile("No image");
      expectError(
        await paidPrepare("/x402/agent/register", { ...clientSigned(), ...noImage }),
        400,
        "image is required",
      );
      expectError(await api.post("/x402/agent/register", noImage, distinctClient()), 400, "image is required");
    });
    it("bad symbol → 400 naming symbol", async () => {
      expectError(
        await paidPrepare("/x402/token/create", {
          ...clientSigned(),
          name: "Bad",
          symbol: "bad-symbol",
          agentWallet: payer.address,
        }),
        400,
        /^symbol must match/,
      );
    });
    it("wrong chain (Sepolia) → 400", async () => {
      expectError(
        await paidPrepare("/x402/agent/register", { ...clientSigned(), chainId: "aa36a7", ...profile("Wrong chain") }),
        400,
        /runs on chain 8453 or 84532 only/,
      );
    });
    it("unknown agentUuid → 400 'A stored tokenized agent reference is required via agentUuid or agentId'", async () => {
      expectError(
        await paidPrepare("/x402/agent/set-uri", { ...clientSigned(), agentUuid: randomUUID(), name: "x" }),
        400,
        "A stored tokenized agent reference is required via agentUuid or agentId",
      );
    });
    it("feedback on one's own agent → 400 Self-feedback not allowed", async () => {
      const mine = ok(await keyed.get("/get-agents", { ownerWalletAddress: heir.address })).agents[0];
      const quote = await halfQuote();
      const before = await usdcOf(heir.address);
      const res = await api.post(
        "/x402/agent/feedback/give",
        { signerAddress: heir.address, executionMode: "client-signed", agentId: mine.agentId, value: "5" },
        { ...distinctClient(), "X-PAYMENT": await payWithEthers(heir, quote) },
      );
      expectError(res, 400, /Self-feedback not allowed/);
      expect(await usdcOf(heir.address)).to.deep.equal(before);
    });
    it("mintToken sent as agentMintToken with security-token fields is the security-token mintToken (key-only)", async () => {
      const res = await api.post("/prepare-transactions", {
        method: "agentMintToken",
        chainId: "aa36a7",
        signerAddress: owner.address,
        tokenSymbol: "NOPE",
        userToMint: [{ investorEmail: "inv@agents.test", amount: "1" }],
      });
      expectError(res, 401, "API key is required for this method");
      const withKey = await keyed.post("/prepare-transactions", {
        method: "agentMintToken",
        chainId: "aa36a7",
        signerAddress: owner.address,
        tokenSymbol: "NOPE",
        userToMint: [{ investorEmail: "inv@agents.test", amount: "1" }],
      });
      expectError(withKey, 400, "No company found with this token symbol");
      const burn = await keyed.post("/prepare-transactions", {
        method: "agentBurnToken",
        chainId: "aa36a7",
        signerAddress: owner.address,
        tokenSymbol: "NOPE",
        amount: "1",
        investorEmail: "inv@agents.test",
      });
      expectError(burn, 400, "No company found with this token symbol");
    });
  });
});
