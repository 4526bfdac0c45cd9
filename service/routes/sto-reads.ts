import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import type { Caller } from "../auth/gate";
import { defineRoute } from "../http/route";
import {
  InvestmentList,
  investmentListView,
  Offering,
  OfferingList,
  offeringById,
  offeringView,
  StoBalance,
  stoBalanceView,
} from "../reads/sto";
import { tokenContext } from "../reads/tokenization";
import type { Services } from "../usecases/services";

const symbol = z.string().trim().min(1);
const stoId = z.string().trim().uuid("must be the STO uuid");

/** Offering reads. Without a key they answer 400 "API key is missing from headers." (as clients of get-stos expect). */
export function stoReadRoutes(services: Services) {
  const context = (caller: Caller, tokenSymbol: string) => tokenContext(services, caller.apiKey!, tokenSymbol);
  return [
    defineRoute({
      method: "get",
      path: "/get-stos",
      summary: "The offerings of a token, with live status and amount raised",
      tags: ["sto"],
      access: ACCESS.keyHeaders,
      response: OfferingList,
      query: z.object({ tokenSymbol: symbol, chainId: z.string().optional() }),
      handler: async ({ query, caller }) => {
        const { ctx, token } = await context(caller, query.tokenSymbol);
        const offerings = await services.offerings.byToken(token.id);
        const items = await Promise.all(offerings.map((o) => offeringView(ctx, token, o)));
        return { status: items, total: items.length };
      },
    }),
    defineRoute({
      method: "get",
      path: "/get-sto-by-id",
      summary: "One offering by its uuid",
      tags: ["sto"],
      access: ACCESS.keyHeaders,
      response: Offering,
      query: z.object({ tokenSymbol: symbol, id: stoId }),
      handler: async ({ query, caller }) => {
        const { ctx, token } = await context(caller, query.tokenSymbol);
        return offeringView(ctx, token, await offeringById(ctx, token, query.id));
      },
    }),
    defineRoute({
      method: "get",
      path: "/get-investments-by-sto-id",
      summary: "Investments in an offering: { offeringTransactionsList, total }",
      tags: ["sto"],
      access: ACCESS.keyHeaders,
      response: InvestmentList,
      query: z.object({ tokenSymbol: symbol, id: stoId }),
      handler: async ({ query, caller }) => {
        const { ctx, token } = await context(caller, query.tokenSymbol);
        return investmentListView(ctx, token, await offeringById(ctx, token, query.id));
      },
    }),
    defineRoute({
      method: "get",
      path: "/get-sto-balance",
      summary: "STO balance record: caps, window, price, currentAmountRaised and availableAmount (live)",
      tags: ["sto"],
      access: ACCESS.keyHeaders,
      response: StoBalance,
      query: z.object({ tokenSymbol: symbol, id: stoId }),
      handler: async ({ query, caller }) => {
        const { ctx, token } = await context(caller, query.tokenSymbol);
        return stoBalanceView(ctx, token, await offeringById(ctx, token, query.id));
      },
    }),
  ];
}
