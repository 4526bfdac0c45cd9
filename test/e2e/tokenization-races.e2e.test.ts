import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Wallet } from "ethers";
import { EventStreamClient } from "../helpers/event-stream";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";

interface Tenant {
  client: ApiClient;
  id: string;
  apiKey: string;
  signer: Wallet;
}

/**
 * Issue 41, item 3: races that misdirect. Before the fix, the loser of a duplicate-symbol race ended `success`, heard a
 * `token.created` carrying the winner's token, escrow and tokenizer e-mail, and its own token was recorded nowhere; and
 * a tokenization whose e-mail another key claimed between its prepare and its confirmation landed in that key's scope.
 * Now the loser ends `rejected` with a reason naming the symbol or the e-mail it lost, its credit comes back, and its
 * events tell only of its own transaction.
 */
describe("e2e: tokenization races end with each batch's own outcome (a symbol race, an e-mail claimed meanwhile)", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  const tenants: Record<"a" | "b" | "c", Tenant> = {} as never;

  const ok = (res: ApiResponse, label: string) => {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body;
  };

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    const funder = sandbox.accounts[0].connect(providerFor(sandbox.sepolia));
    for (const name of ["a", "b", "c"] as const) {
      const { key, record } = await service.services.apiKeys.create({
        email: `${name}@races.test`,
        plan: "Enterprise",
      });
      const signer = new Wallet(Wallet.createRandom().privateKey, providerFor(sandbox.sepolia));
      await (await funder.sendTransaction({ to: signer.address, value: 10n ** 18n })).wait();
      await service.services.signers.add(signer.address, { keyId: record.id });
      tenants[name] = { client: service.api.withKey(key), id: record.id, apiKey: key, signer };
    }
  });
  after(async () => service?.stop());

  const prepareTokenization = async (tenant: Tenant, symbol: string, email: string) => {
    const body = {
      method: "newTokenization",
      chainId: "aa36a7",
      signerAddress: tenant.signer.address,
      tokenizerEmail: email,
      name: `Race ${symbol}`,
      tokenSymbol: symbol,
    };
    const prepared = ok(await tenant.client.post("/prepare-transactions", body), `prepare ${symbol}`);
    const signedTransactions = await Promise.all(
      prepared.transactions.map((t: object) => tenant.signer.signTransaction(t)),
    );
    return {
      txId: prepared.txId as string,
      send: () => tenant.client.post("/send-transactions", { txId: prepared.txId, signedTransactions }),
    };
  };
  const credits = async (tenant: Tenant) => (await service.services.credits.balances(tenant.id)).newTokenization;
  /** The tenant's whole event history (from the first event), once its batch `txId` has ended. */
  const eventsOf = async (tenant: Tenant, txId: string) => {
    const stream = await EventStreamClient.open(service.url, { lastEventId: "0" }, { "x-api-key": tenant.apiKey });
    try {
      await stream.waitFor(`batch.completed of ${txId}`, (events) =>
        events.some((e) => e.event === "batch.completed" && e.data.txId === txId),
      );
      return stream.events;
    } finally {
      stream.close();
    }
  };

  it("two keys tokenize one symbol at once: the winner's token is its own, the loser ends rejected naming the symbol, gets its credit back and hears nothing of the winner's token", async () => {
    const symbol = `R${randomBytes(2).toString("hex").toUpperCase()}`;
    const [a, b] = [tenants.a, tenants.b];
    const emails = { a: `issuer-a-${symbol}@races.test`, b: `issuer-b-${symbol}@races.test` };
    // Both prepared while the symbol is free (the prepare's check passes for both), then sent together.
    const [preparedA, preparedB] = [
      await prepareTokenization(a, symbol, emails.a),
      await prepareTokenization(b, symbol, emails.b),
    ];
    const creditsBefore = { a: await credits(a), b: await credits(b) };
    const [sentA, sentB] = await Promise.all([preparedA.send(), preparedB.send()]);
    const outcomes = [
      { tenant: a, other: b, sent: sentA, txId: preparedA.txId, email: emails.a, before: creditsBefore.a },
      { tenant: b, other: a, sent: sentB, txId: preparedB.txId, email: emails.b, before: creditsBefore.b },
    ];
    for (const o of outcomes) expect(o.sent.status, JSON.stringify(o.sent.body)).to.equal(200);
    const winner = outcomes.find((o) => o.sent.body.status === "success")!;
    const loser = outcomes.find((o) => o.sent.body.status !== "success")!;
    expect(winner, "one batch succeeds").to.not.equal(undefined);
    expect(loser, "the other does not").to.not.equal(undefined);

    // The loser: rejected, the reason names the symbol; its transaction confirmed (the chain made its token), nothing recorded.
    expect(loser.sent.body).to.include({ success: false, status: "rejected" });
    expect(loser.sent.body.error).to.match(
      new RegExp(`^tokenSymbol ${symbol} was taken by another tokenization confirmed first`),
    );
    const status = ok(await loser.tenant.client.get("/get-transaction-status", { txId: loser.txId }), "loser's status");
    expect(status).to.include({ status: "rejected", error: loser.sent.body.error });
    expect(status.transactions[0].status, "its transaction is on chain").to.equal("success");
    expect(await credits(loser.tenant), "the loser's credit comes back").to.equal(loser.before);
    expect(await credits(winner.tenant)).to.equal(winner.before - 1);
    const winnersToken = ok(
      await winner.tenant.client.get("/get-tokenizer-info", { tokenSymbol: symbol }),
      "the winner reads its token",
    );
    expect(
      (await loser.tenant.client.get("/get-tokenizer-info", { tokenSymbol: symbol })).status,
      "the loser may not read the winner's token",
    ).to.equal(403);
    expect(
      ok(await loser.tenant.client.get("/get-token-info", {}), "the loser's tokens").tokenizerEmails,
      "the loser's e-mail was not claimed",
    ).not.to.include(loser.email);

    // Events: the loser's stream tells of its own transaction and its rejection; nothing of the winner's token.
    const heard = await eventsOf(loser.tenant, loser.txId);
    // Each streamed event's data is the envelope: { id, type, txId, …, data }.
    const own = heard.filter((e) => e.data.txId === loser.txId || e.data.data?.tokenSymbol === symbol);
    expect(own.map((e) => e.event)).to.deep.equal([
      "transaction.broadcast",
      "transaction.confirmed",
      "batch.completed",
    ]);
    expect(own.at(-1)!.data.data).to.include({ status: "rejected", error: loser.sent.body.error });
    const text = JSON.stringify(heard).toLowerCase();
    for (const secret of [winnersToken.tokenAddress, winnersToken.escrowAddress, winner.email, winner.txId])
      expect(text, `the winner's ${secret}`).not.to.include(String(secret).toLowerCase());
    expect(
      heard.some((e) => e.event === "token.created"),
      "no token.created for the loser",
    ).to.equal(false);
    const winnerHeard = await eventsOf(winner.tenant, winner.txId);
    expect(winnerHeard.filter((e) => e.event === "token.created").map((e) => e.data.data.tokenAddress)).to.deep.equal([
      winnersToken.tokenAddress,
    ]);
  });

  it("a key's tokenizer e-mail claimed by another key between prepare and confirmation: the tokenization ends rejected naming the e-mail, and its token is not put in the other key's scope", async () => {
    const [a, c] = [tenants.a, tenants.c];
    const email = `shared-${randomBytes(3).toString("hex")}@races.test`;
    const [mine, theirs] = [
      `M${randomBytes(2).toString("hex").toUpperCase()}`,
      `N${randomBytes(2).toString("hex").toUpperCase()}`,
    ];
    const preparedA = await prepareTokenization(a, mine, email); // the e-mail is free now
    const preparedC = await prepareTokenization(c, theirs, email); // and for C too
    expect(ok(await preparedC.send(), "C confirms first").status).to.equal("success");
    const before = await credits(a);
    const sentA = ok(await preparedA.send(), "A confirms second");
    expect(sentA).to.include({ success: false, status: "rejected" });
    expect(sentA.error).to.match(
      new RegExp(
        `^tokenizerEmail ${email.replace(/[.]/g, "\\.")} was claimed by another API key before this tokenization confirmed`,
      ),
    );
    expect(await credits(a), "A's credit comes back").to.equal(before);
    // Before the fix A's token landed in C's scope (C read it, A was refused): now it is recorded nowhere.
    const readByC = await c.client.get("/get-tokenizer-info", { tokenSymbol: mine });
    expect(readByC.status, JSON.stringify(readByC.body)).to.equal(400);
    expect(readByC.body.message).to.match(/No company found/);
    expect(ok(await c.client.get("/get-token-info", {}), "C's tokens").tokenSymbols).to.deep.equal([theirs]);
    const heard = await eventsOf(a, preparedA.txId);
    expect(heard.some((e) => e.event === "token.created" && e.data.data.tokenSymbol === mine)).to.equal(false);
  });
});
