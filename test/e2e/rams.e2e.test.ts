import { expect } from "chai";
import { JsonRpcProvider, TypedDataEncoder, verifyTypedData, Wallet, ZeroHash, id as keccakId } from "ethers";
import { RAMS_COMPLIANCE_OWNER_INDEX, RAMS_ENFORCER_INDEX } from "../../scripts/lib/sandbox";
import { parseSelectorSpec, setupExecutor } from "../../service/operator/rams-setup";
import { runAdminCommand } from "../../service/operator/commands";
import {
  AgentExecutor__factory,
  AgentMandate__factory,
  ComplianceProvider__factory,
  ERC1271WalletMock__factory,
  MisbehavingComplianceProvider__factory,
  RegulatedTokenMock__factory,
  USDC__factory,
  type RegulatedTokenMock,
} from "../../typechain-types";
import { ramsPrepareSigned, send } from "../../client/index";
import { payingClient } from "../helpers/client";
import { distinctClient } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";
import { decodePaymentResponse, payWithEthers, quoteOf } from "../helpers/x402";

/**
 * RAMS (ERC-8226) through HTTP on the local Sepolia chain: the issue's "Done when" flow in one test, then one test per
 * pre-check, input rule, relay rule and read. Real HTTP, real chain (the shared sandbox), real database; the executor
 * is set up with the operator command's code (service/operator/rams-setup.ts).
 */
describe("e2e: RAMS (ERC-8226 mandates, compliance, executor)", function () {
  this.timeout(240_000);
  const SEPOLIA = 11155111;
  const TRANSFER_FROM = "0x23b872dd";
  const TRANSFER_FROM_ACTION = TRANSFER_FROM + "0".repeat(56);
  const RAMS_READ_PRICE = "1000"; // 0.001 USDC
  const identityRef = keccakId("kyc:rams-e2e-principal");

  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let keyed: ApiClient;
  let provider: JsonRpcProvider;
  let admin: Wallet; // #0: registry admin, token admin
  let complianceOwner: Wallet; // #6
  let enforcer: Wallet; // #7
  let payer: Wallet; // #3: pays with x402 (USDC on Base Sepolia), holds no key
  let principal: Wallet;
  let agent: Wallet;
  let operator: Wallet;
  let recipient: Wallet;
  let stranger: Wallet;
  let token: RegulatedTokenMock;
  let tokenAddress: string;
  let registry: string;
  let complianceProvider: string;
  let executor: string;

  const ok = (res: ApiResponse, label = "") => {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 202]);
    return res.body;
  };
  const expectError = (res: ApiResponse, status: number, message: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.message, JSON.stringify(res.body)).to.match(message);
    expect(res.body.error.message).to.equal(res.body.message);
    return res.body.error;
  };
  const now = async () => (await provider.getBlock("latest"))!.timestamp;
  const usdc = () => USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, providerFor(sandbox.baseSepolia));
  const usdcOf = (address: string) => usdc().balanceOf(address);
  const mandateContract = () => AgentMandate__factory.connect(registry, provider);

  /** A keyed, client-signed prepare on `path`; facades answer in `data`. */
  async function keyedPrepare(path: string, wallet: Wallet, body: Record<string, unknown>) {
    const res = await keyed.post(path, { signerAddress: wallet.address, ...body });
    const answer = ok(res, path);
    return path.startsWith("/x402/rams/") ? answer.data : answer;
  }
  async function sendSigned(prepared: { txId: string; transactions: any[] }, wallet: Wallet) {
    const signedTransactions = await Promise.all(prepared.transactions.map((tx: any) => wallet.signTransaction(tx)));
    const sent = ok(await keyed.post("/send-transactions", { txId: prepared.txId, signedTransactions }), "send");
    expect(sent.status, JSON.stringify(sent)).to.equal("success");
    return sent;
  }
  async function keyedCall(path: string, wallet: Wallet, body: Record<string, unknown>) {
    const prepared = await keyedPrepare(path, wallet, body);
    return { prepared, sent: await sendSigned(prepared, wallet) };
  }
  /** A keyed RAMS read: 200 with the body in `data`. */
  async function read(path: string, query: Record<string, string | undefined>) {
    const body = ok(await keyed.get(path, { chainId: "aa36a7", ...query }), path);
    expect(Object.keys(body)).to.deep.equal(["data"]);
    return body.data;
  }
  const mandateOf = (a: Wallet | string, p: Wallet | string = principal) =>
    read("/rams/mandate", {
      agent: typeof a === "string" ? a : a.address,
      principal: typeof p === "string" ? p : p.address,
    });
  const canExecute = (a: Wallet, amount: string, extra: Record<string, string> = {}) =>
    read("/rams/can-execute", {
      agent: a.address,
      principal: principal.address,
      asset: tokenAddress,
      amount,
      selector: TRANSFER_FROM,
      ...extra,
    });

  /** The grant-mandate parameters of `a` (caps 1000 per transaction, 1500 cumulative). */
  const grantBody = async (a: { address: string }, extra: Record<string, unknown> = {}) => ({
    chainId: "aa36a7",
    agent: a.address,
    principal: principal.address,
    validUntil: String((await now()) + 86_400),
    identityRef,
    asset: tokenAddress,
    maxTransactionValue: "1000",
    maxCumulativeValue: "1500",
    actions: [TRANSFER_FROM],
    ...extra,
  });
  /** A direct grant by the principal, keyed and client-signed. */
  const grantDirect = async (a: { address: string }, extra: Record<string, unknown> = {}) =>
    keyedCall("/x402/rams/grant-mandate", principal, await grantBody(a, extra));

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    api = service.api;
    provider = providerFor(sandbox.sepolia);
    const a = sandbox.accounts;
    [admin, complianceOwner, enforcer, payer] = [a[0], a[RAMS_COMPLIANCE_OWNER_INDEX], a[RAMS_ENFORCER_INDEX], a[3]];
    [principal, agent, operator, recipient, stranger] = [a[12], a[13], a[14], a[15], a[16]];
    registry = sandbox.deployments[SEPOLIA].contracts.AgentMandate;
    complianceProvider = sandbox.deployments[SEPOLIA].contracts.ComplianceProvider;
    const { key } = await service.services.apiKeys.create({ email: "rams@e2e.test", plan: "Enterprise" });
    keyed = api.withKey(key);
    for (const w of [complianceOwner, enforcer, principal, agent, operator, a[17], a[18]])
      await service.services.signers.add(w.address, "all-keys");

    // A regulated (ERC-7943) asset: the principal may send, the recipient may receive, the stranger may not.
    const tokenAdmin = admin.connect(provider);
    token = await new RegulatedTokenMock__factory(tokenAdmin).deploy("Regulated", "RWA", admin.address);
    await token.waitForDeployment();
    tokenAddress = await token.getAddress();
    for (const tx of [
      () => token.changeSendWhitelist(principal.address, true),
      () => token.changeReceiveWhitelist(principal.address, true),
      () => token.changeReceiveWhitelist(recipient.address, true),
      () => token.mint(principal.address, 100_000n),
    ])
      await (await tx()).wait();

    // The operator's executor set-up (npm run admin -- rams setup-executor), with the principal's key for its approval.
    const setup = await setupExecutor({
      provider,
      chainId: SEPOLIA,
      registry,
      complianceProvider,
      principal: principal.address,
      selectors: [parseSelectorSpec("transferFrom:2")],
      asset: tokenAddress,
      enforcer: enforcer.address,
      keys: { admin, principal },
    });
    expect(setup.steps.map((s) => [s.name, s.status])).to.deep.equal([
      ["deploy-executor", "done"],
      ["grant-recorder-role", "done"],
      ["set-action", "done"],
      ["principal-approval", "done"],
      ["enforcer", "already"], // the sandbox gave #7 ENFORCER_ROLE
      ["grant-principal", "skipped"], // done through the API below
    ]);
    executor = setup.executor;
    await runAdminCommand(service.services, {
      command: "rams.executors.record",
      chainId: SEPOLIA,
      executor,
      registry: setup.registry,
      principal: setup.principal,
      owner: setup.owner,
    });
  });
  after(async () => {
    provider?.destroy();
    await service?.stop();
  });

  it("Done when: grant-principal → typed data → signed → relayed grant paid with x402 → execute within caps → over the cap refused → freeze / unfreeze → extend keeps cumulativeUsed → an operator revokes; every read follows", async () => {
    // 1. The compliance provider's owner makes the principal eligible (facade, client-signed, response in data).
    const nonPrincipal = await read("/rams/compliance-status", { principal: principal.address, identityRef });
    expect(nonPrincipal).to.include({
      eligible: false,
      reason: "IDENTITY_NOT_FOUND",
      reasonCode: 6,
      expiresAt: 0,
      complianceProviderAddress: complianceProvider,
    });
    const grantPrincipal = await keyedPrepare("/x402/rams/grant-principal", complianceOwner, {
      principal: principal.address,
      identityRef,
    });
    expect(grantPrincipal.info).to.include({
      contract: complianceProvider,
      mode: "direct",
      principal: principal.address,
      identityRef,
      expiresAt: 0,
    });
    await sendSigned(grantPrincipal, complianceOwner);
    expect(await read("/rams/compliance-status", { principal: principal.address, identityRef })).to.deep.equal({
      chainId: "11155111",
      complianceProviderAddress: complianceProvider,
      principal: principal.address,
      identityRef,
      eligible: true,
      reasonCode: 0,
      reason: "COMPLIANT",
      expiresAt: 0,
    });
    expect((await mandateOf(agent)).status).to.equal("none");

    // 2. The typed client's RAMS round trip, by a client without a key that pays with x402 (@x402/fetch): typed data for
    //    the parameters (a paid read) → signed as is by the principal → the grant prepared relayed on its facade
    //    (brickken-relayed, echoed), free to prepare.
    const params = await grantBody(agent);
    const paying = await payingClient(service.url, payer);
    const readPaid = await usdcOf(payer.address);
    const {
      typedData: typed,
      signature,
      prepared: relayed,
    } = await ramsPrepareSigned(
      paying,
      "grant-mandate",
      params,
      principal,
      { executionMode: "brickken-relayed" },
      distinctClient(),
    );
    expect(readPaid - (await usdcOf(payer.address))).to.equal(BigInt(RAMS_READ_PRICE));
    expect(typed).to.include({
      signer: principal.address,
      nonce: "0",
      operation: "grant-mandate",
      agentMandateAddress: registry,
    });
    expect(Number(typed.deadline) - (await now())).to.be.within(3590, 3600);
    expect(typed.typedData.domain).to.deep.equal({
      name: "RAMS",
      version: "1",
      chainId: SEPOLIA,
      verifyingContract: registry,
    });
    expect(typed.typedData.primaryType).to.equal("GrantMandate");
    expect(Object.keys(typed.typedData.types)).to.deep.equal(["GrantMandate"]);
    expect(typed.typedData.message).to.include({
      maxCumulativeValue: "1500",
      validFrom: "0",
      metadata: ZeroHash,
      complianceProvider,
      nonce: "0",
    });
    expect(typed.typedData.message.actions).to.deep.equal([TRANSFER_FROM_ACTION]);
    expect(typed.typedDataId).to.equal(
      TypedDataEncoder.hash(typed.typedData.domain, typed.typedData.types, typed.typedData.message),
    );
    expect(verifyTypedData(typed.typedData.domain, typed.typedData.types, typed.typedData.message, signature)).to.equal(
      principal.address,
    );
    // The same payload fetched with caps in 0x hex is the same message.
    // (Same deadline: the default one moves with the chain's clock, which ticks every second.)
    const hexCaps = await read("/rams/typed-data/grant-mandate", {
      ...params,
      actions: TRANSFER_FROM,
      maxCumulativeValue: "0x5dc",
      deadline: typed.deadline,
    });
    expect(hexCaps.typedDataId).to.equal(typed.typedDataId);

    expect(relayed.executionMode).to.equal("brickken-relayed");
    expect(relayed.info).to.include({
      contract: registry,
      mode: "signature",
      eip712Nonce: "0",
      deadline: typed.deadline,
    });
    expect(relayed.transactions[0].from).to.equal(sandbox.accounts[RELAYER_INDEX].address);
    expect(relayed.x402Requirements?.amount).to.equal("10000");

    // 3. The relayed send, paid by a wallet without a key through @x402/fetch (the typed client's x402Fetch).
    const payerBefore = await usdcOf(payer.address);
    const sent = await send(paying, relayed.txId);
    expect(sent.summary.status, JSON.stringify(sent.summary)).to.equal("success");
    expect(sent.settlement).to.include({ success: true });
    expect(payerBefore - (await usdcOf(payer.address))).to.equal(10_000n);
    expect((sent.summary.outcome!.events as { event: string }[]).map((e) => e.event)).to.deep.equal([
      "MandateGranted",
      "ActionEnabled",
    ]);

    let mandate = await mandateOf(agent);
    expect(mandate).to.include({
      chainId: "11155111",
      agentMandateAddress: registry,
      agent: agent.address,
      principal: principal.address,
      status: "active",
      frozen: false,
      nonce: "1",
    });
    expect(mandate.mandate).to.deep.include({
      agent: agent.address,
      principal: principal.address,
      complianceProvider,
      asset: tokenAddress,
      validFrom: 0,
      validUntil: Number(params.validUntil),
      revoked: false,
      identityRef,
      metadata: ZeroHash,
      maxTransactionValue: "1000",
      maxCumulativeValue: "1500",
      cumulativeUsed: "0",
      remainingCumulativeValue: "1500",
      unlimitedTransactionValue: false,
      unlimitedCumulativeValue: false,
    });
    expect(await read("/rams/status", { agent: agent.address, principal: principal.address })).to.deep.equal({
      chainId: "11155111",
      agentMandateAddress: registry,
      agent: agent.address,
      principal: principal.address,
      isFrozen: false,
      nonce: "1",
      operator: null,
      isOperator: null,
    });
    const replay = await api.post(
      "/x402/rams/grant-mandate",
      { ...params, signature, deadline: typed.deadline, executionMode: "service-relayed" },
      distinctClient(),
    );
    expectError(replay, 400, /already holds an active mandate/);

    // 4. The agent executes a transferFrom within the caps through the executor (helper mode, default executor).
    let check = await canExecute(agent, "400");
    expect(check).to.include({
      canExecute: true,
      allowed: true,
      reason: null,
      status: "active",
      frozen: false,
      action: TRANSFER_FROM_ACTION,
      selector: TRANSFER_FROM,
      amount: "400",
    });
    const exec = await keyedCall("/x402/rams/execute", agent, {
      asset: tokenAddress,
      from: principal.address,
      to: recipient.address,
      amount: "400",
    });
    expect(exec.prepared.info).to.include({
      contract: executor,
      mode: "direct",
      executorAddress: executor,
      agentMandateAddress: registry,
      principal: principal.address,
      agent: agent.address,
      selector: TRANSFER_FROM,
      amount: "400",
      hasAmount: true,
      amountIndex: 2,
    });
    expect(exec.sent.outcome.events.find((e: any) => e.event === "ExecutionRecorded").args).to.include({
      agent: agent.address,
      amount: "400",
      cumulativeUsed: "400",
    });
    expect(await token.balanceOf(recipient.address)).to.equal(400n);
    mandate = await mandateOf(agent);
    expect(mandate.mandate).to.include({ cumulativeUsed: "400", remainingCumulativeValue: "1100" });

    // 5. Above the per-transaction cap: refused at prepare with its reason.
    const over = expectError(
      await keyed.post("/x402/rams/execute", {
        signerAddress: agent.address,
        asset: tokenAddress,
        from: principal.address,
        to: recipient.address,
        amount: "1001",
      }),
      400,
      /per-transaction cap 1000/,
    );
    expect(over.details).to.include({ reason: "exceeds_transaction_cap", check: "transactionCap", canExecute: false });
    check = await canExecute(agent, "1001");
    expect(check).to.include({ canExecute: false, allowed: false });
    expect(check.reason.code).to.equal("exceeds_transaction_cap");
    expect(check.checks.transactionCap).to.deep.include({ pass: false, amount: "1001", maxTransactionValue: "1000" });

    // 6. Freeze: can-execute is false and says why; execute is refused; unfreeze restores it.
    const freeze = await keyedCall("/prepare-transactions", enforcer, {
      method: "ramsFreezeAgent",
      chainId: "aa36a7",
      agent: agent.address,
    });
    expect(freeze.prepared.info).to.include({ contract: registry, mode: "direct" });
    check = await canExecute(agent, "100");
    expect(check).to.include({ canExecute: false, allowed: false, frozen: true });
    expect(check.reason).to.deep.equal({
      check: "freeze",
      code: "frozen",
      message: `agent ${agent.address} is frozen by an enforcer`,
    });
    expect(check.checks.freeze).to.deep.equal({ pass: false, frozen: true });
    expect((await mandateOf(agent)).frozen).to.equal(true);
    expect((await read("/rams/status", { agent: agent.address, principal: principal.address })).isFrozen).to.equal(
      true,
    );
    expectError(
      await keyed.post("/x402/rams/execute", {
        signerAddress: agent.address,
        asset: tokenAddress,
        from: principal.address,
        to: recipient.address,
        amount: "100",
      }),
      400,
      /is frozen/,
    );
    await keyedCall("/x402/rams/unfreeze-agent", enforcer, { agent: agent.address });
    check = await canExecute(agent, "100");
    expect(check).to.include({ canExecute: true, allowed: true, reason: null, frozen: false });

    // 7. Extend (direct by the principal): validUntil moves, cumulativeUsed is kept, the nonce is consumed as on the
    //    signature path (info shows the nonce before the call).
    const newValidUntil = Number(params.validUntil) + 86_400;
    const extend = await keyedCall("/x402/rams/extend-mandate", principal, {
      agent: agent.address,
      principal: principal.address,
      newValidUntil: String(newValidUntil),
    });
    expect(extend.prepared.info).to.include({ mode: "direct", eip712Nonce: "1", cumulativeUsed: "400" });
    mandate = await mandateOf(agent);
    expect(mandate.mandate).to.include({ validUntil: newValidUntil, cumulativeUsed: "400" });
    expect(mandate).to.include({ status: "active", nonce: "2" });

    // 8. The principal approves an operator; the operator revokes directly.
    await keyedCall("/x402/rams/set-operator", principal, {
      principal: principal.address,
      operator: operator.address,
      approved: true,
    });
    expect(
      await read("/rams/status", { agent: agent.address, principal: principal.address, operator: operator.address }),
    ).to.include({ operator: operator.address, isOperator: true, nonce: "3" });
    const revoke = await keyedCall("/x402/rams/revoke-mandate", operator, {
      agent: agent.address,
      principal: principal.address,
    });
    expect(revoke.prepared.info).to.include({ mode: "direct", statusBefore: "active", eip712Nonce: "3" });
    expect(revoke.sent.outcome.events[0]).to.deep.include({
      event: "MandateRevoked",
      args: { agent: agent.address, principal: principal.address, revokedBy: operator.address },
    });
    mandate = await mandateOf(agent);
    expect(mandate.status).to.equal("revoked");
    expect(mandate.nonce).to.equal("4"); // the operator's direct revoke consumed the principal's nonce
    expect(mandate.mandate).to.include({ revoked: true, cumulativeUsed: "400" });
    check = await canExecute(agent, "100");
    expect(check).to.include({ canExecute: false, status: "revoked" });
    expect(check.reason.code).to.equal("revoked");
    expectError(
      await keyed.post("/x402/rams/execute", {
        signerAddress: agent.address,
        asset: tokenAddress,
        from: principal.address,
        to: recipient.address,
        amount: "1",
        executorAddress: executor,
      }),
      400,
      /revoked/,
    );
    expect(await mandateContract().isOperator(principal.address, operator.address)).to.equal(true);
  });

  describe("prepare responses", () => {
    it("/prepare-transactions answers a RAMS method unwrapped; its facade wraps transactions, txId and info in data", async () => {
      const body = {
        chainId: "aa36a7",
        signerAddress: complianceOwner.address,
        principal: stranger.address,
        identityRef: keccakId("x"),
      };
      const plain = ok(await keyed.post("/prepare-transactions", { method: "ramsGrantPrincipal", ...body }));
      expect(plain).to.have.keys(["txId", "transactions", "info", "executionMode"]);
      const byPath = ok(await keyed.post("/prepare-transactions/ramsGrantPrincipal", body));
      expect(byPath).to.have.property("txId");
      const facade = ok(await keyed.post("/x402/rams/grant-principal", body));
      expect(Object.keys(facade)).to.deep.equal(["data"]);
      expect(facade.data).to.include.keys(["txId", "transactions", "info", "executionMode"]);
      expect(facade.data.executionMode).to.equal("client-signed");
      expect(facade.data.transactions[0]).to.include({
        from: complianceOwner.address,
        to: complianceProvider,
        chainId: SEPOLIA,
        type: 2,
      });
    });

    it("chainId defaults to 11155111; another chain → 400", async () => {
      const res = ok(
        await keyed.post("/x402/rams/grant-principal", {
          signerAddress: complianceOwner.address,
          principal: stranger.address,
          identityRef: keccakId("x"),
        }),
      );
      expect(res.data.info.chainId).to.equal(SEPOLIA);
      expectError(
        await keyed.post("/x402/rams/grant-principal", {
          chainId: "84532",
          signerAddress: complianceOwner.address,
          principal: stranger.address,
          identityRef: keccakId("x"),
        }),
        400,
        /runs on chain 11155111 only/,
      );
    });

    it("x402 without a key: a client-signed RAMS prepare costs half the write price; a failing pre-check answers 400 and takes nothing", async () => {
      const signer = sandbox.accounts[18];
      const body = { signerAddress: signer.address, agent: signer.address };
      const challenge = await api.post(
        "/x402/rams/freeze-agent",
        { signerAddress: enforcer.address, agent: stranger.address },
        distinctClient(),
      );
      const quote = quoteOf(challenge).accepts[0];
      expect(quote.amount).to.equal("5000");
      const before = await usdcOf(payer.address);
      const refused = await api.post("/x402/rams/freeze-agent", body, {
        ...distinctClient(),
        "X-PAYMENT": await payWithEthers(payer, quote),
      });
      expectError(refused, 400, /does not hold ENFORCER_ROLE/);
      expect(refused.headers.get("payment-response")).to.equal(null);
      expect(await usdcOf(payer.address)).to.equal(before);
      const paid = await api.post(
        "/x402/rams/freeze-agent",
        { signerAddress: enforcer.address, agent: stranger.address },
        { ...distinctClient(), "X-PAYMENT": await payWithEthers(payer, quote) },
      );
      expect(ok(paid).data.txId).to.match(/^0x[0-9a-f]{64}$/);
      expect(decodePaymentResponse(paid)).to.include({ success: true });
      expect(before - (await usdcOf(payer.address))).to.equal(5000n);
    });
  });

  describe("relay rules", () => {
    it("the four signable operations relayed without signature + deadline → 400", async () => {
      for (const [path, body] of [
        ["/x402/rams/grant-mandate", await grantBody(sandbox.accounts[17])],
        ["/x402/rams/revoke-mandate", { agent: agent.address, principal: principal.address }],
        [
          "/x402/rams/extend-mandate",
          { agent: agent.address, principal: principal.address, newValidUntil: String((await now()) + 999_999) },
        ],
        ["/x402/rams/set-operator", { principal: principal.address, operator: operator.address, approved: false }],
      ] as const) {
        const error = expectError(
          await api.post(path, { ...body, executionMode: "service-relayed" }, distinctClient()),
          400,
          /service-relayed mode needs the principal's EIP-712 signature and its deadline/,
        );
        expect(error.details.field).to.equal("signature");
        expectError(
          await api.post(
            path,
            { ...body, executionMode: "brickken-relayed", signature: "0x" + "11".repeat(65) },
            distinctClient(),
          ),
          400,
          /deadline/,
        );
      }
    });

    it("relayed on an always-client-signed operation → 400, with or without a key", async () => {
      const cases: [string, Record<string, unknown>][] = [
        ["ramsExecute", { asset: tokenAddress, from: principal.address, to: recipient.address, amount: "1" }],
        ["ramsSetExecutorAction", { executorAddress: executor, selector: TRANSFER_FROM, supported: true }],
        ["ramsFreezeAgent", { agent: agent.address }],
        ["ramsUnfreezeAgent", { agent: agent.address }],
        ["ramsGrantPrincipal", { principal: stranger.address, identityRef }],
        ["ramsRevokePrincipal", { principal: stranger.address, reason: "OTHER" }],
        ["ramsInvalidateNonces", { principal: principal.address }],
      ];
      for (const [method, body] of cases) {
        for (const mode of ["service-relayed", "brickken-relayed"]) {
          expectError(
            await api.post(
              "/prepare-transactions",
              { method, chainId: "aa36a7", executionMode: mode, ...body },
              distinctClient(),
            ),
            400,
            new RegExp(`^${method} cannot be service-relayed`),
          );
          expectError(
            await keyed.post("/prepare-transactions", { method, chainId: "aa36a7", executionMode: mode, ...body }),
            400,
            new RegExp(`^${method} cannot be service-relayed`),
          );
        }
      }
    });

    it("a key on a relayed signable operation → 400 (relayed execution is paid with x402)", async () => {
      expectError(
        await keyed.post("/x402/rams/revoke-mandate", {
          agent: agent.address,
          principal: principal.address,
          executionMode: "brickken-relayed",
          signature: "0x12",
          deadline: "1",
        }),
        400,
        /requires x402 payment; API keys are not accepted/,
      );
    });
  });

  describe("signature mode", () => {
    const a17 = () => sandbox.accounts[17];

    it("a signature by another key → 400 naming the signature, before any payment; the principal's own signature sent by any signer works", async () => {
      const params = await grantBody(a17());
      const typed = await read("/rams/typed-data/grant-mandate", { ...params, actions: TRANSFER_FROM });
      const forged = await stranger.signTypedData(
        typed.typedData.domain,
        typed.typedData.types,
        typed.typedData.message,
      );
      const before = await usdcOf(payer.address);
      const bad = await api.post(
        "/x402/rams/grant-mandate",
        { ...params, signature: forged, deadline: typed.deadline, executionMode: "service-relayed" },
        distinctClient(),
      );
      const error = expectError(bad, 400, /is not the principal .*'s EIP-712 GrantMandate signature/);
      expect(error.details).to.include({
        field: "signature",
        recoveredSigner: stranger.address,
        expectedSigner: principal.address,
      });
      expect(await usdcOf(payer.address)).to.equal(before);
      const altered = await api.post(
        "/x402/rams/grant-mandate",
        {
          ...params,
          maxTransactionValue: "1001",
          signature: await principal.signTypedData(
            typed.typedData.domain,
            typed.typedData.types,
            typed.typedData.message,
          ),
          deadline: typed.deadline,
          executionMode: "service-relayed",
        },
        distinctClient(),
      );
      expectError(altered, 400, /signature is not the principal/);

      // Client-signed signature mode: the operator sends the principal's signature.
      const signature = await principal.signTypedData(
        typed.typedData.domain,
        typed.typedData.types,
        typed.typedData.message,
      );
      const { prepared } = await keyedCall("/x402/rams/grant-mandate", operator, {
        ...params,
        signature,
        deadline: typed.deadline,
      });
      expect(prepared.info).to.include({ mode: "signature", eip712Nonce: typed.nonce });
      expect((await mandateOf(a17())).status).to.equal("active");
      expect((await mandateOf(a17())).nonce).to.equal(String(Number(typed.nonce) + 1));
    });

    it("a contract principal (ERC-1271 wallet): its owner's signature is accepted through the wallet; another key's → 400", async () => {
      const owner = sandbox.accounts[17];
      const wallet = await new ERC1271WalletMock__factory(admin.connect(provider)).deploy(owner.address);
      await wallet.waitForDeployment();
      const walletAddress = await wallet.getAddress();
      await keyedCall("/x402/rams/grant-principal", complianceOwner, { principal: walletAddress, identityRef });
      const params = { ...(await grantBody(sandbox.accounts[18])), principal: walletAddress };
      const typed = await read("/rams/typed-data/grant-mandate", { ...params, actions: TRANSFER_FROM });
      expect(typed.signer).to.equal(walletAddress);
      const forged = await stranger.signTypedData(
        typed.typedData.domain,
        typed.typedData.types,
        typed.typedData.message,
      );
      const bad = expectError(
        await api.post(
          "/x402/rams/grant-mandate",
          { ...params, signature: forged, deadline: typed.deadline, executionMode: "service-relayed" },
          distinctClient(),
        ),
        400,
        /ERC-1271 isValidSignature refuses it/,
      );
      expect(bad.details).to.include({ field: "signature", contractWallet: true });
      const signature = await owner.signTypedData(
        typed.typedData.domain,
        typed.typedData.types,
        typed.typedData.message,
      );
      const { prepared } = await keyedCall("/x402/rams/grant-mandate", operator, {
        ...params,
        signature,
        deadline: typed.deadline,
      });
      expect(prepared.info).to.include({ mode: "signature", eip712Nonce: "0" });
      expect((await mandateOf(sandbox.accounts[18], walletAddress)).status).to.equal("active");
    });

    it("typed data of revoke, extend and set-operator sign as is with ethers and are accepted by the registry", async () => {
      const m = await mandateOf(a17());
      const extendTyped = await read("/rams/typed-data/extend-mandate", {
        agent: a17().address,
        principal: principal.address,
        newValidUntil: String(m.mandate.validUntil + 100),
      });
      expect(extendTyped.typedData.types).to.deep.equal({
        ExtendMandate: [
          { name: "agent", type: "address" },
          { name: "principal", type: "address" },
          { name: "newValidUntil", type: "uint48" },
          { name: "nonce", type: "uint256" },
          { name: "deadline", type: "uint256" },
        ],
      });
      const extendSig = await principal.signTypedData(
        extendTyped.typedData.domain,
        extendTyped.typedData.types,
        extendTyped.typedData.message,
      );
      expect(
        verifyTypedData(
          extendTyped.typedData.domain,
          extendTyped.typedData.types,
          extendTyped.typedData.message,
          extendSig,
        ),
      ).to.equal(principal.address);
      await keyedCall("/x402/rams/extend-mandate", operator, {
        agent: a17().address,
        principal: principal.address,
        newValidUntil: String(m.mandate.validUntil + 100),
        signature: extendSig,
        deadline: extendTyped.deadline,
      });
      expect((await mandateOf(a17())).mandate.validUntil).to.equal(m.mandate.validUntil + 100);

      const opTyped = await read("/rams/typed-data/set-operator", {
        principal: principal.address,
        operator: sandbox.accounts[18].address,
        approved: "true",
        deadline: String((await now()) + 600),
      });
      expect(opTyped.typedData.message).to.include({ approved: true, operator: sandbox.accounts[18].address });
      const opSig = await principal.signTypedData(
        opTyped.typedData.domain,
        opTyped.typedData.types,
        opTyped.typedData.message,
      );
      const relayedOp = ok(
        await api.post(
          "/x402/rams/set-operator",
          {
            principal: principal.address,
            operator: sandbox.accounts[18].address,
            approved: "true",
            signature: opSig,
            deadline: opTyped.deadline,
            executionMode: "service-relayed",
          },
          distinctClient(),
        ),
      ).data;
      expect(relayedOp.executionMode).to.equal("service-relayed");
      const quote = quoteOf(await api.post("/send-transactions", { txId: relayedOp.txId })).accepts[0];
      const sent = await api.post(
        "/send-transactions",
        { txId: relayedOp.txId },
        { "X-PAYMENT": await payWithEthers(payer, quote) },
      );
      expect(ok(sent).status).to.equal("success");
      expect(await mandateContract().isOperator(principal.address, sandbox.accounts[18].address)).to.equal(true);

      const revokeTyped = await read("/rams/typed-data/revoke-mandate", {
        agent: a17().address,
        principal: principal.address,
      });
      expect(revokeTyped.typedData.message).to.deep.equal({
        agent: a17().address,
        principal: principal.address,
        nonce: revokeTyped.nonce,
        deadline: revokeTyped.deadline,
      });
      const revokeSig = await principal.signTypedData(
        revokeTyped.typedData.domain,
        revokeTyped.typedData.types,
        revokeTyped.typedData.message,
      );
      const { sent: revoked } = await keyedCall("/x402/rams/revoke-mandate", operator, {
        agent: a17().address,
        principal: principal.address,
        signature: revokeSig,
        deadline: revokeTyped.deadline,
      });
      expect(revoked.outcome.events[0].args.revokedBy).to.equal(operator.address);
      expect((await mandateOf(a17())).status).to.equal("revoked");
      // The nonce moved on: the same signature again is refused before anything is returned.
      expectError(
        await keyed.post("/x402/rams/revoke-mandate", {
          signerAddress: operator.address,
          agent: a17().address,
          principal: principal.address,
          signature: revokeSig,
          deadline: revokeTyped.deadline,
        }),
        400,
        /already revoked/,
      );
    });

    it("invalidate-nonces: a signature the principal voided is refused at prepare, relayed or not, before any payment, and on chain; only the principal may void, ahead of its nonce", async () => {
      const path = "/x402/rams/invalidate-nonces";
      const opBody = { principal: principal.address, operator: sandbox.accounts[18].address, approved: "false" };
      const typed = await read("/rams/typed-data/set-operator", opBody);
      const signature = await principal.signTypedData(
        typed.typedData.domain,
        typed.typedData.types,
        typed.typedData.message,
      );
      const nonce = BigInt(typed.nonce);

      // Pre-checks, each a 400 naming its field.
      const notPrincipal = expectError(
        await keyed.post(path, { signerAddress: operator.address, principal: principal.address }),
        400,
        /is not the principal .*: only the principal may void its own signatures/,
      );
      expect(notPrincipal.details.field).to.equal("signerAddress");
      for (const newNonce of [typed.nonce, String(nonce + 2n ** 64n)]) {
        const refused = expectError(
          await keyed.post(path, { signerAddress: principal.address, principal: principal.address, newNonce }),
          400,
          /newNonce .* must be above the principal's current nonce .* and at most 2\^64-1 above it/,
        );
        expect(refused.details).to.include({ field: "newNonce", currentNonce: typed.nonce });
      }
      expectError(
        await keyed.post(path, { signerAddress: principal.address, principal: principal.address, newNonce: "-1" }),
        400,
        /newNonce/,
      );

      // The principal voids its outstanding signatures (default: the current nonce + 1).
      const { prepared, sent } = await keyedCall(path, principal, { principal: principal.address });
      expect(prepared.info).to.deep.include({
        contract: registry,
        agentMandateAddress: registry,
        mode: "direct",
        principal: principal.address,
        eip712Nonce: typed.nonce,
        newNonce: String(nonce + 1n),
      });
      expect(sent.outcome.events).to.deep.equal([
        {
          contract: registry,
          event: "NoncesInvalidated",
          args: { principal: principal.address, previousNonce: typed.nonce, newNonce: String(nonce + 1n) },
        },
      ]);
      expect((await read("/rams/status", { agent: agent.address, principal: principal.address })).nonce).to.equal(
        String(nonce + 1n),
      );

      // The voided signature: relayed (x402, nothing taken) and client-signed, refused before anything is returned.
      const before = await usdcOf(payer.address);
      const relayed = expectError(
        await api.post(
          "/x402/rams/set-operator",
          { ...opBody, signature, deadline: typed.deadline, executionMode: "service-relayed" },
          distinctClient(),
        ),
        400,
        /signature is not the principal .*'s EIP-712 SetOperator signature over these parameters, its current nonce/,
      );
      expect(relayed.details).to.include({ field: "signature", nonce: String(nonce + 1n) });
      expect(await usdcOf(payer.address)).to.equal(before);
      expectError(
        await keyed.post("/x402/rams/set-operator", {
          ...opBody,
          signerAddress: operator.address,
          signature,
          deadline: typed.deadline,
        }),
        400,
        /signature is not the principal/,
      );
      // Sent to the registry by anyone, bypassing the service: InvalidSignature.
      const registryAsStranger = AgentMandate__factory.connect(registry, stranger.connect(provider));
      let reverted: unknown;
      await registryAsStranger.setOperator
        .staticCall(principal.address, opBody.operator, false, typed.deadline, signature)
        .catch((error: unknown) => (reverted = error));
      expect(registryAsStranger.interface.parseError((reverted as { data: string }).data)?.name).to.equal(
        "InvalidSignature",
      );
      expect(await mandateContract().isOperator(principal.address, opBody.operator)).to.equal(true); // unchanged
    });
  });

  describe("input rules", () => {
    const typedGrant = async (extra: Record<string, string>) =>
      keyed.get("/rams/typed-data/grant-mandate", {
        ...(await grantBody(sandbox.accounts[17])),
        actions: TRANSFER_FROM,
        ...extra,
      });

    it("actions: a bytes32 or a 4-byte selector right-padded, comma-joined in queries, arrays in bodies; at least one", async () => {
      const res = ok(await typedGrant({ chainId: "aa36a7", actions: `${TRANSFER_FROM},0x095ea7b3${"0".repeat(56)}` }));
      expect(res.data.typedData.message.actions).to.deep.equal([TRANSFER_FROM_ACTION, "0x095ea7b3" + "0".repeat(56)]);
      expectError(await typedGrant({ chainId: "aa36a7", actions: "0x1234" }), 400, /^actions\.0 must be a bytes32/);
      expectError(
        await keyed.post("/x402/rams/grant-mandate", {
          ...(await grantBody(sandbox.accounts[17])),
          signerAddress: principal.address,
          actions: [],
        }),
        400,
        /^actions must hold at least one action/,
      );
    });

    it("caps: decimal, 0x hex, number, max / unlimited in any case (2^256-1); anything else or above uint256 → 400 naming the cap", async () => {
      const max = (2n ** 256n - 1n).toString();
      for (const [input, expected] of [
        ["123", "123"],
        ["0xff", "255"],
        ["MAX", max],
        ["Unlimited", max],
        ["max", max],
      ]) {
        const res = ok(await typedGrant({ chainId: "aa36a7", maxTransactionValue: input }));
        expect(res.data.typedData.message.maxTransactionValue, input).to.equal(expected);
      }
      const numeric = ok(
        await keyed.post("/x402/rams/grant-mandate", {
          ...(await grantBody(sandbox.accounts[17], { maxCumulativeValue: 2000 })),
          signerAddress: principal.address,
        }),
      );
      expect(numeric.data.info.maxCumulativeValue).to.equal("2000");
      const unlimited = ok(
        await keyed.post("/x402/rams/grant-mandate", {
          ...(await grantBody(sandbox.accounts[17], { maxCumulativeValue: "UNLIMITED" })),
          signerAddress: principal.address,
        }),
      );
      expect(unlimited.data.info.maxCumulativeValue).to.equal(max);
      for (const bad of ["abc", "-1", "1.5", (2n ** 256n).toString()]) {
        expectError(await typedGrant({ chainId: "aa36a7", maxCumulativeValue: bad }), 400, /^maxCumulativeValue /);
      }
    });

    it("validUntil after now and after validFrom; identityRef non-zero; deadline default 1 hour, at most 30 days, not past", async () => {
      const t = await now();
      expectError(
        await typedGrant({ chainId: "aa36a7", validUntil: String(t - 10) }),
        400,
        /^validUntil \d+ must be after now/,
      );
      expectError(
        await typedGrant({ chainId: "aa36a7", validFrom: String(t + 90_000), validUntil: String(t + 80_000) }),
        400,
        /^validUntil \d+ must be after validFrom/,
      );
      expectError(await typedGrant({ chainId: "aa36a7", identityRef: ZeroHash }), 400, /^identityRef must not be zero/);
      expectError(
        await typedGrant({ chainId: "aa36a7", deadline: String(t + 31 * 86_400) }),
        400,
        /^deadline \d+ is more than 30 days/,
      );
      expectError(await typedGrant({ chainId: "aa36a7", deadline: String(t - 1) }), 400, /^deadline \d+ has passed/);
      const ok30 = ok(await typedGrant({ chainId: "aa36a7", deadline: String(t + 29 * 86_400) }));
      expect(ok30.data.deadline).to.equal(String(t + 29 * 86_400));
      expectError(
        await keyed.post("/x402/rams/grant-principal", {
          signerAddress: complianceOwner.address,
          principal: stranger.address,
          identityRef: ZeroHash,
        }),
        400,
        /^identityRef must not be zero/,
      );
      expectError(
        await keyed.post("/x402/rams/grant-principal", {
          signerAddress: complianceOwner.address,
          principal: stranger.address,
          identityRef,
          expiresAt: String(t - 5),
        }),
        400,
        /^expiresAt \d+ must be 0/,
      );
    });

    it("reason by name (any case) or code 0-8; anything else → 400", async () => {
      const { sent } = await keyedCall("/x402/rams/grant-principal", complianceOwner, {
        principal: stranger.address,
        identityRef,
      });
      expect(sent.status).to.equal("success");
      for (const [reason, code] of [
        ["aml_flag", 2],
        ["JURISDICTION_BLOCKED", 5],
        ["7", 7],
        [0, 0],
      ] as const) {
        const prepared = ok(
          await keyed.post("/x402/rams/revoke-principal", {
            signerAddress: complianceOwner.address,
            principal: stranger.address,
            reason,
          }),
        );
        expect(prepared.data.info.reasonCode, String(reason)).to.equal(code);
      }
      const byDefault = ok(
        await keyed.post("/x402/rams/revoke-principal", {
          signerAddress: complianceOwner.address,
          principal: stranger.address,
        }),
      );
      expect(byDefault.data.info).to.include({ reason: "OTHER", reasonCode: 8 });
      expectError(
        await keyed.post("/x402/rams/revoke-principal", {
          signerAddress: complianceOwner.address,
          principal: stranger.address,
          reason: "9",
        }),
        400,
        /^reason must be a reason name/,
      );
      expectError(
        await keyed.post("/x402/rams/revoke-principal", {
          signerAddress: complianceOwner.address,
          principal: stranger.address,
          reason: "FRAUD",
        }),
        400,
        /^reason must be a reason name/,
      );
      await keyedCall("/x402/rams/revoke-principal", complianceOwner, {
        principal: stranger.address,
        reason: "AML_FLAG",
      });
      expect(await read("/rams/compliance-status", { principal: stranger.address, identityRef })).to.include({
        eligible: false,
        reason: "AML_FLAG",
        reasonCode: 2,
      });
    });

    it("execute: exactly one input mode; raw mode needs target and data (≥ 4 bytes)", async () => {
      const base = { signerAddress: agent.address, executorAddress: executor };
      expectError(await keyed.post("/x402/rams/execute", base), 400, /^target \+ data \(raw mode\) or asset/);
      expectError(
        await keyed.post("/x402/rams/execute", { ...base, target: tokenAddress, data: "0x23b872dd", amount: "1" }),
        400,
        /not both/,
      );
      expectError(await keyed.post("/x402/rams/execute", { ...base, target: tokenAddress }), 400, /^data is required/);
      expectError(
        await keyed.post("/x402/rams/execute", { ...base, target: tokenAddress, data: "0x23b8" }),
        400,
        /^data must be 0x-prefixed calldata of at least 4 bytes/,
      );
      expectError(
        await keyed.post("/x402/rams/execute", {
          ...base,
          asset: tokenAddress,
          from: principal.address,
          to: recipient.address,
        }),
        400,
        /^amount is required in helper mode/,
      );
    });
  });

  describe("pre-checks: each a 4xx naming its rule", () => {
    let agentB: Wallet;
    before(async () => {
      agentB = sandbox.accounts[18];
      await grantDirect(agentB);
    });

    it("grant-principal / revoke-principal: the signer must be the compliance provider's owner; revoke needs an active record", async () => {
      expectError(
        await keyed.post("/x402/rams/grant-principal", {
          signerAddress: principal.address,
          principal: stranger.address,
          identityRef,
        }),
        400,
        /is not the ComplianceProvider owner/,
      );
      expectError(
        await keyed.post("/x402/rams/revoke-principal", {
          signerAddress: principal.address,
          principal: stranger.address,
        }),
        400,
        /is not the ComplianceProvider owner/,
      );
      expectError(
        await keyed.post("/x402/rams/revoke-principal", {
          signerAddress: complianceOwner.address,
          principal: recipient.address,
          reason: "OTHER",
        }),
        400,
        /has no active eligibility record/,
      );
    });

    it("grant-mandate: the principal must be eligible; direct mode needs signerAddress = principal; an active mandate blocks a re-grant", async () => {
      const notEligible = await keyed.post("/x402/rams/grant-mandate", {
        ...(await grantBody(recipient)),
        principal: stranger.address,
        signerAddress: stranger.address,
      });
      // stranger is not whitelisted: the whitelist rule answers first
      expect(notEligible.status).to.equal(403);
      await service.services.signers.add(stranger.address, "all-keys");
      expectError(
        await keyed.post("/x402/rams/grant-mandate", {
          ...(await grantBody(recipient)),
          principal: stranger.address,
          signerAddress: stranger.address,
        }),
        400,
        /is not eligible at ComplianceProvider .* AML_FLAG/,
      );
      expectError(
        await keyed.post("/x402/rams/grant-mandate", {
          ...(await grantBody(recipient)),
          identityRef: keccakId("another"),
          signerAddress: principal.address,
        }),
        400,
        /IDENTITY_NOT_FOUND/,
      );
      expectError(
        await keyed.post("/x402/rams/grant-mandate", {
          ...(await grantBody(recipient)),
          signerAddress: operator.address,
        }),
        400,
        /is not the principal .*: only they may grant a mandate directly/,
      );
      expectError(
        await keyed.post("/x402/rams/grant-mandate", {
          ...(await grantBody(agentB)),
          signerAddress: principal.address,
        }),
        400,
        /already holds an active mandate/,
      );
    });

    it("revoke / extend: need a mandate that is not revoked (extend: not expired either), newValidUntil beyond the current one, and the principal or an approved operator", async () => {
      expectError(
        await keyed.post("/x402/rams/revoke-mandate", {
          signerAddress: principal.address,
          agent: recipient.address,
          principal: principal.address,
        }),
        400,
        /has no mandate from principal .* to revoke/,
      );
      expectError(
        await keyed.post("/x402/rams/extend-mandate", {
          signerAddress: principal.address,
          agent: recipient.address,
          principal: principal.address,
          newValidUntil: "99999999999",
        }),
        400,
        /has no active mandate .* there is none/,
      );
      const current = (await mandateOf(agentB)).mandate.validUntil;
      expectError(
        await keyed.post("/x402/rams/extend-mandate", {
          signerAddress: principal.address,
          agent: agentB.address,
          principal: principal.address,
          newValidUntil: String(current),
        }),
        400,
        /^newValidUntil \d+ must be after the mandate's current validUntil/,
      );
      expectError(
        await keyed.post("/x402/rams/revoke-mandate", {
          signerAddress: stranger.address,
          agent: agentB.address,
          principal: principal.address,
        }),
        400,
        /is not the principal .* nor an operator it approved/,
      );
      expectError(
        await keyed.post("/x402/rams/set-operator", {
          signerAddress: operator.address,
          principal: principal.address,
          operator: stranger.address,
          approved: true,
        }),
        400,
        /is not the principal/,
      );
    });

    it("execute: the signer must hold the mandate; an unsupported selector, a cumulative cap or a token-level refusal → 400 with the reason", async () => {
      expectError(
        await keyed.post("/x402/rams/execute", {
          signerAddress: operator.address,
          executorAddress: executor,
          asset: tokenAddress,
          from: principal.address,
          to: recipient.address,
          amount: "1",
        }),
        400,
        /has granted agent .* no mandate/,
      );
      const approve = "0x095ea7b3" + "00".repeat(64);
      const unsupported = expectError(
        await keyed.post("/x402/rams/execute", {
          signerAddress: agentB.address,
          executorAddress: executor,
          target: tokenAddress,
          data: approve,
        }),
        400,
        /selector 0x095ea7b3 is not supported by executor/,
      );
      expect(unsupported.details.reason).to.equal("UnsupportedAction");
      const refused = expectError(
        await keyed.post("/x402/rams/execute", {
          signerAddress: agentB.address,
          asset: tokenAddress,
          from: principal.address,
          to: stranger.address,
          amount: "10",
        }),
        400,
        /ERC7943CannotReceive\(/,
      );
      expect(refused.details.reason).to.match(/^CallFailed\(ERC7943CannotReceive\(0x/);
      await keyedCall("/x402/rams/execute", agentB, {
        asset: tokenAddress,
        from: principal.address,
        to: recipient.address,
        amount: "1000",
      });
      const cumulative = expectError(
        await keyed.post("/x402/rams/execute", {
          signerAddress: agentB.address,
          asset: tokenAddress,
          from: principal.address,
          to: recipient.address,
          amount: "501",
        }),
        400,
        /remains of the cumulative cap \(500 of 1500; 1000 used\)/,
      );
      expect(cumulative.details.reason).to.equal("exceeds_cumulative_cap");
      const wrongAsset = await canExecute(agentB, "1", { asset: sandbox.deployments[SEPOLIA].contracts.USDC });
      expect(wrongAsset.reason.code).to.equal("asset_mismatch");
      const otherAction = await canExecute(agentB, "1", { selector: "0x095ea7b3" });
      expect(otherAction.reason.code).to.equal("action_not_enabled");
    });

    it("execute after the principal's compliance is revoked: the mandate is unchanged, the registry's canExecute is false, the pre-check refuses (not compliant), and the agent calling the executor directly on chain is refused", async () => {
      const agentC = sandbox.accounts[19];
      await service.services.signers.add(agentC.address, "all-keys");
      const ref = keccakId("kyc:compliance-revoked");
      await keyedCall("/x402/rams/grant-principal", complianceOwner, {
        principal: principal.address,
        identityRef: ref,
      });
      await grantDirect(agentC, { identityRef: ref });
      await keyedCall("/x402/rams/revoke-principal", complianceOwner, {
        principal: principal.address,
        reason: "KYC_EXPIRED",
      });
      const check = await canExecute(agentC, "1");
      expect(check).to.include({ canExecute: false, allowed: false, status: "active" });
      expect(check.reason.code).to.equal("not_compliant");
      expect(check.checks.compliance).to.include({ pass: false, eligible: false, reason: "KYC_EXPIRED" });
      expect((await mandateOf(agentC)).mandate).to.include({ revoked: false });
      // The agent bypasses the service and calls the executor itself: the registry asks the compliance provider.
      const direct = AgentExecutor__factory.connect(executor, agentC.connect(provider));
      const call = token.interface.encodeFunctionData("transferFrom", [principal.address, recipient.address, 1n]);
      const recipientBefore = await token.balanceOf(recipient.address);
      let reverted: unknown;
      await direct.execute.staticCall(tokenAddress, call).catch((error: unknown) => (reverted = error));
      const decoded = direct.interface.parseError((reverted as { data: string }).data);
      expect(decoded?.name).to.equal("CannotExecute");
      expect(decoded?.args.map(String)).to.deep.equal([agentC.address, tokenAddress, TRANSFER_FROM, "1"]);
      // Sent anyway (no estimate): mined and reverted. Hardhat's EDR also answers the send with the revert and the
      // transaction's hash; a real network answers the hash only.
      const hash = await direct.execute(tokenAddress, call, { gasLimit: 300_000 }).then(
        (tx) => tx.hash,
        (error: { error?: { data?: { txHash?: string } } }) => error.error?.data?.txHash,
      );
      expect(hash, "the transaction's hash").to.be.a("string");
      const receipt = await provider.waitForTransaction(hash!);
      expect(receipt!.status).to.equal(0);
      expect(await token.balanceOf(recipient.address)).to.equal(recipientBefore);
      expectError(
        await keyed.post("/x402/rams/execute", {
          signerAddress: agentC.address,
          asset: tokenAddress,
          from: principal.address,
          to: recipient.address,
          amount: "1",
        }),
        400,
        /not compliant .*KYC_EXPIRED/,
      );
      // Restore the principal's eligibility for the other tests.
      await keyedCall("/x402/rams/grant-principal", complianceOwner, { principal: principal.address, identityRef });
    });

    it("a mandate whose compliance provider stops answering (reverts): can-execute says not compliant (PROVIDER_FAILED), as the registry does, rather than failing the read", async () => {
      const agentF = new Wallet(Wallet.createRandom().privateKey, provider);
      await service.services.signers.add(agentF.address, "all-keys");
      const misbehaving = await new MisbehavingComplianceProvider__factory(admin.connect(provider)).deploy();
      await misbehaving.waitForDeployment();
      // Granted on chain by the principal (the service grants only with this version's providers): it answers eligible.
      const body = await grantBody(agentF);
      const direct = AgentMandate__factory.connect(registry, principal.connect(provider));
      await (
        await direct.grantMandate(
          {
            agent: agentF.address,
            validFrom: 0,
            validUntil: body.validUntil,
            principal: principal.address,
            complianceProvider: await misbehaving.getAddress(),
            identityRef,
            asset: tokenAddress,
            maxTransactionValue: 1000,
            maxCumulativeValue: 1500,
            metadata: ZeroHash,
            actions: [TRANSFER_FROM_ACTION],
            deadline: 0,
          },
          "0x",
        )
      ).wait();
      expect(await canExecute(agentF, "1")).to.include({ canExecute: true, allowed: true, reason: null });
      await (await misbehaving.setMode(2 /* Revert */)).wait();
      const check = await canExecute(agentF, "1");
      expect(check).to.include({ canExecute: false, allowed: false });
      expect(check.reason.code).to.equal("not_compliant");
      expect(check.checks.compliance).to.deep.include({ pass: false, eligible: false, reason: "PROVIDER_FAILED" });
      expectError(
        await keyed.post("/x402/rams/execute", {
          signerAddress: agentF.address,
          asset: tokenAddress,
          from: principal.address,
          to: recipient.address,
          amount: "1",
        }),
        400,
        /not compliant .*PROVIDER_FAILED/,
      );
    });

    it("set-executor-action: only the executor's owner; the selector is registered and read back; hasAmount false carries a warning", async () => {
      expectError(
        await keyed.post("/x402/rams/set-executor-action", {
          signerAddress: principal.address,
          executorAddress: executor,
          selector: "0x095ea7b3",
          supported: true,
          hasAmount: true,
          amountIndex: "1",
        }),
        400,
        /is not the owner .* of executor/,
      );
      await service.services.signers.add(admin.address, "all-keys");
      const { prepared } = await keyedCall("/x402/rams/set-executor-action", admin, {
        principal: principal.address,
        action: "0x095ea7b3" + "0".repeat(56),
        supported: "true",
        hasAmount: "false",
      });
      expect(prepared.info).to.include({
        executorAddress: executor,
        selector: "0x095ea7b3",
        supported: true,
        hasAmount: false,
        amountIndex: 0,
      });
      expect(prepared.info.warning).to.match(/bypasses the mandate's caps/);
      expect(await read("/rams/executor-action", { executorAddress: executor, selector: "0x095ea7b3" })).to.deep.equal({
        chainId: "11155111",
        executorAddress: executor,
        selector: "0x095ea7b3",
        action: "0x095ea7b3" + "0".repeat(56),
        actionSpec: { supported: true, hasAmount: false, amountIndex: 0 },
        supported: true,
        hasAmount: false,
        amountIndex: 0,
        principal: principal.address,
        owner: admin.address,
        agentMandateAddress: registry,
      });
      await keyedCall("/x402/rams/set-executor-action", admin, {
        executorAddress: executor,
        selector: "0x095ea7b3",
        supported: false,
      });
      expect(
        (await read("/rams/executor-action", { principal: principal.address, action: "0x095ea7b3" })).supported,
      ).to.equal(false);
      expectError(
        await keyed.post("/x402/rams/set-executor-action", {
          signerAddress: admin.address,
          executorAddress: executor,
          action: "0x" + "12".repeat(32),
          supported: true,
        }),
        400,
        /^action must be a selector's label/,
      );
    });

    it("freeze / unfreeze: only an ENFORCER_ROLE holder (not the admin); unfreezing an agent that is not frozen → 400", async () => {
      expectError(
        await keyed.post("/x402/rams/freeze-agent", { signerAddress: admin.address, agent: agentB.address }),
        400,
        /does not hold ENFORCER_ROLE/,
      );
      expectError(
        await keyed.post("/x402/rams/unfreeze-agent", { signerAddress: enforcer.address, agent: agentB.address }),
        400,
        /is not frozen/,
      );
    });
  });

  describe("lifecycle states", () => {
    it("pending (validFrom ahead) and expired (validUntil passed): status and can-execute say so; an expired mandate cannot be extended but can be revoked", async () => {
      const pendingAgent = Wallet.createRandom();
      const t = await now();
      await grantDirect(pendingAgent, { validFrom: String(t + 3600), validUntil: String(t + 7200) });
      expect((await mandateOf(pendingAgent.address)).status).to.equal("pending");
      expect(
        (
          await read("/rams/can-execute", {
            agent: pendingAgent.address,
            principal: principal.address,
            asset: tokenAddress,
          })
        ).reason.code,
      ).to.equal("pending");

      const shortAgent = Wallet.createRandom();
      await grantDirect(shortAgent, { validUntil: String((await now()) + 4) });
      expect((await mandateOf(shortAgent.address)).status).to.equal("active");
      await new Promise((resolve) => setTimeout(resolve, 5500));
      await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
      expect((await mandateOf(shortAgent.address)).status).to.equal("expired");
      expect(
        (
          await read("/rams/can-execute", {
            agent: shortAgent.address,
            principal: principal.address,
            asset: tokenAddress,
            amount: "1",
          })
        ).reason.code,
      ).to.equal("expired");
      expectError(
        await keyed.post("/x402/rams/extend-mandate", {
          signerAddress: principal.address,
          agent: shortAgent.address,
          principal: principal.address,
          newValidUntil: String((await now()) + 999),
        }),
        400,
        /expired at \d+; grant a new one/,
      );
      const revoke = ok(
        await keyed.post("/x402/rams/revoke-mandate", {
          signerAddress: principal.address,
          agent: shortAgent.address,
          principal: principal.address,
        }),
      );
      expect(revoke.data.info.statusBefore).to.equal("expired");
    });
  });

  describe("reads", () => {
    it("key: free; x402 without a key: the RAMS read price (0.001 USDC), PAYMENT-RESPONSE on success", async () => {
      const query = { chainId: "aa36a7", agent: agent.address, principal: principal.address };
      const challenge = await api.get("/rams/mandate", query);
      const quote = quoteOf(challenge).accepts[0];
      expect(quote.amount).to.equal(RAMS_READ_PRICE);
      expect(quote.extra.routeKey ?? "GET /rams/mandate").to.equal("GET /rams/mandate");
      const before = await usdcOf(payer.address);
      const paid = await api.get("/rams/mandate", query, { "X-PAYMENT": await payWithEthers(payer, quote) });
      expect(ok(paid).data.status).to.equal("revoked");
      expect(decodePaymentResponse(paid)).to.include({ success: true });
      expect(before - (await usdcOf(payer.address))).to.equal(1000n);
      for (const [path, q] of [
        ["/rams/status", query],
        ["/rams/compliance-status", { chainId: "aa36a7", principal: principal.address, identityRef }],
        ["/rams/can-execute", { ...query, asset: tokenAddress }],
        ["/rams/executor-action", { chainId: "aa36a7", executorAddress: executor, selector: TRANSFER_FROM }],
        ["/rams/typed-data/revoke-mandate", query],
      ] as const) {
        expect(quoteOf(await api.get(path, q)).accepts[0].amount, path).to.equal(RAMS_READ_PRICE);
        expect(ok(await keyed.get(path, q)).data, path).to.be.an("object");
      }
    });

    it("a read's 4xx takes no payment: bad address, wrong chain, unknown operation, missing chainId", async () => {
      const quote = quoteOf(
        await api.get("/rams/status", { chainId: "aa36a7", agent: agent.address, principal: principal.address }),
      ).accepts[0];
      const before = await usdcOf(payer.address);
      for (const [path, q, message] of [
        [
          "/rams/mandate",
          { chainId: "aa36a7", agent: "0x1234", principal: principal.address },
          /^agent must be a 0x-prefixed/,
        ],
        [
          "/rams/mandate",
          { chainId: "84532", agent: agent.address, principal: principal.address },
          /RAMS runs on chain 11155111/,
        ],
        ["/rams/mandate", { agent: agent.address, principal: principal.address }, /^chainId /],
        [
          "/rams/status",
          {
            chainId: "aa36a7",
            agent: agent.address,
            principal: principal.address,
            agentMandateAddress: recipient.address,
          },
          /has no contract code/,
        ],
        [
          "/rams/compliance-status",
          { chainId: "aa36a7", principal: principal.address, identityRef: "0x12" },
          /^identityRef must be a bytes32/,
        ],
        [
          "/rams/can-execute",
          { chainId: "aa36a7", agent: agent.address, principal: principal.address, asset: tokenAddress, amount: "-5" },
          /^amount /,
        ],
        [
          "/rams/can-execute",
          {
            chainId: "aa36a7",
            agent: agent.address,
            principal: principal.address,
            asset: tokenAddress,
            selector: TRANSFER_FROM,
            action: "0x095ea7b3",
          },
          /differ/,
        ],
        ["/rams/executor-action", { chainId: "aa36a7", selector: TRANSFER_FROM }, /^executorAddress is required/],
        [
          "/rams/typed-data/transfer",
          { chainId: "aa36a7" },
          /^operation must be one of grant-mandate, revoke-mandate, extend-mandate, set-operator/,
        ],
        [
          "/rams/typed-data/extend-mandate",
          { chainId: "aa36a7", agent: agent.address, principal: principal.address },
          /^newValidUntil is required/,
        ],
      ] as const) {
        const res = await api.get(path, q, { "X-PAYMENT": await payWithEthers(payer, quote) });
        expect(res.status, `${path} ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.message, path).to.match(message);
        expect(res.headers.get("payment-response")).to.equal(null);
      }
      expect(await usdcOf(payer.address)).to.equal(before);
    });

    it("shapes: mandate of a pair never granted (none, mandate null); can-execute lists every check; network info lists the RAMS contracts", async () => {
      const none = await mandateOf(Wallet.createRandom().address);
      expect(none).to.include({ status: "none", mandate: null, frozen: false });
      expect(none.nonce).to.match(/^\d+$/);
      const check = await canExecute(agent, "5");
      expect(Object.keys(check.checks)).to.deep.equal([
        "lifecycle",
        "freeze",
        "asset",
        "action",
        "transactionCap",
        "cumulativeCap",
        "compliance",
      ]);
      for (const c of Object.values<any>(check.checks)) expect(c.pass).to.be.a("boolean");
      expect(check).to.include.keys([
        "canExecute",
        "allowed",
        "reason",
        "status",
        "frozen",
        "checks",
        "agentMandateAddress",
        "asset",
        "action",
        "amount",
      ]);
      const info = ok(await api.get("/get-network-info", { chainId: "aa36a7" }));
      expect(info).to.include({ agentMandateAddress: registry, complianceProviderAddress: complianceProvider });
    });

    it("the registry's roles are as the sandbox set them: admin #0, enforcer #7 (not the admin, not the relayer), compliance owner #6", async () => {
      const m = mandateContract();
      expect(await m.hasRole(await m.DEFAULT_ADMIN_ROLE(), admin.address)).to.equal(true);
      expect(await m.hasRole(await m.ENFORCER_ROLE(), enforcer.address)).to.equal(true);
      expect(await m.hasRole(await m.ENFORCER_ROLE(), admin.address)).to.equal(false);
      expect(await m.hasRole(await m.DEFAULT_ADMIN_ROLE(), sandbox.accounts[RELAYER_INDEX].address)).to.equal(false);
      expect(await m.hasRole(await m.RECORDER_ROLE(), executor)).to.equal(true);
      expect(await ComplianceProvider__factory.connect(complianceProvider, provider).owner()).to.equal(
        complianceOwner.address,
      );
    });
  });

  describe("checks again at send (the chain may have changed since the prepare)", () => {
    /** A fresh agent wallet with gas, whitelisted as a signer, holding a direct mandate from the principal under `ref`. */
    async function freshAgent(ref: string): Promise<Wallet> {
      const fresh = new Wallet(Wallet.createRandom().privateKey, provider);
      await (await admin.connect(provider).sendTransaction({ to: fresh.address, value: 10n ** 18n })).wait();
      await service.services.signers.add(fresh.address, "all-keys");
      await grantDirect(fresh, { identityRef: ref });
      return fresh;
    }
    const executeBody = (a: Wallet, amount: string) => ({
      signerAddress: a.address,
      asset: tokenAddress,
      from: principal.address,
      to: recipient.address,
      amount,
    });

    it("an execute prepared while the principal was compliant and sent after its compliance was revoked is refused with can-execute's reason, before anyone pays; nothing moves; sent again once compliant, the same signature goes through", async () => {
      const ref = keccakId("kyc:checked-at-send");
      await keyedCall("/x402/rams/grant-principal", complianceOwner, {
        principal: principal.address,
        identityRef: ref,
      });
      const agentD = await freshAgent(ref);

      // One execute prepared under the key, one prepared without a key and paid with x402 (its prepare half).
      const keyedPrepared = await keyedPrepare("/x402/rams/execute", agentD, executeBody(agentD, "5"));
      const keyedSigned = [await agentD.signTransaction(keyedPrepared.transactions[0])];
      const quote = quoteOf(await api.post("/x402/rams/execute", executeBody(agentD, "6"), distinctClient()))
        .accepts[0];
      const paidPrepare = await api.post("/x402/rams/execute", executeBody(agentD, "6"), {
        ...distinctClient(),
        "X-PAYMENT": await payWithEthers(payer, quote),
      });
      const keyless = ok(paidPrepare, "x402 prepare").data;
      const keylessSigned = [await agentD.signTransaction(keyless.transactions[0])];

      await keyedCall("/x402/rams/revoke-principal", complianceOwner, {
        principal: principal.address,
        reason: "AML_FLAG",
      });
      const check = await canExecute(agentD, "5");
      expect(check).to.include({ canExecute: false, allowed: false });
      const recipientBefore = await token.balanceOf(recipient.address);
      const payerBefore = await usdcOf(payer.address);

      const refused = expectError(
        await keyed.post("/send-transactions", { txId: keyedPrepared.txId, signedTransactions: keyedSigned }),
        400,
        /^ramsExecute refused at send: principal .* is not compliant .*AML_FLAG/,
      );
      expect(refused.code).to.equal("PREFLIGHT_FAILED");
      expect(refused.details).to.deep.include({
        reason: check.reason.code,
        check: check.reason.check,
        canExecute: false,
      });
      expect(refused.details.checks.compliance).to.deep.include({ pass: false, reason: "AML_FLAG" });
      // Without a key the refusal comes before the 402: nothing is asked for, nothing is paid.
      const unpaid = await api.post("/send-transactions", { txId: keyless.txId, signedTransactions: keylessSigned });
      expectError(unpaid, 400, /^ramsExecute refused at send: .*not compliant/);
      expect(unpaid.headers.get("payment-required")).to.equal(null);
      expect(await token.balanceOf(recipient.address)).to.equal(recipientBefore);
      expect(await usdcOf(payer.address)).to.equal(payerBefore);
      expect((await keyed.get("/get-transaction-status", { txId: keyedPrepared.txId })).body.status).to.equal(
        "prepared",
      );

      await keyedCall("/x402/rams/grant-principal", complianceOwner, {
        principal: principal.address,
        identityRef: ref,
      });
      const sent = ok(
        await keyed.post("/send-transactions", { txId: keyedPrepared.txId, signedTransactions: keyedSigned }),
        "send after re-grant",
      );
      expect(sent.status).to.equal("success");
      expect(await token.balanceOf(recipient.address)).to.equal(recipientBefore + 5n);
      // Restore the principal's eligibility for the other tests.
      await keyedCall("/x402/rams/grant-principal", complianceOwner, { principal: principal.address, identityRef });
    });

    it("a mandate revoked after the prepare: the send is refused (revoked); ramsExecute without executorAddress names the revocation instead of asking for an executor", async () => {
      const agentE = await freshAgent(identityRef);
      const prepared = await keyedPrepare("/x402/rams/execute", agentE, executeBody(agentE, "3"));
      const signedTransactions = [await agentE.signTransaction(prepared.transactions[0])];
      await keyedCall("/x402/rams/revoke-mandate", principal, { agent: agentE.address, principal: principal.address });
      const refused = expectError(
        await keyed.post("/send-transactions", { txId: prepared.txId, signedTransactions }),
        400,
        /^ramsExecute refused at send: the mandate is revoked/,
      );
      expect(refused.details).to.include({ reason: "revoked", check: "lifecycle" });
      const again = expectError(
        await keyed.post("/x402/rams/execute", executeBody(agentE, "3")),
        400,
        /^ramsExecute refused: the mandate is revoked/,
      );
      expect(again.details).to.include({ reason: "revoked", check: "lifecycle" });
    });
  });
});
