import { expect } from "chai";
import type { Wallet } from "ethers";
import {
  prepare,
  send,
  signTransactions,
  type PrepareRequest,
  type PrepareResponse,
  type SendSummary,
} from "../../client/index";
import type { ApiClient } from "./service";

/** What the tests read from a prepare: the typed response, with info open to any method's keys. */
export type Prepared = Omit<PrepareResponse, "info"> & { info: Record<string, any> };
/** What the tests read from a successful send: the typed summary, with the outcome open to any method's keys. */
export type Sent = Omit<SendSummary, "outcome"> & { outcome: Record<string, any> };

/**
 * Prepares a write with the typed client (client/), signs every transaction with `wallet` (as a client would, locally)
 * and returns the signed set.
 */
export async function prepareAndSign(api: ApiClient, wallet: Wallet, body: Record<string, unknown>) {
  const prepared = (await prepare(api.typed, { signerAddress: wallet.address, ...body } as PrepareRequest)) as Prepared;
  const signedTransactions = await signTransactions(wallet, prepared.transactions);
  return { prepared, signedTransactions };
}

/** prepare → sign → send with the typed client, expecting the batch to succeed at once (200); returns the send summary. */
export async function execute(api: ApiClient, wallet: Wallet, body: Record<string, unknown>) {
  const { prepared, signedTransactions } = await prepareAndSign(api, wallet, body);
  const sent = await send(api.typed, prepared.txId, signedTransactions);
  expect(sent.httpStatus, JSON.stringify(sent.summary)).to.equal(200);
  expect(sent.summary.success, JSON.stringify(sent.summary)).to.equal(true);
  expect(sent.summary.status).to.equal("success");
  return { prepared, sent: sent.summary as Sent };
}
