import { expect } from "chai";
import { Transaction, Wallet, type TransactionLike } from "ethers";
import { execute, prepareAndSign } from "../helpers/flow";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";

/** The error body every failure has. */
function expectError(res: { status: number; body: any }, status: number, message?: string | RegExp) {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.error).to.be.an("object");
  expect(res.body.error.code).to.be.a("string");
  expect(res.body.message).to.equal(res.body.error.message);
  if (typeof message === "string") expect(res.body.message).to.equal(message);
  else if (message) expect(res.body.message).to.match(message);
}

describe("errors: the error answers clients rely on, bad bodies and send mismatches", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let issuer: Wallet;
  let stranger: Wallet;
  const chainId = "aa36a7";
  const symbol = "ERRS";

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    issuer = sandbox.accounts[1];
    stranger = sandbox.accounts[7];
    const { key } = await service.services.apiKeys.create({ email: "ops@errors.test", plan: "Starter" });
    api = service.api.withKey(key);
    for (const i of [1, 2, 3]) await service.services.signers.add(sandbox.accounts[i].address, "all-keys");
    await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "issuer@errors.test",
      name: "Errors Inc",
      tokenSymbol: symbol,
      preMints: [{ amount: "100" }],
      initialHolders: [{ walletAddress: sandbox.accounts[2].address }],
    });
  });
  after(async () => service?.stop());

  const whitelistBody = (address: string) => ({
    method: "whitelist",
    chainId,
    tokenSymbol: symbol,
    userToWhitelist: [{ investorAddress: address, investorEmail: "x@errors.test", whitelistStatus: true }],
  });

  describe("credentials", () => {
    it("401 API key is required for this endpoint (get-token-info without a key)", async () => {
      expectError(await service.api.get("/get-token-info"), 401, "API key is required for this endpoint");
    });
    it("401 API key is required for this method (tokenization prepare without a key)", async () => {
      expectError(
        await service.api.post("/prepare-transactions", {
          ...whitelistBody(stranger.address),
          signerAddress: issuer.address,
        }),
        401,
        "API key is required for this method",
      );
      expectError(
        await service.api.post("/prepare-transactions/whitelist", {
          ...whitelistBody(stranger.address),
          signerAddress: issuer.address,
        }),
        401,
        "API key is required for this method",
      );
    });
    it("401 Invalid API key for an unknown or revoked key", async () => {
      expectError(
        await service.api.withKey("tak_0000000000000000_" + "A".repeat(43)).get("/get-token-info"),
        401,
        "Invalid API key",
      );
      const { key, record } = await service.services.apiKeys.create({ email: "gone@errors.test", plan: "Starter" });
      await service.services.apiKeys.revoke(record.id);
      expectError(await service.api.withKey(key).get("/get-token-info"), 401, "Invalid API key");
    });
    it("403 Unauthorized token symbol for a symbol tokenized under another key", async () => {
      const { key } = await service.services.apiKeys.create({ email: "other@errors.test", plan: "Starter" });
      const other = service.api.withKey(key);
      expectError(await other.get("/get-token-info", { tokenSymbol: symbol }), 403, "Unauthorized token symbol");
      expectError(
        await other.post("/prepare-transactions", {
          ...whitelistBody(stranger.address),
          signerAddress: issuer.address,
        }),
        403,
        "Unauthorized token symbol",
      );
      // payment-token symbols are exempt
      const usdc = await other.get("/get-allowance", {
        tokenSymbol: "USDC",
        chainId,
        ownerAddress: issuer.address,
        spenderAddress: stranger.address,
      });
      expect(usdc.status).to.equal(200);
    });
    it("403 for a signer the operator has not whitelisted", async () => {
      expectError(
        await api.post("/prepare-transactions", {
          ...whitelistBody(stranger.address),
          signerAddress: stranger.address,
        }),
        403,
        /not whitelisted/,
      );
    });
    it("400 when the signer is neither the tokenizer of the token nor holds the role the write needs", async () => {
      expectError(
        await api.post("/prepare-transactions", {
          ...whitelistBody(stranger.address),
          signerAddress: sandbox.accounts[2].address,
        }),
        400,
        /does not hold WHITELISTER.*only the tokenizer \(0x[0-9a-fA-F]{40}\) or an agent it granted/,
      );
    });
    it("that refusal comes first although the role is checked beside the rest of the plan (an e-mail with no known wallet)", async () => {
      const body = {
        ...whitelistBody(stranger.address),
        userToWhitelist: [{ investorEmail: "nobody-known@errors.test", whitelistStatus: true }],
      };
      // The tokenizer as signer: the plan's own refusal of the e-mail.
      const planRefusal = await api.post("/prepare-transactions", { ...body, signerAddress: issuer.address });
      expect(planRefusal.status).to.be.within(400, 499);
      expect(planRefusal.body.error.message).to.not.match(/does not hold/);
      expectError(
        await api.post("/prepare-transactions", { ...body, signerAddress: sandbox.accounts[2].address }),
        400,
        /does not hold WHITELISTER/,
      );
    });
  });

  describe("bad bodies", () => {
    const base = () => ({ ...whitelistBody(stranger.address), signerAddress: issuer.address });
    it("missing method", async () => {
      const { method: _m, ...body } = base();
      expectError(await api.post("/prepare-transactions", body), 400, "method is required");
    });
    it("unknown method", async () => {
      expectError(
        await api.post("/prepare-transactions", { ...base(), method: "mintEverything" }),
        400,
        "Unknown method: mintEverything",
      );
    });
    it("missing field names the field", async () => {
      const { tokenSymbol: _t, ...body } = base();
      expectError(await api.post("/prepare-transactions", body), 400, "tokenSymbol is required");
    });
    it("missing array entry field names its path", async () => {
      expectError(
        await api.post("/prepare-transactions", { ...base(), userToWhitelist: [{ whitelistStatus: true }] }),
        400,
        "userToWhitelist.0.investorAddress is required",
      );
      // An e-mail alone names the investor, whose wallet must then be known (test/e2e/kyc.e2e.test.ts).
      expectError(
        await api.post("/prepare-transactions", { ...base(), userToWhitelist: [{ investorEmail: "a@b.co" }] }),
        400,
        /^userToWhitelist\.0\.investorEmail a@b\.co: no wallet known/,
      );
    });
    it("bad address", async () => {
      expectError(
        await api.post("/prepare-transactions", { ...base(), signerAddress: "0x123" }),
        400,
        /^signerAddress must be a 0x-prefixed 20-byte hex address/,
      );
    });
    it("bad chainId, missing chainId, chain not served", async () => {
      expectError(
        await api.post("/prepare-transactions", { ...base(), chainId: "nochain" }),
        400,
        /^Unsupported chainId: nochain\. chainId is a decimal number \(11155111\), 0x hex \(0xaa36a7\) or the network's hex code \(aa36a7\); this deployment serves /,
      );
      const { chainId: _c, ...noChain } = base();
      expectError(await api.post("/prepare-transactions", noChain), 400, /chainId is required/);
      expectError(
        await api.post("/prepare-transactions", { ...base(), chainId: "1" }),
        400,
        /not available on the sandbox deployment/,
      );
    });
    it("bad amount and too many decimals", async () => {
      const mint = { method: "mintToken", chainId, signerAddress: issuer.address, tokenSymbol: symbol };
      expectError(
        await api.post("/prepare-transactions", {
          ...mint,
          userToMint: [{ investorAddress: stranger.address, amount: "-1" }],
        }),
        400,
        /^userToMint.0.amount/,
      );
      expectError(
        await api.post("/prepare-transactions", {
          ...mint,
          userToMint: [{ investorAddress: stranger.address, amount: "1.0000000000000000001" }],
        }),
        400,
        "userToMint.0.amount has more than 18 decimal places",
      );
    });
    it("a mint to an address alone (no e-mail) answers without info.investorEmail (the client checks every answer against /openapi.json)", async () => {
      const res = await api.post("/prepare-transactions", {
        method: "mintToken",
        chainId,
        signerAddress: issuer.address,
        tokenSymbol: symbol,
        userToMint: [{ investorAddress: issuer.address, amount: "1" }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.info).to.not.have.property("investorEmail");
    });
    it("unknown extra keys are ignored and strings stand in for booleans and numbers", async () => {
      const res = await api.post("/prepare-transactions", {
        ...base(),
        chain: "sepolia",
        serviceName: "x",
        userToWhitelist: [{ investorAddress: stranger.address, whitelistStatus: "false" }],
        gasLimit: "200000",
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.transactions[0].gasLimit).to.equal("0x030d40");
    });
    it("a transaction that would revert is refused at prepare with the decoded reason", async () => {
      const res = await api.post("/prepare-transactions", {
        method: "transferTo",
        chainId,
        tokenSymbol: symbol,
        signerAddress: sandbox.accounts[2].address,
        to: stranger.address,
        amount: "1",
      });
      expectError(res, 400, `${stranger.address} is not whitelisted for ${symbol} and cannot receive it`);
    });
  });

  describe("send", () => {
    it("404 for an unknown txId, 400 for a malformed one", async () => {
      expectError(
        await api.post("/send-transactions", { txId: "0x" + "ab".repeat(32), signedTransactions: ["0x02"] }),
        404,
      );
      expectError(await api.post("/send-transactions", { txId: "abc", signedTransactions: ["0x02"] }), 400, /^txId/);
    });

    it("400 naming the index and field for every mismatch with the prepared transaction", async () => {
      const { prepared } = await prepareAndSign(api, issuer, whitelistBody(stranger.address));
      const tx = prepared.transactions[0];
      const sign = (override: Partial<TransactionLike>, wallet: Wallet = issuer) =>
        wallet.signTransaction({ ...tx, ...override });
      const cases: [string, string, RegExp][] = [
        ["signer", await sign({ from: undefined }, sandbox.accounts[3]), /signed by/],
        ["chainId", await sign({ chainId: 84532 }), /signedTransactions\[0\]: chainId does not match/],
        ["nonce", await sign({ nonce: tx.nonce + 5 }), /signedTransactions\[0\]: nonce does not match/],
        ["to", await sign({ to: stranger.address }), /signedTransactions\[0\]: to does not match/],
        ["value", await sign({ value: 1n }), /signedTransactions\[0\]: value does not match/],
        ["data", await sign({ data: tx.data + "00" }), /signedTransactions\[0\]: data does not match/],
      ];
      for (const [label, raw, message] of cases) {
        const res = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions: [raw] });
        expectError(res, 400, message);
        expect(res.body.error.details.transactionIndex, label).to.equal(0);
      }
      const signer = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions: [cases[0][1]] });
      expect(signer.body.error).to.deep.include({ code: "INVALID_SIGNATURE" });
      expect(signer.body.error.details).to.include({
        expectedSigner: issuer.address,
        actualSigner: sandbox.accounts[3].address,
      });
      expectError(await api.post("/send-transactions", { txId: prepared.txId, signedTransactions: [] }), 400);
      expectError(
        await api.post("/send-transactions", { txId: prepared.txId, signedTransactions: ["0x1234"] }),
        400,
        /is not a serialized transaction/,
      );
      const unsigned = Transaction.from({ ...tx, from: undefined, gasLimit: BigInt(tx.gasLimit) }).unsignedSerialized;
      expectError(
        await api.post("/send-transactions", { txId: prepared.txId, signedTransactions: [unsigned] }),
        400,
        /is not signed/,
      );
      expectError(
        await api.post("/send-transactions", {
          txId: [prepared.txId, "0x" + "cd".repeat(32)],
          signedTransactions: [await sign({})],
        }),
        400,
        /same batch id/,
      );
      // nothing of the above reached the chain or the batch
      const status = await api.get("/get-transaction-status", { txId: prepared.txId });
      expect(status.body.status).to.equal("prepared");
    });

    it("accepts body forms A, B, D and E, and never broadcasts a txId twice (409)", async () => {
      const forms = [
        (txId: string, raw: string) => ({ txId, signedTransactions: raw }), // A
        (txId: string, raw: string) => ({ txId: [txId], signedTransactions: [raw] }), // B
        (txId: string, raw: string) => ({ txId, signedTransactions: [raw] }), // D
        (txId: string, raw: string) => ({ txId: [txId], signedTransactions: raw }), // E
      ];
      for (const [i, form] of forms.entries()) {
        const { prepared, signedTransactions } = await prepareAndSign(
          api,
          issuer,
          whitelistBody(sandbox.accounts[10 + i].address),
        );
        const first = await api.post("/send-transactions", form(prepared.txId, signedTransactions[0]));
        expect(first.status, JSON.stringify(first.body)).to.equal(200);
        expect(first.body).to.include({
          success: true,
          totalTransactions: 1,
          successfulTransactions: 1,
          failedTransactions: 0,
        });
        expect(first.body.results[0].result.txResponses[0].hash).to.equal(first.body.txHashes[0]);
        expectError(
          await api.post("/send-transactions", form(prepared.txId, signedTransactions[0])),
          409,
          /already sent/,
        );
      }
    });

    it("Out of credits for <method>; two concurrent sends on the last credit: exactly one succeeds", async () => {
      const lastCredit = api;
      const record = (await service.services.apiKeys.verify(api.apiKey!))!;
      await service.services.db.query(
        "INSERT INTO credit_balances (key_id, method, balance) VALUES ($1, 'whitelist', 1) ON CONFLICT (key_id, method) DO UPDATE SET balance = 1",
        [record.id],
      );
      const a = await prepareAndSign(lastCredit, issuer, whitelistBody(sandbox.accounts[14].address));
      const b = await prepareAndSign(lastCredit, issuer, {
        ...whitelistBody(sandbox.accounts[15].address),
        nonce: String(a.prepared.transactions[0].nonce + 1),
      });
      const results = await Promise.all([
        lastCredit.post("/send-transactions", { txId: a.prepared.txId, signedTransactions: a.signedTransactions }),
        lastCredit.post("/send-transactions", { txId: b.prepared.txId, signedTransactions: b.signedTransactions }),
      ]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([200, 403]);
      expectError(
        results.find((r) => r.status === 403)!,
        403,
        "Out of credits for whitelist",
      );
      expect(await service.services.credits.balances(record.id)).to.include({ whitelist: 0 });
      await service.services.credits.add(record.id, "whitelist", 10);
    });

    it("a send needs the key the batch was prepared under", async () => {
      const { prepared, signedTransactions } = await prepareAndSign(
        api,
        issuer,
        whitelistBody(sandbox.accounts[16].address),
      );
      expectError(
        await service.api.post("/send-transactions", { txId: prepared.txId, signedTransactions }),
        401,
        "API key is required for this method",
      );
      const { key } = await service.services.apiKeys.create({ email: "issuer@errors.test", plan: "Starter" });
      expectError(
        await service.api.withKey(key).post("/send-transactions", { txId: prepared.txId, signedTransactions }),
        403,
        /another API key/,
      );
    });

    it("a transaction the node refuses (its signer cannot pay the gas) rejects the batch and gives the credit back", async () => {
      const keyed = api;
      const record = (await service.services.apiKeys.verify(api.apiKey!))!;
      const balance = (await service.services.credits.balances(record.id)).whitelist;
      const { prepared, signedTransactions } = await prepareAndSign(
        keyed,
        issuer,
        whitelistBody(sandbox.accounts[17].address),
      );
      const chain = sandbox.sepolia.provider;
      const funds = (await chain.request({ method: "eth_getBalance", params: [issuer.address, "latest"] })) as string;
      await chain.request({ method: "hardhat_setBalance", params: [issuer.address, "0x0"] });
      try {
        const res = await keyed.post("/send-transactions", { txId: prepared.txId, signedTransactions });
        expect(res.status).to.equal(200);
        expect(res.body).to.include({ success: false, status: "rejected", failedTransactions: 1 });
        expect(res.body.error).to.match(/insufficient funds|enough funds/i);
      } finally {
        await chain.request({ method: "hardhat_setBalance", params: [issuer.address, funds] });
      }
      expect((await service.services.credits.balances(record.id)).whitelist).to.equal(balance);
    });

    it("a transaction whose fee cap is below the base fee is not refused: it waits (202), and status says why and which fees would be mined now", async () => {
      const { prepared } = await prepareAndSign(api, issuer, whitelistBody(sandbox.accounts[18].address));
      const raw = await issuer.signTransaction({
        ...prepared.transactions[0],
        maxFeePerGas: "1",
        maxPriorityFeePerGas: "1",
      });
      const res = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions: [raw] });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.status).to.equal("pending");
      const tx = (await api.get("/get-transaction-status", { txId: prepared.txId })).body.transactions[0];
      expect(tx.status).to.equal("pending");
      expect(tx.waiting.reason).to.match(/too low|below the base fee/i);
      expect(BigInt(tx.waiting.suggestedMaxFeePerGas)).to.be.greaterThan(BigInt(tx.waiting.baseFeePerGas));
      // The client follows the advice: the same transaction with the suggested fees replaces it and is mined.
      const replacement = await issuer.signTransaction({
        ...prepared.transactions[0],
        maxFeePerGas: tx.waiting.suggestedMaxFeePerGas,
        maxPriorityFeePerGas: tx.waiting.suggestedMaxPriorityFeePerGas,
      });
      expect(
        (await api.post("/send-transactions", { txId: prepared.txId, signedTransactions: [replacement] })).status,
      ).to.equal(202);
      const deadline = Date.now() + 20_000;
      let status = "pending";
      while (status === "pending" && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        status = (await api.get("/get-transaction-status", { txId: prepared.txId })).body.batchStatus;
      }
      expect(status).to.equal("success");
    });
  });
});
