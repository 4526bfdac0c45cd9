import { expect } from "chai";
import { JsonRpcProvider, Wallet, id as keccakId } from "ethers";
import { RAMS_COMPLIANCE_OWNER_INDEX, RAMS_ENFORCER_INDEX } from "../../scripts/lib/sandbox";
import { parseSelectorSpec, setupExecutor } from "../../service/operator/rams-setup";
import { runAdminCommand } from "../../service/operator/commands";
import { SecurityToken__factory } from "../../typechain-types";
import { execute } from "../helpers/flow";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";

/**
 * RAMS (ERC-8226) on a security token tokenized through this API: an agent holding a mandate moves the principal's
 * tokens through the principal's AgentExecutor, and the token's own ERC-7943 rules (whitelist, frozen amounts, pause)
 * refuse what they refuse, at prepare with the token's decoded error. The flow of test/e2e/rams.e2e.test.ts, whose
 * asset is the reference's test token, on ours.
 */
describe("e2e: RAMS mandates on our SecurityToken", function () {
  this.timeout(240_000);
  const SEPOLIA = 11155111;
  const chainId = "aa36a7";
  const symbol = "RAMT";
  const identityRef = keccakId("kyc:rams-security-token-principal");

  let sandbox: Sandbox;
  let service: TestService;
  let keyed: ApiClient;
  let provider: JsonRpcProvider;
  let issuer: Wallet, complianceOwner: Wallet, principal: Wallet, agent: Wallet, recipient: Wallet, stranger: Wallet;
  let tokenAddress: string;
  let executor: string;

  const ok = (res: ApiResponse, label: string) => {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 202]);
    return res.body;
  };
  /** A keyed, client-signed call of a RAMS facade (answers in `data`), prepared, signed and sent. */
  async function ramsCall(path: string, wallet: Wallet, body: Record<string, unknown>) {
    const prepared = ok(await keyed.post(path, { chainId, signerAddress: wallet.address, ...body }), path).data;
    const signedTransactions = await Promise.all(prepared.transactions.map((tx: any) => wallet.signTransaction(tx)));
    const sent = ok(await keyed.post("/send-transactions", { txId: prepared.txId, signedTransactions }), "send");
    expect(sent.status, JSON.stringify(sent)).to.equal("success");
    return { prepared, sent };
  }
  const executeBody = (amount: string, to = recipient.address) => ({
    signerAddress: agent.address,
    chainId,
    asset: tokenAddress,
    from: principal.address,
    to,
    amount,
  });
  const refusedExecute = async (amount: string, message: RegExp, to?: string) => {
    const res = await keyed.post("/x402/rams/execute", executeBody(amount, to));
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.message).to.match(message);
  };
  const fresh = async () => {
    const wallet = Wallet.createRandom();
    await sandbox.sepolia.provider.request({
      method: "hardhat_setBalance",
      params: [wallet.address, "0x8ac7230489e80000"],
    });
    await service.services.signers.add(wallet.address, "all-keys");
    return new Wallet(wallet.privateKey, provider);
  };

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    provider = providerFor(sandbox.sepolia);
    const a = sandbox.accounts;
    [issuer, complianceOwner] = [a[1], a[RAMS_COMPLIANCE_OWNER_INDEX]];
    const { key } = await service.services.apiKeys.create({ email: "rams-token@e2e.test", plan: "Enterprise" });
    keyed = service.api.withKey(key);
    for (const w of [issuer, complianceOwner]) await service.services.signers.add(w.address, "all-keys");
    [principal, agent, recipient, stranger] = [await fresh(), await fresh(), await fresh(), await fresh()];

    // The issuer tokenizes through the API; the principal holds 10,000 tokens, the recipient is whitelisted.
    await execute(keyed, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "issuer@ramt.test",
      name: "RAMS Token Holdings",
      tokenSymbol: symbol,
      decimals: 0,
      preMints: [{ amount: "10000" }, { amount: "0" }],
      initialHolders: [{ walletAddress: principal.address }, { walletAddress: recipient.address }],
    });
    tokenAddress = (await keyed.get("/get-tokenizer-info", { tokenSymbol: symbol })).body.tokenAddress;

    // The compliance provider's owner makes the principal eligible; the operator sets up its executor.
    await ramsCall("/x402/rams/grant-principal", complianceOwner, { principal: principal.address, identityRef });
    const setup = await setupExecutor({
      provider,
      chainId: SEPOLIA,
      registry: sandbox.deployments[SEPOLIA].contracts.AgentMandate,
      complianceProvider: sandbox.deployments[SEPOLIA].contracts.ComplianceProvider,
      principal: principal.address,
      selectors: [parseSelectorSpec("transferFrom:2")],
      asset: tokenAddress,
      enforcer: sandbox.accounts[RAMS_ENFORCER_INDEX].address,
      keys: { admin: sandbox.accounts[0], principal },
    });
    executor = setup.executor;
    await runAdminCommand(service.services, {
      command: "rams.executors.record",
      chainId: SEPOLIA,
      executor,
      registry: setup.registry,
      principal: setup.principal,
      owner: setup.owner,
    });

    // The principal grants the agent a mandate over the token: 1000 per transaction, 1500 in all.
    await ramsCall("/x402/rams/grant-mandate", principal, {
      agent: agent.address,
      principal: principal.address,
      validUntil: String((await provider.getBlock("latest"))!.timestamp + 86_400),
      identityRef,
      asset: tokenAddress,
      maxTransactionValue: "1000",
      maxCumulativeValue: "1500",
      actions: ["0x23b872dd"],
    });
  });
  after(async () => {
    provider?.destroy();
    await service?.stop();
  });

  it("the agent moves the principal's tokens within its mandate; the token's whitelist, freezes and pause refuse at prepare", async () => {
    const token = SecurityToken__factory.connect(tokenAddress, provider);
    const done = await ramsCall("/x402/rams/execute", agent, {
      asset: tokenAddress,
      from: principal.address,
      to: recipient.address,
      amount: "400",
    });
    expect(done.sent.outcome.events.find((e: any) => e.event === "ExecutionRecorded").args).to.include({
      agent: agent.address,
      amount: "400",
      cumulativeUsed: "400",
    });
    expect(await token.balanceOf(recipient.address)).to.equal(400n);

    // The token's own rules, decoded from the executor's CallFailed.
    await refusedExecute("10", /ERC7943CannotReceive\(/, stranger.address);
    await execute(keyed, issuer, {
      method: "freezeTokens",
      chainId,
      tokenSymbol: symbol,
      investorAddress: principal.address,
      amount: "9500",
    });
    await refusedExecute("200", /ERC7943InsufficientUnfrozenBalance\(/);
    await execute(keyed, issuer, {
      method: "unfreezeTokens",
      chainId,
      tokenSymbol: symbol,
      investorAddress: principal.address,
      amount: "9500",
    });
    await execute(keyed, issuer, { method: "pauseToken", chainId, tokenSymbol: symbol });
    await refusedExecute("200", /EnforcedPause\(/);
    await execute(keyed, issuer, { method: "unpauseToken", chainId, tokenSymbol: symbol });

    // And the mandate's own caps still hold on top of the token's rules.
    await refusedExecute("1001", /per-transaction cap 1000/);
    await ramsCall("/x402/rams/execute", agent, {
      asset: tokenAddress,
      from: principal.address,
      to: recipient.address,
      amount: "1000",
    });
    await refusedExecute("200", /cumulative/i);
    expect(await token.balanceOf(recipient.address)).to.equal(1400n);
    expect(
      (await keyed.get("/get-holders", { tokenSymbol: symbol })).body.holders.map((h: any) => [h.address, h.balance]),
    ).to.deep.equal([
      [principal.address, "8600"],
      [recipient.address, "1400"],
    ]);
  });
});
