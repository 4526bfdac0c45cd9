import { Writable } from "node:stream";
import { expect } from "chai";
import pino from "pino";
import { concat, decodeRlp, encodeRlp, Wallet } from "ethers";
import { execute, prepareAndSign } from "../helpers/flow";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";

/**
 * Hostile input and tenants (issue: hardening), one test per class: inputs that used to end in a 500, tenant isolation
 * of tokenizer e-mails, secrets never stored or logged, signed transactions the service did not prepare, reported
 * hashes that never appear, and validation gaps. Each refusal is checked to have written nothing.
 */
describe("e2e: hostile input and tenants", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let keyA: ApiClient;
  let keyB: ApiClient;
  let keyBId: string;
  let issuer: Wallet;
  let holder: Wallet;
  const logLines: string[] = [];
  const run = Math.random()
    .toString(36)
    .slice(2, 5)
    .toUpperCase()
    .replace(/[^A-Z]/g, "Q");
  const symbol = `HA${run}`;
  const chainId = "aa36a7";

  const expectError = (res: ApiResponse, status: number, message: RegExp | string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    if (typeof message === "string") expect(res.body.message).to.equal(message);
    else expect(res.body.message).to.match(message);
  };
  const batchCount = async () =>
    Number((await service.services.db.query<{ n: string }>("SELECT count(*)::text AS n FROM batches"))[0].n);
  const whitelistBody = (address: string, extra: Record<string, unknown> = {}) => ({
    method: "whitelist",
    chainId,
    tokenSymbol: symbol,
    userToWhitelist: [{ investorAddress: address, investorEmail: "inv@hardening.test", whitelistStatus: true }],
    ...extra,
  });

  before(async () => {
    sandbox = await getSandbox();
    // Every log line the service writes, at debug level, to check that no secret or body reaches the logs.
    const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
    service = await startTestService(sandbox, {
      env: { RECEIPT_TIMEOUT_MS: "3000" },
      logger: pino({ level: "debug" }, sink),
    });
    api = service.api;
    issuer = sandbox.accounts[1];
    holder = sandbox.accounts[2];
    for (const w of [issuer, holder]) await service.services.signers.add(w.address, "all-keys");
    keyA = api.withKey((await service.services.apiKeys.create({ email: "a@hardening.test", plan: "Enterprise" })).key);
    const b = await service.services.apiKeys.create({ email: "b@hardening.test", plan: "Enterprise" });
    keyB = api.withKey(b.key);
    keyBId = b.record.id;
    await execute(keyA, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "victim@hardening.test",
      name: "Hardening Ltd",
      tokenSymbol: symbol,
      preMints: [{ amount: "100" }],
      initialHolders: [{ walletAddress: holder.address, email: "holder@hardening.test" }],
    });
  });
  after(async () => service?.stop());

  describe("inputs that used to answer 500", () => {
    it("amounts beyond uint256 after scaling by the token's decimals → 400 naming the field", async () => {
      const before = await batchCount();
      const mint = (amount: unknown) =>
        keyA.post("/prepare-transactions", {
          method: "mintToken",
          chainId,
          signerAddress: issuer.address,
          tokenSymbol: symbol,
          userToMint: [{ investorEmail: "holder@hardening.test", investorAddress: holder.address, amount }],
        });
      expectError(await mint("1" + "0".repeat(100)), 400, /userToMint\.0\.amount (is too large|has too many digits)/);
      expectError(await mint("1" + "0".repeat(70)), 400, /exceeds uint256/);
      expectError(await mint(1e308), 400, /above 2\^53/);
      expectError(await mint(2 ** 60), 400, /send it as a decimal string/);
      expect(await batchCount()).to.equal(before);
    });

    it("NUL characters and unpaired surrogates anywhere → 400 naming the field; nothing reaches the database", async () => {
      const before = await batchCount();
      expectError(
        await keyA.post(
          "/prepare-transactions",
          whitelistBody(holder.address, { signerAddress: issuer.address, tokenSymbol: "A\u0000B" }),
        ),
        400,
        "tokenSymbol contains a NUL character",
      );
      expectError(
        await keyA.post(
          "/prepare-transactions",
          whitelistBody(holder.address, { signerAddress: issuer.address, junk: { deep: ["x\u0000"] } }),
        ),
        400,
        "junk.deep.0 contains a NUL character",
      );
      expectError(
        await keyA.post(
          "/prepare-transactions",
          whitelistBody(holder.address, { signerAddress: issuer.address, ["k\u0000"]: 1 }),
        ),
        400,
        /contains a NUL character/,
      );
      expectError(
        await keyA.post(
          "/prepare-transactions",
          whitelistBody(holder.address, { signerAddress: issuer.address, note: "\uD800" }),
        ),
        400,
        "note contains an unpaired UTF-16 surrogate (not valid Unicode text)",
      );
      expectError(
        await keyA.get("/get-token-info", { tokenSymbol: "A\u0000" }),
        400,
        "tokenSymbol contains a NUL character",
      );
      expect(await batchCount()).to.equal(before);
    });

    it("a signed transaction or a reported hash already recorded for another batch → 409 naming that txId", async () => {
      const first = await prepareAndSign(
        keyA,
        issuer,
        whitelistBody(sandbox.accounts[11].address, { signerAddress: issuer.address }),
      );
      const sent = await keyA.post("/send-transactions", {
        txId: first.prepared.txId,
        signedTransactions: first.signedTransactions,
      });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      const second = await prepareAndSign(
        keyA,
        issuer,
        whitelistBody(sandbox.accounts[12].address, { signerAddress: issuer.address }),
      );
      const replay = await keyA.post("/send-transactions", {
        txId: second.prepared.txId,
        signedTransactions: first.signedTransactions,
      });
      expect(replay.status).to.equal(400); // another batch's bytes do not match this batch's prepared transaction
      const keyId = (await service.services.apiKeys.verify(keyA.apiKey!))!.id;
      const credits = (await service.services.credits.balances(keyId)).whitelist;
      const reported = await keyA.post("/send-transactions", {
        txId: second.prepared.txId,
        txHash: sent.body.txHashes[0],
      });
      expectError(reported, 409, new RegExp(`already recorded for another batch, txId ${first.prepared.txId}`));
      expect(reported.body.error.details.txId).to.equal(first.prepared.txId);
      expect((await keyA.get("/get-transaction-status", { txId: second.prepared.txId })).body.status).to.equal(
        "prepared",
      );
      expect((await service.services.credits.balances(keyId)).whitelist, "no credit spent on a refused send").to.equal(
        credits,
      );
    });
  });

  describe("tenant isolation: a tokenizer e-mail belongs to the key that first tokenized with it", () => {
    it("another key's newTokenization with that e-mail → 403; nothing is prepared", async () => {
      const before = await batchCount();
      const res = await keyB.post("/prepare-transactions", {
        method: "newTokenization",
        chainId,
        signerAddress: issuer.address,
        tokenizerEmail: "VICTIM@hardening.test",
        name: "Squat",
        tokenSymbol: `HB${run}`,
      });
      expectError(res, 403, /tokenizerEmail VICTIM@hardening.test belongs to another API key/);
      expect(await batchCount()).to.equal(before);
    });

    it("every read and method of rule 4 answers 403 Unauthorized token symbol to the other key", async () => {
      const offering = await service.services.db.query<{ id: string }>("SELECT gen_random_uuid()::text AS id");
      const reads: [string, Record<string, string>][] = [
        ["/get-token-info", { tokenSymbol: symbol }],
        ["/get-tokenizer-info", { tokenSymbol: symbol }],
        ["/get-stos", { tokenSymbol: symbol }],
        ["/get-sto-by-id", { tokenSymbol: symbol, id: offering[0].id }],
        ["/get-sto-balance", { tokenSymbol: symbol, id: offering[0].id }],
        ["/get-investments-by-sto-id", { tokenSymbol: symbol, id: offering[0].id }],
        ["/get-investor-info", { tokenSymbol: symbol, email: "holder@hardening.test" }],
        ["/get-whitelist-status", { tokenSymbol: symbol, investorAddress: holder.address }],
        ["/get-allowance", { tokenSymbol: symbol, ownerAddress: holder.address, spenderAddress: issuer.address }],
        ["/get-balance-whitelist", { tokenSymbol: symbol, investorAddress: holder.address }],
        ["/get-dividend-distribution", { tokenSymbol: symbol }],
      ];
      for (const [path, query] of reads) {
        expectError(await keyB.get(path, query), 403, "Unauthorized token symbol");
        expect((await keyA.get(path, query)).status, path).to.not.equal(403);
      }
      expect((await keyB.get("/get-token-info")).body.tokenSymbols).to.not.include(symbol);
      const methods: Record<string, unknown>[] = [
        whitelistBody(holder.address),
        {
          method: "mintToken",
          tokenSymbol: symbol,
          userToMint: [{ investorEmail: "holder@hardening.test", investorAddress: holder.address, amount: "1" }],
        },
        { method: "burnToken", tokenSymbol: symbol, amount: "1", investorEmail: "holder@hardening.test" },
        { method: "transferTo", tokenSymbol: symbol, to: issuer.address, amount: "1" },
        { method: "approve", tokenSymbol: symbol, spenderAddress: issuer.address, amount: "1" },
        { method: "dividendDistribution", tokenSymbol: symbol, amount: "1" },
        { method: "closeOffer", tokenSymbol: symbol, tokenizerEmail: "victim@hardening.test" },
      ];
      for (const body of methods) {
        const res = await keyB.post("/prepare-transactions", { chainId, signerAddress: issuer.address, ...body });
        expectError(res, 403, "Unauthorized token symbol");
      }
    });

    it("the operator binds the e-mail to the other key (admin command): it may then read", async () => {
      const { runAdminCommand } = await import("../../service/operator/commands");
      await runAdminCommand(service.services, {
        command: "keys.bind-email",
        keyId: keyBId,
        email: "victim@hardening.test",
      });
      expect((await keyB.get("/get-token-info", { tokenSymbol: symbol })).status).to.equal(200);
      await runAdminCommand(service.services, {
        command: "keys.unbind-email",
        keyId: keyBId,
        email: "victim@hardening.test",
      });
      expectError(await keyB.get("/get-token-info", { tokenSymbol: symbol }), 403, "Unauthorized token symbol");
    });
  });

  describe("secrets are never stored or logged", () => {
    it("a body with a private key, mnemonic or seed anywhere → 400 'never send a private key'", async () => {
      const before = await batchCount();
      for (const field of [
        { privateKey: "0x" + "11".repeat(32) },
        { wallet: { mnemonic: "test test test" } },
        { userToWhitelist: [{ seed: "x" }] },
        { options: { private_key: "x" } },
        { SeedPhrase: "x" },
      ]) {
        const res = await keyA.post("/prepare-transactions", {
          ...whitelistBody(holder.address, { signerAddress: issuer.address }),
          ...field,
        });
        expectError(res, 400, /never send a private key or seed phrase to this service/);
      }
      expectError(
        await api.post("/x402/agent/register", { privateKey: "0x" + "22".repeat(32), name: "x" }),
        400,
        /^privateKey: never send a private key/,
      );
      expect(await batchCount()).to.equal(before);
    });

    it("unknown keys are dropped before the batch is stored; no log line carries bodies, keys, signatures or payment headers", async () => {
      const marker = `MARKER${run}${Date.now()}`;
      const { prepared, signedTransactions } = await prepareAndSign(keyA, issuer, {
        ...whitelistBody(sandbox.accounts[13].address),
        note: marker,
        nested: { deep: { value: marker } },
        userToWhitelist: [
          {
            investorAddress: sandbox.accounts[13].address,
            investorEmail: "inv@hardening.test",
            whitelistStatus: true,
            extra: marker,
          },
        ],
      });
      const [row] = await service.services.db.query<{ body: unknown }>("SELECT body FROM batches WHERE tx_id = $1", [
        prepared.txId,
      ]);
      expect(JSON.stringify(row.body)).to.not.include(marker);
      expect(row.body).to.have.property("userToWhitelist");
      const sent = await keyA.post(
        "/send-transactions",
        { txId: prepared.txId, signedTransactions },
        { "X-PAYMENT": `payment-${marker}` },
      );
      expect(sent.status).to.equal(200);
      const logs = logLines.join("");
      expect(logs.length).to.be.greaterThan(0);
      for (const secret of [marker, keyA.apiKey!, signedTransactions[0].slice(2, 80), "payment-"])
        expect(logs, secret.slice(0, 20)).to.not.include(secret);
    });
  });

  describe("signed transactions the service did not prepare", () => {
    it("gas limit, a max fee beyond 3× the prepared one, a legacy type-0 transaction, an access list → 400 naming the field; fees within the bound pass", async () => {
      const { prepared } = await prepareAndSign(
        keyA,
        issuer,
        whitelistBody(sandbox.accounts[14].address, { signerAddress: issuer.address }),
      );
      const tx = prepared.transactions[0];
      const maxFee = BigInt(tx.maxFeePerGas);
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ["gasLimit", { gasLimit: BigInt(tx.gasLimit) + 1n }, /gasLimit does not match/],
        [
          "maxFeePerGas ×50",
          { maxFeePerGas: maxFee * 50n },
          /maxFeePerGas does not match the prepared transaction \(expected at most/,
        ],
        [
          "legacy",
          { type: 0, gasPrice: maxFee, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined },
          /type does not match/,
        ],
        ["accessList", { accessList: [{ address: issuer.address, storageKeys: [] }] }, /accessList does not match/],
      ];
      for (const [label, override, message] of cases) {
        const raw = await issuer.signTransaction({ ...tx, ...override });
        const res = await keyA.post("/send-transactions", { txId: prepared.txId, signedTransactions: [raw] });
        expectError(res, 400, message);
        expect(res.body.error.details.transactionIndex, label).to.equal(0);
      }
      // Signed bytes that decode to the prepared transaction but are not its canonical encoding (value 0 as a zero byte
      // instead of the empty string): the chain would name them by a hash that differs from the one ethers computes.
      const fields = decodeRlp("0x" + (await issuer.signTransaction(tx)).slice(4)) as string[];
      fields[6] = "0x00";
      const odd = await keyA.post("/send-transactions", {
        txId: prepared.txId,
        signedTransactions: [concat(["0x02", encodeRlp(fields)])],
      });
      expectError(odd, 400, "signedTransactions[0] is not canonically encoded");
      const repriced = await issuer.signTransaction({ ...tx, maxFeePerGas: maxFee * 2n });
      const ok = await keyA.post("/send-transactions", { txId: prepared.txId, signedTransactions: [repriced] });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body.status).to.equal("success");
    });
  });

  describe("a reported hash that never appears", () => {
    it("after RECEIPT_TIMEOUT_MS the batch is rejected with a reason, the credit comes back, and the right hash may be reported for the same txId", async () => {
      const keyRecord = (await service.services.apiKeys.verify(keyA.apiKey!))!;
      const balance = (await service.services.credits.balances(keyRecord.id)).whitelist;
      const { prepared, signedTransactions } = await prepareAndSign(keyA, issuer, {
        ...whitelistBody(sandbox.accounts[15].address, { signerAddress: issuer.address }),
        executionMode: "client-broadcast",
      });
      // A hash no node knows claims nothing: refused, the batch as it was.
      const bogus = "0x" + "ab".repeat(32);
      expectError(
        await keyA.post("/send-transactions", { txId: prepared.txId, txHash: bogus }),
        400,
        /is not a transaction chain 11155111's node knows/,
      );
      expect((await keyA.get("/get-transaction-status", { txId: prepared.txId })).body.status).to.equal("prepared");
      // A hash the node knew when it was reported, then dropped from its pool: never mined, so rejected after the timeout.
      const node = sandbox.sepolia.provider;
      await node.request({ method: "evm_setAutomine", params: [false] });
      let status: any;
      try {
        const pending = await providerFor(sandbox.sepolia).broadcastTransaction(signedTransactions[0]);
        const reported = await keyA.post("/send-transactions", { txId: prepared.txId, txHash: pending.hash });
        expect(reported.status, JSON.stringify(reported.body)).to.be.oneOf([200, 202]);
        await node.request({ method: "hardhat_dropTransaction", params: [pending.hash] });
        for (let i = 0; i < 40; i++) {
          status = (await keyA.get("/get-transaction-status", { txId: prepared.txId })).body;
          if (status.status === "rejected") break;
          await new Promise((r) => setTimeout(r, 250));
        }
      } finally {
        await node.request({ method: "evm_setAutomine", params: [true] });
      }
      expect(status.status, JSON.stringify(status)).to.equal("rejected");
      expect(status.error).to.match(/did not appear on chain 11155111 within 3 s/);
      expect((await service.services.credits.balances(keyRecord.id)).whitelist).to.equal(balance);
      // The client broadcasts the real transaction itself and reports its hash for the same txId.
      const real = await providerFor(sandbox.sepolia).broadcastTransaction(signedTransactions[0]);
      const again = await keyA.post("/send-transactions", { txId: prepared.txId, txHash: real.hash });
      expect(again.status, JSON.stringify(again.body)).to.equal(200);
      expect(again.body.status).to.equal("success");
      expect((await service.services.credits.balances(keyRecord.id)).whitelist).to.equal(balance - 1);
      expectError(
        await keyA.post("/send-transactions", { txId: prepared.txId, txHash: real.hash }),
        409,
        /already sent/,
      );
    });
  });

  describe("validation gaps", () => {
    it("nonce and gasLimit beyond their ranges, a wrong EIP-55 checksum, the zero tokenizerAddress, a wrong-typed chainId → 400 saying what was expected", async () => {
      const before = await batchCount();
      const base = whitelistBody(holder.address, { signerAddress: issuer.address });
      expectError(
        await keyA.post("/prepare-transactions", { ...base, nonce: "12345678901234567890123" }),
        400,
        /^nonce must be at most 2\^53-1/,
      );
      expectError(
        await keyA.post("/prepare-transactions", { ...base, nonce: 1e23 }),
        400,
        /^nonce is a JSON number above 2\^53/,
      );
      expectError(
        await keyA.post("/prepare-transactions", { ...base, gasLimit: "99999999999" }),
        400,
        /^gasLimit must be at most 50,000,000/,
      );
      expectError(
        await keyA.post("/prepare-transactions", { ...base, gasLimit: "100" }),
        400,
        /^gasLimit must be at least 21000/,
      );
      const checksummed = holder.address;
      const typo = checksummed.slice(0, 2) + checksummed.slice(2).replace(/[a-f]/, (c) => c.toUpperCase());
      expectError(
        await keyA.post("/prepare-transactions", whitelistBody(typo, { signerAddress: issuer.address })),
        400,
        /userToWhitelist\.0\.investorAddress has an invalid EIP-55 checksum/,
      );
      expect(
        (
          await keyA.post(
            "/prepare-transactions",
            whitelistBody(checksummed.toLowerCase(), { signerAddress: issuer.address }),
          )
        ).status,
      ).to.equal(200);
      expectError(
        await keyA.post("/prepare-transactions", {
          method: "newTokenization",
          chainId,
          signerAddress: issuer.address,
          tokenizerEmail: "victim@hardening.test",
          name: "Z",
          tokenSymbol: `HZ${run}`,
          tokenizerAddress: "0x0000000000000000000000000000000000000000",
        }),
        400,
        "tokenizerAddress must not be the zero address",
      );
      expectError(
        await keyA.post("/prepare-transactions", { ...base, chainId: true }),
        400,
        "chainId must be a chain id (decimal, 0x hex or a hex code such as aa36a7), not a boolean",
      );
      expectError(
        await keyA.post("/prepare-transactions", { ...base, signerAddress: 12 }),
        400,
        "signerAddress must be a string, not a number",
      );
      expect(await batchCount()).to.equal(before + 1); // only the lower-case address prepared
    });
  });
});
