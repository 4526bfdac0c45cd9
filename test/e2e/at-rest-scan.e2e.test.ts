import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { JsonRpcProvider, Transaction, Wallet, id as keccakId } from "ethers";
import { RAMS_COMPLIANCE_OWNER_INDEX, RAMS_ENFORCER_INDEX } from "../../scripts/lib/sandbox";
import { parseSelectorSpec, setupExecutor } from "../../service/operator/rams-setup";
import { runAdminCommand } from "../../service/operator/commands";
import { dataEncryptionKeyPath, adminTokenPath } from "../../service/runtime-files";
import { RegulatedTokenMock__factory, USDC__factory } from "../../typechain-types";
import { ramsPrepareSigned, send, x402Fetch, paymentTerms, type FetchLike } from "../../client/index";
import { documentedClient } from "../helpers/client";
import { addOperator, ConsoleClient } from "../helpers/console";
import { submitThroughLink, tokenOf } from "../helpers/kyc";
import { distinctClient, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";

/**
 * Issue 23's "Done when": after an end-to-end run on the embedded database on disk — client-signed calls under a key,
 * calls paid with x402 (client-signed and relayed, through hand-built payments and @x402/fetch), a payment released
 * without being used, KYC onboarding, RAMS (grant, relayed signed grant, execute, paid read) and a rejected batch
 * whose second signed transaction was never broadcast — every table's rows and every file of the data directory are
 * searched for what would let a reader act: EIP-3009 authorisation signatures, link tokens, API keys, private keys,
 * and raw signed transactions whose nonce is still free.
 */
describe("e2e: nothing usable at rest (a scan of the data directory and of every table after an end-to-end run)", function () {
  this.timeout(600_000);
  const SEPOLIA = 11155111;
  let sandbox: Sandbox;
  let service: TestService | undefined;
  let dataDir: string;
  let environmentDir: string;
  let api: ApiClient;
  let keyed: ApiClient;
  let sepolia: JsonRpcProvider;
  let base: JsonRpcProvider;

  /** Everything the run handled that must not be found usable at rest. */
  const secrets = {
    apiKeys: [] as string[],
    linkTokens: [] as string[],
    /** EIP-3009 authorisations: payer, nonce, validBefore and the signature. */
    authorizations: [] as { payer: string; nonce: string; validBefore: number; signature: string }[],
    /** Raw transactions signed in this test (client-signed sends). */
    signedRaws: [] as string[],
    privateKeys: [] as string[],
    /** The operator console's: a password, a one-time link's token, session tokens and a session's CSRF token. */
    console: [] as string[],
  };
  /** The rejected batch's second transaction, signed but never broadcast: its nonce is the signer's next one. */
  let neverBroadcast: string;
  /** Values the database holds in clear by design (a minted investor's wallet and e-mail, in the mint's records): the scan must find them. */
  const inClear: string[] = [];
  /** KYC details (issue 41): sealed, so in no row and no file; and e-mails that must not be in the KYC tables or events. */
  const kyc = { details: [] as string[], invitedOnly: [] as string[], emails: [] as string[] };
  let tableDump = "";
  const files: { path: string; bytes: Buffer }[] = [];

  const ok = (res: ApiResponse, label = "") => {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 202]);
    return res.body;
  };
  /** Keeps what an X-PAYMENT / PAYMENT-SIGNATURE header authorises. */
  const remember = (header: string | null) => {
    if (!header) return;
    const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    const { signature, authorization } = payload.payload;
    secrets.authorizations.push({
      payer: authorization.from,
      nonce: authorization.nonce,
      validBefore: Number(authorization.validBefore),
      signature,
    });
  };
  const pay = async (payer: Wallet, quote: Parameters<typeof payWithEthers>[1]) => {
    const header = await payWithEthers(payer, quote);
    remember(header);
    return header;
  };
  /** A typed client without a key paying its 402s through @x402/fetch, remembering each payment it makes. */
  const payingClient = async (payer: Wallet) => {
    const recording: FetchLike = (request) => {
      remember(request.headers.get("payment-signature") ?? request.headers.get("x-payment"));
      return fetch(request);
    };
    const terms = await paymentTerms(documentedClient(service!.url));
    return documentedClient(
      service!.url,
      undefined,
      await x402Fetch(payer, { ...terms, maxAmountPerPayment: "1000000" }, recording),
    );
  };
  /** prepare (keyed) → sign → send; the signed bytes are remembered. */
  const keyedCall = async (path: string, wallet: Wallet, body: Record<string, unknown>, envelope = false) => {
    const answer = ok(await keyed.post(path, { signerAddress: wallet.address, ...body }), path);
    const prepared = envelope ? answer.data : answer;
    const signedTransactions = await Promise.all(prepared.transactions.map((t: any) => wallet.signTransaction(t)));
    secrets.signedRaws.push(...signedTransactions);
    const sent = ok(
      await keyed.post("/send-transactions", { txId: prepared.txId, signedTransactions }),
      `${path} send`,
    );
    expect(sent.status, JSON.stringify(sent)).to.equal("success");
    return { prepared, sent };
  };
  const fundedWallet = async (provider: JsonRpcProvider) => {
    const wallet = new Wallet(Wallet.createRandom().privateKey, provider);
    secrets.privateKeys.push(wallet.privateKey);
    await (
      await sandbox.accounts[0].connect(provider).sendTransaction({ to: wallet.address, value: 10n ** 18n })
    ).wait();
    return wallet;
  };

  before(async () => {
    sandbox = await getSandbox();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-scan-"));
    // The data encryption key kept beside the database (no DATA_ENCRYPTION_KEY): the scan checks it stays out of it.
    service = await startTestService(sandbox, {
      dataDir,
      onDisk: true,
      env: { DATA_ENCRYPTION_KEY: undefined as unknown as string },
    });
    environmentDir = service.config.environmentDir;
    api = service.api;
    const { key } = await service.services.apiKeys.create({ email: "scan@at-rest.test", plan: "Enterprise" });
    secrets.apiKeys.push(key);
    secrets.apiKeys.push((await service.services.apiKeys.create({ email: "other@at-rest.test", plan: "Starter" })).key);
    keyed = api.withKey(key);
    secrets.privateKeys.push(...sandbox.accounts.map((a) => a.privateKey));
    sepolia = providerFor(sandbox.sepolia);
    base = providerFor(sandbox.baseSepolia);
  });
  after(async () => {
    sepolia?.destroy();
    base?.destroy();
    await service?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("the run: tokenization, KYC and a mint by e-mail under a key; x402 client-signed and relayed; a released payment; RAMS; a rejected batch", async () => {
    const services = service!.services;
    const issuer = await fundedWallet(sepolia);
    const payer = sandbox.accounts[2];
    const run = randomBytes(2).toString("hex").toUpperCase();
    const symbol = `A${run}`;
    await services.signers.add(issuer.address, "all-keys");

    // Under a key, client-signed: a tokenization; KYC for three investors (one approved and minted to by e-mail, one
    // left invited with a live link, one invited twice so its first link is void).
    await keyedCall("/prepare-transactions", issuer, {
      method: "newTokenization",
      chainId: "aa36a7",
      tokenizerEmail: `issuer-${run}@at-rest.test`,
      name: "At rest",
      tokenSymbol: symbol,
    });
    const investor = Wallet.createRandom();
    secrets.privateKeys.push(investor.privateKey);
    const invite = async (name: string) => {
      const res = ok(await keyed.post("/create-kyc-link", { email: `${name}-${run}@at-rest.test` }), "create-kyc-link");
      secrets.linkTokens.push(tokenOf(res.url));
      return res;
    };
    const letters = (n: number) => Array.from(randomBytes(n), (b) => String.fromCharCode(97 + (b % 26))).join("");
    const names = { first: `Alice${letters(6)}`, last: `Liddell${letters(6)}` };
    const alice = await invite("alice");
    ok(
      await submitThroughLink(api, alice.url, investor, {
        firstName: names.first,
        lastName: names.last,
        country: "GB",
      }),
      "kyc submit",
    );
    inClear.push(investor.address, `alice-${run}@at-rest.test`);
    await runAdminCommand(services, { command: "kyc.approve", email: `alice-${run}@at-rest.test` });
    await invite("bob");
    await invite("carol");
    await invite("carol");
    // One more submits and is rejected, with a reason.
    const dora = await invite("dora");
    const doraWallet = Wallet.createRandom();
    secrets.privateKeys.push(doraWallet.privateKey);
    const doraNames = { first: `Dora${letters(6)}`, last: `Explorer${letters(6)}` };
    ok(
      await submitThroughLink(api, dora.url, doraWallet, {
        firstName: doraNames.first,
        lastName: doraNames.last,
        country: "ES",
      }),
      "kyc submit",
    );
    const reason = `passport ${letters(8)} does not match`;
    await runAdminCommand(services, { command: "kyc.reject", email: `dora-${run}@at-rest.test`, reason });
    kyc.details.push(
      names.first,
      names.last,
      doraNames.first,
      doraNames.last,
      reason,
      doraWallet.address,
      `urn:kyc:first-name:${names.first}`,
      `urn:kyc:email:dora-${run}%40at-rest.test`,
    );
    kyc.invitedOnly.push(`bob-${run}@at-rest.test`, `carol-${run}@at-rest.test`, `dora-${run}@at-rest.test`);
    kyc.emails.push(`alice-${run}@at-rest.test`, ...kyc.invitedOnly);
    const minted = await keyedCall("/prepare-transactions", issuer, {
      method: "mintToken",
      chainId: "aa36a7",
      tokenSymbol: symbol,
      userToMint: [{ investorEmail: `alice-${run}@at-rest.test`, amount: "10" }],
    });
    expect(minted.prepared.transactions).to.have.length(2); // whitelist, then mint

    // x402 without a key, client-signed: half paid at prepare, half at send (hand-built payments, as the CLI builds them).
    await services.signers.add(payer.address, "all-keys");
    const agentBody = {
      method: "agentCreateToken",
      chainId: "84532",
      signerAddress: payer.address,
      name: "Paid",
      symbol: `P${run}`,
      agentWallet: payer.address,
    };
    const prepareQuote = quoteOf(await api.post("/prepare-transactions", agentBody, distinctClient())).accepts[0];
    const paidPrepare = ok(
      await api.post("/prepare-transactions", agentBody, {
        ...distinctClient(),
        "X-PAYMENT": await pay(payer, prepareQuote),
      }),
      "paid prepare",
    );
    const signed = [await payer.signTransaction(paidPrepare.transactions[0])];
    secrets.signedRaws.push(...signed);
    const sendQuote = quoteOf(
      await api.post("/send-transactions", { txId: paidPrepare.txId, signedTransactions: signed }),
    ).accepts[0];
    expect(
      ok(
        await api.post(
          "/send-transactions",
          { txId: paidPrepare.txId, signedTransactions: signed },
          { "X-PAYMENT": await pay(payer, sendQuote) },
        ),
      ).status,
    ).to.equal("success");

    // x402 relayed: a hand-built payment, and the typed client through @x402/fetch.
    const relayed = await prepareRelayedToken(api, `R${run}`, sandbox.accounts[6].address);
    const relayedQuote = quoteOf(await api.post("/send-transactions", { txId: relayed })).accepts[0];
    expect(
      ok(await api.post("/send-transactions", { txId: relayed }, { "X-PAYMENT": await pay(payer, relayedQuote) }))
        .status,
    ).to.equal("success");
    const paying = await payingClient(payer);
    const viaFetch = await send(paying, await prepareRelayedToken(api, `F${run}`, sandbox.accounts[6].address));
    expect(viaFetch.summary.status).to.equal("success");

    // A payment released without being used: a relayed operation that would revert (the factory's code swapped for
    // `revert(0, 0)` while it is sent) is refused before it is signed, and its payment released.
    const factory = sandbox.deployments[84532].contracts.AgentTokenFactory;
    const factoryCode = await base.getCode(factory);
    const refusedOp = await prepareRelayedToken(api, `X${run}`, sandbox.accounts[6].address);
    const refusedQuote = quoteOf(await api.post("/send-transactions", { txId: refusedOp })).accepts[0];
    await sandbox.baseSepolia.provider.request({ method: "hardhat_setCode", params: [factory, "0x60006000fd"] });
    try {
      const refusedSend = ok(
        await api.post("/send-transactions", { txId: refusedOp }, { "X-PAYMENT": await pay(payer, refusedQuote) }),
      );
      expect(refusedSend.status).to.equal("rejected");
      expect(refusedSend.payment.status).to.equal("released");
    } finally {
      await sandbox.baseSepolia.provider.request({ method: "hardhat_setCode", params: [factory, factoryCode] });
    }

    // RAMS: eligibility, the executor set up by the operator's code, a mandate granted by the principal's EIP-712
    // signature (relayed, paid through @x402/fetch), an execution under the key, a paid read.
    const admin = sandbox.accounts[0].connect(sepolia);
    const complianceOwner = sandbox.accounts[RAMS_COMPLIANCE_OWNER_INDEX];
    const [principal, agent] = [await fundedWallet(sepolia), await fundedWallet(sepolia)];
    const registry = sandbox.deployments[SEPOLIA].contracts.AgentMandate;
    const complianceProvider = sandbox.deployments[SEPOLIA].contracts.ComplianceProvider;
    const token = await new RegulatedTokenMock__factory(admin).deploy("Regulated", "RWA", admin.address);
    await token.waitForDeployment();
    const asset = await token.getAddress();
    for (const tx of [
      () => token.changeSendWhitelist(principal.address, true),
      () => token.changeReceiveWhitelist(principal.address, true),
      () => token.changeReceiveWhitelist(issuer.address, true),
      () => token.mint(principal.address, 1000n),
    ])
      await (await tx()).wait();
    for (const w of [complianceOwner, principal, agent]) await services.signers.add(w.address, "all-keys");
    const identityRef = keccakId(`kyc:at-rest-${run}`);
    await keyedCall("/x402/rams/grant-principal", complianceOwner, { principal: principal.address, identityRef }, true);
    const setup = await setupExecutor({
      provider: sepolia,
      chainId: SEPOLIA,
      registry,
      complianceProvider,
      principal: principal.address,
      selectors: [parseSelectorSpec("transferFrom:2")],
      asset,
      enforcer: sandbox.accounts[RAMS_ENFORCER_INDEX].address,
      keys: { admin: sandbox.accounts[0], principal },
    });
    await runAdminCommand(services, {
      command: "rams.executors.record",
      chainId: SEPOLIA,
      executor: setup.executor,
      registry: setup.registry,
      principal: setup.principal,
      owner: setup.owner,
    });
    const now = (await sepolia.getBlock("latest"))!.timestamp;
    const grant = {
      chainId: "aa36a7",
      agent: agent.address,
      principal: principal.address,
      validUntil: String(now + 86_400),
      identityRef,
      asset,
      maxTransactionValue: "100",
      maxCumulativeValue: "500",
      actions: ["0x23b872dd"],
    };
    const { prepared: grantPrepared } = await ramsPrepareSigned(
      paying,
      "grant-mandate",
      grant,
      principal,
      { executionMode: "service-relayed" },
      distinctClient(),
    );
    expect((await send(paying, grantPrepared.txId)).summary.status).to.equal("success");
    await keyedCall(
      "/x402/rams/execute",
      agent,
      { asset, from: principal.address, to: issuer.address, amount: "10" },
      true,
    );
    const canExecute = await paying.GET("/rams/can-execute", {
      params: {
        query: {
          chainId: "aa36a7",
          agent: agent.address,
          principal: principal.address,
          asset,
          amount: "1",
          selector: "0x23b872dd",
        },
      },
    });
    expect(canExecute.response.status).to.equal(200);

    // Last for the issuer: a two-transaction mint whose first transaction the node refuses (its nonce was used
    // meanwhile), so the batch ends rejected and its second signed transaction is never broadcast.
    const fresh = Wallet.createRandom().address;
    const rejected = ok(
      await keyed.post("/prepare-transactions", {
        method: "mintToken",
        chainId: "aa36a7",
        signerAddress: issuer.address,
        tokenSymbol: symbol,
        userToMint: [{ investorAddress: fresh, amount: "1" }],
      }),
    );
    expect(rejected.transactions).to.have.length(2);
    const rejectedSigned = await Promise.all(rejected.transactions.map((t: any) => issuer.signTransaction(t)));
    secrets.signedRaws.push(...rejectedSigned);
    neverBroadcast = rejectedSigned[1];
    await (await issuer.sendTransaction({ to: issuer.address, value: 0 })).wait();
    const refused = ok(
      await keyed.post("/send-transactions", { txId: rejected.txId, signedTransactions: rejectedSigned }),
    );
    expect(refused.status, JSON.stringify(refused)).to.equal("rejected");
    expect(
      await sepolia.getTransactionCount(issuer.address, "latest"),
      "the never-broadcast transaction could be sent by anyone holding it",
    ).to.equal(Transaction.from(neverBroadcast).nonce);

    // The operator console: an operator signed in with a password, another with a one-time link; a key made there.
    const consolePassword = "at rest console password";
    await addOperator(services, "ops@at-rest.test", "admin", consolePassword);
    const linked = await addOperator(services, "link@at-rest.test", "viewer");
    const linkToken = new URL(linked.signInLink!.url).searchParams.get("token")!;
    const byPassword = new ConsoleClient(service!.url);
    ok(await byPassword.signIn({ email: "ops@at-rest.test", password: consolePassword }), "console sign-in");
    const byLink = new ConsoleClient(service!.url);
    ok(await byLink.signIn({ token: linkToken }), "console link");
    secrets.apiKeys.push(
      ok(await byPassword.post("/console/api/keys", { email: "console@at-rest.test", plan: "Starter" }), "console key")
        .apiKey,
    );
    secrets.console.push(
      consolePassword,
      linkToken,
      byPassword.setCookie!.split("=")[1],
      byLink.setCookie!.split("=")[1],
      byPassword.csrfToken!,
    );

    // Every payment of the run has ended.
    const states = await services.db.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM payments GROUP BY status ORDER BY status",
    );
    expect(states.map((s) => s.status)).to.deep.equal(["released", "settled"]);
    expect(secrets.authorizations.length).to.be.at.least(8);
    expect(secrets.linkTokens).to.have.length(5);

    // Read every row of every table while the service runs, then stop it and read every file it left.
    tableDump = await dumpTables(service!);
    await service!.stop();
    service = undefined;
    for (const file of walk(environmentDir))
      files.push({ path: path.relative(environmentDir, file), bytes: fs.readFileSync(file) });
    expect(files.some((f) => f.path.startsWith("pglite/"))).to.equal(true);
  });

  /** Where a needle occurs: table rows (text) and files (bytes). The run must have completed. */
  const occurrences = (needles: (string | Buffer)[]) => {
    expect(tableDump, "the run completed and the tables were read").not.to.equal("");
    expect(files.length, "the files were read").to.be.above(0);
    const found: string[] = [];
    for (const needle of needles) {
      if (typeof needle === "string" && tableDump.toLowerCase().includes(needle.toLowerCase()))
        found.push(`tables: ${String(needle).slice(0, 16)}…`);
      for (const f of files)
        if (f.bytes.includes(needle))
          found.push(
            `${f.path}: ${typeof needle === "string" ? needle.slice(0, 16) : needle.toString("hex").slice(0, 16)}…`,
          );
    }
    return found;
  };
  const hexForms = (hex: string) => {
    const bare = hex.replace(/^0x/, "").toLowerCase();
    return [bare, bare.toUpperCase(), Buffer.from(bare, "hex")];
  };

  it("the scan reads what is there: what the database keeps in clear by design (a minted investor's wallet and e-mail, in the mint's records) is found in the rows and in the database's files", () => {
    for (const value of inClear) {
      const found = occurrences([value]);
      expect(
        found.some((f) => f.startsWith("tables:")),
        value,
      ).to.equal(true);
      expect(
        found.some((f) => f.startsWith("pglite/")),
        value,
      ).to.equal(true);
    }
  });

  it("no KYC detail in any row or file: the investors' names, the signed messages, a rejection's reason, a wallet only KYC knows, the e-mails of investors only onboarded; no investor e-mail in the KYC tables or in any event's payload", () => {
    expect(kyc.details.length).to.be.at.least(8);
    for (const value of [...kyc.details, ...kyc.invitedOnly])
      expect(occurrences([value, value.replace(/^0x/, "")]), value).to.deep.equal([]);
    const rowsOf = (table: string) =>
      tableDump
        .split("\n")
        .filter((line) => line.startsWith(`${table}\t`))
        .join("\n")
        .toLowerCase();
    expect(rowsOf("kyc_investors"), "the scan read the investors").not.to.equal("");
    expect(rowsOf("events"), "the scan read the events").to.include("kyc.approved");
    for (const table of ["kyc_investors", "kyc_links", "kyc_events", "events"]) {
      for (const email of kyc.emails) expect(rowsOf(table), `${email} in ${table}`).not.to.include(email.toLowerCase());
    }
    // (A mint's transaction events carry its calldata, which names the wallet as the chain does; the KYC events do not.)
    const kycEvents = rowsOf("events")
      .split("\n")
      .filter((line) => line.includes('"type":"kyc.'));
    expect(kycEvents.length, "the KYC events were read").to.be.at.least(3);
    for (const line of kycEvents)
      expect(line, "a KYC event names no wallet").not.to.include(inClear[0].slice(2).toLowerCase());
  });

  it("no EIP-3009 authorisation signature, whole or as its r or s, in any row or file; the released one is still unused on chain and would be usable", async () => {
    const usdc = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, base);
    let unusedAndValid = 0;
    for (const a of secrets.authorizations) {
      const sig = a.signature.replace(/^0x/, "");
      expect(
        occurrences([...hexForms(sig), ...hexForms(sig.slice(0, 64)), ...hexForms(sig.slice(64, 128))]),
        `signature of ${a.nonce}`,
      ).to.deep.equal([]);
      if (!(await usdc.authorizationState(a.payer, a.nonce)) && a.validBefore > Date.now() / 1000) unusedAndValid++;
    }
    expect(unusedAndValid, "the released payment's authorisation").to.be.at.least(1);
  });

  it("no link token, no API key, no private key, no console password or token in any row or file; the data encryption key and the admin token are not in the database", () => {
    for (const token of secrets.linkTokens) expect(occurrences([token]), "link token").to.deep.equal([]);
    for (const key of secrets.apiKeys) {
      const secret = key.replace(/^tak_[0-9a-f]{16}_/, "");
      expect(secret).to.have.length(43);
      expect(occurrences([key, secret]), "API key").to.deep.equal([]);
    }
    for (const key of secrets.privateKeys) expect(occurrences(hexForms(key)), "private key").to.deep.equal([]);
    expect(secrets.console).to.have.length(5);
    for (const value of secrets.console) expect(occurrences([value]), "console password or token").to.deep.equal([]);
    const besideTheDatabase = [dataEncryptionKeyPath, adminTokenPath].map((file) =>
      fs.readFileSync(file(configOf(environmentDir)), "utf8").trim(),
    );
    const inDatabase = files
      .filter((f) => f.path.startsWith("pglite/"))
      .filter((f) => besideTheDatabase.some((s) => f.bytes.includes(s)));
    expect(inDatabase.map((f) => f.path)).to.deep.equal([]);
    for (const s of besideTheDatabase) expect(tableDump.includes(s)).to.equal(false);
  });

  it("no raw signed transaction in any row or file: neither the rejected batch's unsent one (usable: its nonce is the signer's next) nor any the clients or the service signed", async () => {
    expect(occurrences([neverBroadcast.slice(2)]), "the never-broadcast transaction").to.deep.equal([]);
    // What the service itself signed (relayed transactions, settlements), as the chains hold them.
    const hashes = new Set(
      tableDump
        .toLowerCase()
        .match(/"(?:tx_hash|settle_tx_hash)":"(0x[0-9a-f]{64})"/g)
        ?.map((m) => m.slice(-67, -1)) ?? [],
    );
    const sentByService: string[] = [];
    for (const hash of hashes) {
      const onChain = (await sepolia.getTransaction(hash)) ?? (await base.getTransaction(hash));
      if (onChain) sentByService.push(Transaction.from(onChain).serialized);
    }
    expect(sentByService.length, "transactions found by their hashes").to.be.at.least(14);
    for (const raw of [...secrets.signedRaws, ...sentByService])
      expect(occurrences([raw.slice(2).toLowerCase()]), `signed transaction ${raw.slice(0, 24)}…`).to.deep.equal([]);
    expect(
      tableDump.toLowerCase().match(/0x0[12]f[89][0-9a-f]{100,}/g) ?? [],
      "anything that looks like a signed EIP-1559 transaction",
    ).to.deep.equal([]);
  });

  it("a payment's row keeps accounting facts only: payer, amount, nonce, validity, the quote, the settlement transaction's hash", () => {
    expect(tableDump, "the run completed and the tables were read").not.to.equal("");
    const rows = tableDump
      .split("\n")
      .filter((line) => line.startsWith("payments\t"))
      .map((line) => JSON.parse(line.slice("payments\t".length)));
    expect(rows.length).to.be.at.least(8);
    for (const row of rows) {
      expect(row, JSON.stringify(row)).to.include({ payload: null, payload_sealed: null, settle_tx_raw: null });
      expect(Object.keys(row).sort()).to.deep.equal(
        [
          "amount",
          "asset",
          "authorization_nonce",
          "created_at",
          "id",
          "network",
          "pay_to",
          "payer",
          "payload",
          "payload_sealed",
          "release_reason",
          "requirements",
          "route",
          "settle_in_operation",
          "settle_tx_from",
          "settle_tx_hash",
          "settle_tx_nonce",
          "settle_tx_raw",
          "settle_tx_replaced",
          "settlement",
          "status",
          "subject",
          "tx_id",
          "updated_at",
          "valid_before",
        ].sort(),
      );
      // Settlement transactions replaced with higher fees are remembered by hash only once the payment ended.
      for (const replaced of row.settle_tx_replaced) expect(Object.keys(replaced)).to.deep.equal(["hash"]);
      if (row.status === "settled") expect(row.settle_tx_hash).to.match(/^0x[0-9a-f]{64}$/);
      else expect(row.release_reason).to.be.a("string");
    }
  });
});

/** Every row of every table of the service's schema, one `table<TAB>json` line per row. */
async function dumpTables(service: TestService): Promise<string> {
  const { db } = service.services;
  const tables = await db.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
  );
  expect(tables.map((t) => t.name)).to.include.members([
    "payments",
    "kyc_links",
    "batch_transactions",
    "api_keys",
    "batches",
  ]);
  const lines: string[] = [];
  for (const { name } of tables) {
    for (const row of await db.query<{ r: string }>(`SELECT row_to_json(t)::text AS r FROM "${name}" t`))
      lines.push(`${name}\t${row.r}`);
  }
  return lines.join("\n");
}

function walk(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.isFile() ? [path.join(dir, e.name)] : []));
}

/** The bits of a Config the runtime-file paths need. */
const configOf = (environmentDir: string) => ({ environmentDir });
