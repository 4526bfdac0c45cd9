import { expect } from "chai";
import type { Wallet } from "ethers";
import {
  prepare,
  send,
  signTransactions,
  waitForStatus,
  type ApiClient as TypedClient,
  type PrepareRequest,
  type WaitOptions,
} from "../../client/index";
import { documentedClient } from "../helpers/client";
import { EventStreamClient } from "../helpers/event-stream";
import { distinctClient, payRelayedSend } from "../helpers/relayed";
import { createOwnSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/** A typed client (answers checked against the document) that records the path and status of every answer it gets. */
interface WatchedClient {
  client: TypedClient;
  answers: { path: string; status: number }[];
}

/**
 * The typed client's waitForStatus against a real service, on chains of the test's own whose mining it stops so that a
 * sent batch stays pending: it follows the batch's event stream (with the key; without one, with the prepare's
 * streamToken) and polls when it cannot (a keyless wait without the token, a key at its cap of open streams, a stream
 * the service ends). A wait told to poll only every ten minutes ends within seconds of the block only on the stream.
 */
describe("e2e: the typed client's waitForStatus follows the event stream, and polls when it cannot", function () {
  this.timeout(240_000);
  let sandbox: Sandbox;
  let service: TestService;
  let apiKey: string;
  const TEN_MINUTES = 600_000;
  const mining = async (chain: "sepolia" | "baseSepolia", on: boolean) => {
    const { provider } = sandbox[chain];
    if (on) await provider.request({ method: "evm_mine", params: [] });
    await provider.request({ method: "evm_setAutomine", params: [on] });
  };

  before(async () => {
    sandbox = await createOwnSandbox();
    service = await startTestService(sandbox, {
      env: { SEND_WAIT_MS: "500", X402_SETTLEMENT_BATCH_MS: "500", EVENT_STREAMS_PER_KEY: "1" },
    });
    apiKey = (await service.services.apiKeys.create({ email: "waiting@client.test", plan: "Enterprise" })).key;
    for (const account of sandbox.accounts.slice(1, 6)) await service.services.signers.add(account.address, "all-keys");
  });
  after(async () => {
    await mining("sepolia", true).catch(() => undefined);
    await mining("baseSepolia", true).catch(() => undefined);
    await service?.stop();
    await sandbox?.close();
  });

  function watchedClient(key?: string): WatchedClient {
    const answers: WatchedClient["answers"] = [];
    const client = documentedClient(service.url, key);
    client.use({
      onResponse({ request, response }) {
        answers.push({ path: new URL(request.url).pathname, status: response.status });
        return undefined;
      },
    });
    return { client, answers };
  }

  const statusReads = (watched: WatchedClient) =>
    watched.answers.filter((a) => a.path === "/get-transaction-status").length;
  const streams = (watched: WatchedClient) => watched.answers.filter((a) => a.path === "/events").map((a) => a.status);

  async function until(label: string, holds: () => boolean, timeoutMs = 20_000): Promise<void> {
    for (const deadline = Date.now() + timeoutMs; !holds(); await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > deadline) throw new Error(`${label}: not within ${timeoutMs} ms`);
    }
  }

  /** A tokenization on Sepolia, prepared and signed with the key, sent while Sepolia does not mine: its txId, pending. */
  async function pendingWithKey(watched: WatchedClient, issuer: Wallet, symbol: string): Promise<string> {
    const body = {
      method: "newTokenization",
      chainId: "aa36a7",
      signerAddress: issuer.address,
      tokenizerEmail: `${symbol.toLowerCase()}@client.test`,
      name: `Waiting ${symbol}`,
      tokenSymbol: symbol,
    };
    const prepared = await prepare(watched.client, body as PrepareRequest);
    const signed = await signTransactions(issuer, prepared.transactions);
    await mining("sepolia", false);
    const sent = await send(watched.client, prepared.txId, signed);
    expect(sent.httpStatus, JSON.stringify(sent.summary)).to.equal(202);
    return prepared.txId;
  }

  /** A relayed token creation on Base Sepolia prepared without a key and paid, sent while Base Sepolia does not mine. */
  async function pendingWithoutKey(
    symbol: string,
    owner: Wallet,
    payer: Wallet,
  ): Promise<{ txId: string; streamToken: string }> {
    const prepared = await service.api.post(
      "/x402/token/create",
      { chainId: "84532", name: `Agent ${symbol}`, symbol, agentWallet: owner.address },
      distinctClient(),
    );
    expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
    expect(prepared.body.streamToken).to.be.a("string");
    await mining("baseSepolia", false);
    const sent = await payRelayedSend(service.api, prepared.body.txId, payer);
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    return { txId: prepared.body.txId, streamToken: prepared.body.streamToken };
  }

  /**
   * Starts waiting, runs `whileWaiting` (given whether the wait has ended), checks the wait is still on, then mines the
   * chain and answers the status the wait ended with.
   */
  async function waitThenMine(
    watched: WatchedClient,
    chain: "sepolia" | "baseSepolia",
    txId: string,
    options: WaitOptions,
    whileWaiting: (ended: () => boolean) => Promise<void>,
  ) {
    let ended = false;
    const waiting = waitForStatus(watched.client, txId, { timeoutMs: 60_000, ...options }).finally(
      () => (ended = true),
    );
    waiting.catch(() => undefined);
    await whileWaiting(() => ended);
    if (ended) await waiting;
    expect(ended, "the wait ended before the block was mined").to.equal(false);
    await mining(chain, true);
    return waiting;
  }

  it("with the key: the wait follows the stream (polling every ten minutes, it ends within seconds of the block)", async () => {
    const watched = watchedClient(apiKey);
    const txId = await pendingWithKey(watched, sandbox.accounts[1], "WAITK");
    const status = await waitThenMine(watched, "sepolia", txId, { intervalMs: TEN_MINUTES }, (ended) =>
      until("the stream opened", () => ended() || streams(watched).length === 1),
    );
    expect(status).to.include({ txId, status: "success" });
    expect(streams(watched)).to.deep.equal([200]);
  });

  it("without a key: the prepare's streamToken opens the batch's stream, which the wait follows", async () => {
    const watched = watchedClient();
    const { txId, streamToken } = await pendingWithoutKey("WAITS", sandbox.accounts[2], sandbox.accounts[3]);
    const status = await waitThenMine(watched, "baseSepolia", txId, { intervalMs: TEN_MINUTES, streamToken }, (ended) =>
      until("the stream opened", () => ended() || streams(watched).length === 1),
    );
    expect(status).to.include({ txId, status: "success" });
    expect(streams(watched)).to.deep.equal([200]);
  });

  it("without a key or its token the stream is refused (401), and the wait polls", async () => {
    const watched = watchedClient();
    const { txId } = await pendingWithoutKey("WAITP", sandbox.accounts[4], sandbox.accounts[3]);
    const status = await waitThenMine(watched, "baseSepolia", txId, { intervalMs: 100 }, (ended) =>
      until("three polls", () => ended() || statusReads(watched) >= 3),
    );
    expect(status).to.include({ txId, status: "success" });
    expect(streams(watched)).to.deep.equal([401]);
  });

  it("a key at its cap of open streams is refused one more (429), and the wait polls", async () => {
    const holder = await EventStreamClient.open(service.url, {}, { "x-api-key": apiKey });
    try {
      expect(holder.status).to.equal(200);
      const watched = watchedClient(apiKey);
      const txId = await pendingWithKey(watched, sandbox.accounts[2], "WAITC");
      const status = await waitThenMine(watched, "sepolia", txId, { intervalMs: 100 }, (ended) =>
        until("three polls", () => ended() || statusReads(watched) >= 3),
      );
      expect(status).to.include({ txId, status: "success" });
      expect(streams(watched)).to.deep.equal([429]);
    } finally {
      holder.close();
    }
  });

  it("a stream the service ends (it stops its streams, as on shutdown) leaves the wait polling", async () => {
    await until("the held stream closed", () => service.services.eventStreams.size === 0);
    const watched = watchedClient(apiKey);
    const txId = await pendingWithKey(watched, sandbox.accounts[4], "WAITD");
    const status = await waitThenMine(watched, "sepolia", txId, { intervalMs: 100 }, async (ended) => {
      await until("the stream opened", () => ended() || service.services.eventStreams.size === 1);
      const before = statusReads(watched);
      service.services.eventStreams.stop();
      await until("three polls after the stream ended", () => ended() || statusReads(watched) >= before + 3);
    });
    expect(status).to.include({ txId, status: "success" });
    expect(streams(watched)).to.deep.equal([200]);
  });
});
