import { expect } from "chai";
import type { Wallet } from "ethers";
import type { ApiClient } from "./service";
import { payWithEthers, quoteOf } from "./x402";

let client = 1;
/** A distinct client address per prepare (the app trusts the loopback proxy), clear of the per-IP prepare limit. */
export const distinctClient = () => ({ "x-forwarded-for": `10.2.${Math.floor(client / 250) % 250}.${client++ % 250}` });

/** Prepares a service-relayed agentCreateToken (free) and returns its txId. */
export async function prepareRelayedToken(api: ApiClient, symbol: string, agentWallet: string): Promise<string> {
  const res = await api.post(
    "/x402/token/create",
    { chainId: "84532", name: `Agent ${symbol}`, symbol, agentWallet },
    distinctClient(),
  );
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.txId;
}

/** Sends a relayed txId: takes the 402 quote and pays it with `payer`. */
export async function payRelayedSend(api: ApiClient, txId: string, payer: Wallet) {
  const quote = quoteOf(await api.post("/send-transactions", { txId })).accepts[0];
  return api.post("/send-transactions", { txId }, { "X-PAYMENT": await payWithEthers(payer, quote) });
}
