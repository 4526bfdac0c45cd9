import { createHash } from "node:crypto";
import { expect } from "chai";
import { parseUnits, type Wallet } from "ethers";
import { SecurityToken__factory, USDC__factory } from "../../typechain-types";
import { reportHash, sendWithEip1193, unwrap, waitForStatus, type Eip1193Provider } from "../../client/index";
import { execute, prepareAndSign } from "../helpers/flow";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";
import { cliJson, runAdminCli } from "../helpers/admin-cli";

/** The operator CLI, as `npm run admin -- …` runs it, against the running test service's data directory. */
async function admin(service: TestService, ...args: string[]) {
  return cliJson(await runAdminCli(service.dataDir, args));
}

describe("e2e: an issuer tokenizes, mints, moves tokens and pays dividends through HTTP only", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let issuer: Wallet, alice: Wallet, bob: Wallet, carol: Wallet, dave: Wallet;
  const symbol = "ACME";
  const chainId = "aa36a7";
  let tokenAddress: string;

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    [issuer, alice, bob, carol, dave] = [1, 2, 3, 4, 5].map((i) => sandbox.accounts[i]);
    const created = await admin(service, "keys", "create", "--email", "ops@acme.test", "--plan", "Enterprise");
    expect(created.apiKey).to.match(/^tak_/);
    expect(created.plan).to.equal("Enterprise");
    for (const w of [issuer, alice, bob, carol, dave])
      await admin(service, "signers", "add", w.address, "--key-id", created.id);
    api = service.api.withKey(created.apiKey);
  });

  after(async () => service?.stop());

  it("runs the whole lifecycle and every read shows the right numbers", async () => {
    // newTokenization with two premints
    const created = await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "issuer@acme.test",
      name: "Acme Real Estate",
      tokenSymbol: symbol,
      tokenType: "RWA_TOKEN",
      supplyCap: "1000000",
      url: "https://acme.test",
      preMints: [{ amount: "1000" }, { amount: "500" }],
      initialHolders: [
        { walletAddress: alice.address, email: "alice@acme.test" },
        { walletAddress: bob.address, email: "bob@acme.test" },
      ],
    });
    expect(created.prepared.info).to.include({ tokenSymbol: symbol, tokenizerEmail: "issuer@acme.test" });

    // Reads through the typed client: paths, queries and answers typed from /openapi.json.
    const tokenizer = unwrap(
      await api.typed.GET("/get-tokenizer-info", { params: { query: { tokenSymbol: symbol } } }),
    );
    tokenAddress = tokenizer.tokenAddress;
    expect(tokenizer.paymentTokenAddress).to.equal(sandbox.deployments[11155111].contracts.USDC);
    expect(tokenizer.escrowAddress).to.match(/^0x[0-9a-fA-F]{40}$/);
    const token = SecurityToken__factory.connect(tokenAddress, providerFor(sandbox.sepolia));
    expect(await token.tokenizer()).to.equal(issuer.address);

    // mintToken to a new investor: whitelist first, then mint (two transactions)
    const minted = await execute(api, issuer, {
      method: "mintToken",
      chainId,
      tokenSymbol: symbol,
      userToMint: [{ investorEmail: "carol@acme.test", investorAddress: carol.address, amount: "250" }],
    });
    expect(minted.prepared.transactions).to.have.length(2);
    expect(minted.prepared.transactions.map((t) => t.nonce)).to.deep.equal([
      minted.prepared.transactions[0].nonce,
      minted.prepared.transactions[0].nonce + 1,
    ]);
    expect(minted.sent.totalTransactions).to.equal(2);
    expect(minted.sent.successfulTransactions).to.equal(2);

    // whitelist dave
    await execute(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [{ investorAddress: dave.address, investorEmail: "dave@acme.test", whitelistStatus: "true" }],
    });

    // transferTo: alice → dave 100
    await execute(api, alice, { method: "transferTo", chainId, tokenSymbol: symbol, to: dave.address, amount: "100" });

    // approve + transferFrom: alice approves bob for 50, bob moves 50 from alice to carol
    await execute(api, alice, {
      method: "approve",
      chainId,
      tokenSymbol: symbol,
      spenderAddress: bob.address,
      amount: "50",
    });
    await execute(api, bob, {
      method: "transferFrom",
      chainId,
      tokenSymbol: symbol,
      from: alice.address,
      to: carol.address,
      amount: "50",
    });

    // dividends: approve USDC with the TOKEN as spender, then distribute 1,000 USDC
    await execute(api, issuer, {
      method: "approve",
      chainId,
      tokenSymbol: "USDC",
      spenderAddress: tokenAddress,
      amount: "1000",
      tokenizerAddress: issuer.address,
    });
    await execute(api, issuer, { method: "dividendDistribution", chainId, tokenSymbol: symbol, amount: "1000" });

    // balances now: alice 850, bob 500, carol 300, dave 100 (total 1750)
    const expected: Record<string, string> = {
      [alice.address]: "850",
      [bob.address]: "500",
      [carol.address]: "300",
      [dave.address]: "100",
    };
    for (const [address, balance] of Object.entries(expected)) {
      const read = unwrap(
        await api.typed.GET("/get-balance-whitelist", {
          params: { query: { tokenSymbol: symbol, investorAddress: address } },
        }),
      );
      expect(read.tokenBalance).to.equal(balance);
      expect(read.whitelisted).to.equal(true);
    }

    // the holder claims
    const usdc = USDC__factory.connect(sandbox.deployments[11155111].contracts.USDC, providerFor(sandbox.sepolia));
    const before = await usdc.balanceOf(alice.address);
    await execute(api, alice, { method: "claimDividends", chainId, tokenSymbol: symbol });
    const aliceShare = (parseUnits("1000", 6) * 850n) / 1750n;
    expect((await usdc.balanceOf(alice.address)) - before).to.equal(aliceShare);

    // reads
    const read = api.typed;
    const info = unwrap(await read.GET("/get-token-info", { params: { query: { tokenSymbol: symbol } } }));
    expect(info).to.include({
      tokenSymbol: symbol,
      tokenType: "RWA_TOKEN",
      tokenizerEmail: "issuer@acme.test",
      initialTokenSupply: "1500",
      maxTokenSupply: "1000000",
      allowedTokenDecimals: 18,
    });
    expect("paymentToken" in info && info.paymentToken).to.deep.include({ symbol: "USDC", decimals: 6 });
    expect("paymentToken" in info && info.paymentToken.blockchain).to.deep.equal({
      chainId: "0xaa36a7",
      chainName: "Sepolia",
      blockExplorerUrl: "https://sepolia.etherscan.io",
    });
    expect(info).to.not.have.property("tokenAddress");

    const list = unwrap(await read.GET("/get-token-info"));
    expect(list).to.deep.equal({ tokenSymbols: [symbol], tokenizerEmails: ["issuer@acme.test"] });

    const byEmail = unwrap(
      await read.GET("/get-balance-whitelist", {
        params: { query: { tokenSymbol: symbol, investorEmail: "carol@acme.test" } },
      }),
    );
    expect(byEmail).to.include({ investorAddress: carol.address, tokenBalance: "300", whitelisted: true });

    const status = unwrap(
      await read.GET("/get-whitelist-status", {
        params: { query: { tokenSymbol: symbol, investorAddress: dave.address } },
      }),
    );
    expect(status.whitelistStatus).to.equal(true);
    const notListed = unwrap(
      await read.GET("/get-whitelist-status", {
        params: { query: { tokenSymbol: symbol, investorAddress: sandbox.accounts[6].address } },
      }),
    );
    expect(notListed.whitelistStatus).to.equal(false);

    const allowance = unwrap(
      await read.GET("/get-allowance", {
        params: { query: { tokenSymbol: symbol, ownerAddress: alice.address, spenderAddress: bob.address } },
      }),
    );
    expect(allowance.allowance).to.equal("0");
    const usdcAllowance = unwrap(
      await read.GET("/get-allowance", {
        params: { query: { tokenSymbol: "USDC", chainId, ownerAddress: issuer.address, spenderAddress: tokenAddress } },
      }),
    );
    expect(usdcAllowance.allowance).to.equal("0");

    const investor = unwrap(
      await read.GET("/get-investor-info", { params: { query: { tokenSymbol: symbol, email: "carol@acme.test" } } }),
    );
    expect(investor).to.include({
      email: "carol@acme.test",
      walletAddress: carol.address,
      tokenBalance: "300",
      whitelisted: true,
    });

    const dividends = unwrap(
      await read.GET("/get-dividend-distribution", { params: { query: { tokenSymbol: symbol } } }),
    );
    expect(dividends.totalDistributed).to.equal("1000");
    expect(dividends.distributions).to.have.length(1);
    expect(dividends.distributions[0].amount).to.equal("1000");
    const holders = Object.fromEntries(dividends.holders.map((h) => [h.address, h]));
    expect(holders[alice.address].withdrawableRaw).to.equal("0");
    expect(holders[alice.address].withdrawnRaw).to.equal(aliceShare.toString());
    for (const [wallet, units] of [
      [bob, 500n],
      [carol, 300n],
      [dave, 100n],
    ] as const) {
      expect(holders[wallet.address].withdrawableRaw).to.equal(((parseUnits("1000", 6) * units) / 1750n).toString());
    }
  });

  it("burnToken burns from the signer's own balance; more than it holds is refused at prepare", async () => {
    const before = (await api.get("/get-balance-whitelist", { tokenSymbol: symbol, investorAddress: carol.address }))
      .body.tokenBalance;
    const { prepared, sent } = await execute(api, carol, {
      method: "burnToken",
      chainId,
      tokenSymbol: symbol,
      amount: "25.5",
      investorEmail: "carol@acme.test",
    });
    expect(prepared.info).to.include({ tokenSymbol: symbol, investorEmail: "carol@acme.test" });
    expect(sent.status).to.equal("success");
    const after = (await api.get("/get-balance-whitelist", { tokenSymbol: symbol, investorAddress: carol.address }))
      .body.tokenBalance;
    expect(Number(before) - Number(after)).to.equal(25.5);
    const tooMuch = await api.post("/prepare-transactions", {
      method: "burnToken",
      chainId,
      signerAddress: carol.address,
      tokenSymbol: symbol,
      amount: "1000000",
    });
    expect(tooMuch.status).to.equal(400);
    expect(tooMuch.body.message).to.match(/Insufficient .* balance to burn/);
  });

  it("accepts a client-broadcast batch reported by hash", async () => {
    const { prepared, signedTransactions } = await prepareAndSign(api, alice, {
      method: "transferTo",
      chainId,
      tokenSymbol: symbol,
      to: dave.address,
      amount: "1",
      executionMode: "client-broadcast",
    });
    const provider = providerFor(sandbox.sepolia);
    const sent = await provider.broadcastTransaction(signedTransactions[0]);
    await sent.wait();
    const reported = await api.post("/send-transactions", { txId: prepared.txId, txHash: sent.hash });
    expect(reported.status).to.equal(200);
    expect(reported.body.status).to.equal("success");
    const status = await api.get("/get-transaction-status", { hash: sent.hash });
    expect(status.body).to.include({ status: "success", txId: prepared.txId, txHash: sent.hash.toLowerCase() });
    expect(status.body.blockNumber).to.be.a("number");
  });

  it("an injected wallet (EIP-1193) sends a prepared transaction: toEip1193 (hex, gas, no nonce or fees), chain switched first, the hash reported", async () => {
    // A stand-in for a browser wallet: the local chain's own EIP-1193 provider (its test accounts are unlocked), which
    // answers wallet_switchEthereumChain for its chain only (4902 otherwise, as wallets do for unknown chains).
    const requests: { method: string; params?: unknown[] }[] = [];
    const wallet: Eip1193Provider = {
      async request(args) {
        requests.push(args);
        if (args.method === "wallet_switchEthereumChain") {
          const wanted = (args.params![0] as { chainId: string }).chainId;
          if (wanted !== (await sandbox.sepolia.provider.request({ method: "eth_chainId" })))
            throw Object.assign(new Error("Unrecognized chain"), { code: 4902 });
          return null;
        }
        return sandbox.sepolia.provider.request(args);
      },
    };
    const { prepared } = await prepareAndSign(api, alice, {
      method: "transferTo",
      chainId,
      tokenSymbol: symbol,
      to: dave.address,
      amount: "2",
      executionMode: "client-broadcast",
    });
    const hash = await sendWithEip1193(wallet, prepared.transactions[0]);
    expect(requests.map((r) => r.method)).to.deep.equal(["wallet_switchEthereumChain", "eth_sendTransaction"]);
    expect(requests[0].params).to.deep.equal([{ chainId: "0xaa36a7" }]);
    const sent = requests[1].params![0] as Record<string, string>;
    expect(Object.keys(sent).sort()).to.deep.equal(["data", "from", "gas", "to", "value"]);
    expect(sent.gas).to.equal("0x" + BigInt(prepared.transactions[0].gasLimit).toString(16));
    const reported = await reportHash(api.typed, prepared.txId, hash);
    expect(reported.summary.status, JSON.stringify(reported.summary)).to.be.oneOf(["success", "pending"]);
    expect((await waitForStatus(api.typed, prepared.txId, { intervalMs: 200, timeoutMs: 20_000 })).status).to.equal(
      "success",
    );
    const status = unwrap(await api.typed.GET("/get-transaction-status", { params: { query: { hash } } }));
    expect(status).to.include({ txId: prepared.txId, txHash: hash.toLowerCase() });
  });

  it("PATCH /patch-token-docs stores documents content-addressed, shows them in get-token-info, and spends one credit", async () => {
    // A 1×1 PNG: the served type is what the bytes are (PDF, PNG, JPEG, WebP or plain text; anything else is refused).
    const logo = Buffer.from(
      "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082",
      "hex",
    );
    const agreement = Buffer.from("%PDF-1.7 subscription agreement");
    const upload = async (files: Record<string, [Buffer, string, string]>, tokenSymbol = symbol) => {
      const form = new FormData();
      form.append("tokenSymbol", tokenSymbol);
      for (const [field, [bytes, type, name]] of Object.entries(files))
        form.append(field, new Blob([bytes], { type }), name);
      const res = await fetch(`${service.url}/patch-token-docs`, {
        method: "PATCH",
        headers: { "x-api-key": api.apiKey! },
        body: form,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const keyId = (await service.services.apiKeys.verify(api.apiKey!))!.id;
    const creditsBefore = (await service.services.credits.balances(keyId))["patch-token-docs"];
    const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

    const res = await upload({
      tokenLogotype: [logo, "image/png", "logo.png"],
      subscriptionAgreement: [agreement, "application/pdf", "sa.pdf"],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({
      success: true,
      tokenSymbol: symbol,
      tokenLogotypeRef: sha(logo),
      subscriptionAgreementRef: sha(agreement),
      legalDocsRef: null,
    });
    expect((await service.services.credits.balances(keyId))["patch-token-docs"]).to.equal(creditsBefore - 1);

    const info = (await api.get("/get-token-info", { tokenSymbol: symbol })).body;
    expect(info.subscriptionAgreement).to.equal(sha(agreement));
    expect(info.tokenLogotype).to.equal(`${service.url}/documents/${sha(logo).slice(7)}`);
    const served = await fetch(info.tokenLogotype);
    expect(served.headers.get("content-type")).to.equal("image/png");
    expect(Buffer.from(await served.arrayBuffer())).to.deep.equal(logo);

    // the same bytes again: the same reference
    const again = await upload({ legalDocs: [agreement, "application/pdf", "legal.pdf"] });
    expect(again.body.legalDocsRef).to.equal(sha(agreement));
    expect((await upload({})).status).to.equal(400);
    expect((await upload({ somethingElse: [logo, "image/png", "x.png"] })).status).to.equal(400);
    expect((await upload({ legalDocs: [logo, "image/png", "x.png"] }, "NOPE")).status).to.equal(400);
  });
});
