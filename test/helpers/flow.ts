import { expect } from "chai";
import type { Wallet } from "ethers";
import type { ApiClient } from "./service";

/** Prepares a write, signs every transaction with `wallet` (as a client would, locally) and returns the signed set. */
export async function prepareAndSign(api: ApiClient, wallet: Wallet, body: Record<string, unknown>) {
  const prepared = await api.post("/prepare-transactions", { signerAddress: wallet.address, ...body });
  expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
  const signedTransactions = await Promise.all(prepared.body.transactions.map((tx: Record<string, unknown>) => wallet.signTransaction(tx)));
  return { prepared: prepared.body as { txId: string; transactions: any[]; info: Record<string, any> }, signedTransactions };
}

/** prepare → sign → send, expecting the batch to succeed; returns the send response body. */
export async function execute(api: ApiClient, wallet: Wallet, body: Record<string, unknown>) {
  const { prepared, signedTransactions } = await prepareAndSign(api, wallet, body);
  const sent = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions });
  expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
  expect(sent.body.success, JSON.stringify(sent.body)).to.equal(true);
  expect(sent.body.status).to.equal("success");
  return { prepared, sent: sent.body };
}
