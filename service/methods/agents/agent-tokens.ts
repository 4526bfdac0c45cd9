import { getAddress, type Interface } from "ethers";
import { z } from "zod";
import { agentTokenInterface as typedInterface } from "../../chains/contracts";

const agentTokenInterface = typedInterface as unknown as Interface;
import { badRequest, preflightError } from "../../errors";
import { address, decimalAmount, integerString } from "../../wire/fields";
import type { AgentTokenRecord } from "../../store/agents";
import type { ConfirmedBatch, MethodContext } from "../types";
import type { Queryable } from "../../store/db";
import { agentCommonFields, recordAgentActivity } from "./common";
import { fromUnits, toUnits } from "../../model/units";

/** Body fields every agent-token method shares: the token, a human amount and its decimals. */
export const agentTokenFields = {
  ...agentCommonFields,
  tokenAddress: address.meta({ description: "An agent token created with agentCreateToken" }),
  amount: decimalAmount.meta({ description: "Human units, e.g. 12.5" }),
  decimals: integerString
    .optional()
    .meta({ description: "The token's decimals (read from the token when omitted; must match when given)" }),
};

/** The agent token a body names, and its amount in base units. */
export async function agentTokenAndAmount(
  ctx: MethodContext,
  b: { tokenAddress: string; amount: string; decimals?: string },
  options: { allowZero?: boolean } = {},
): Promise<{ token: AgentTokenRecord; units: bigint }> {
  const token = await ctx.services.agents.tokenByAddress(ctx.chain.chainId, b.tokenAddress);
  if (!token)
    throw badRequest(
      `tokenAddress ${b.tokenAddress} is not an agent token created through this service on chain ${ctx.chain.chainId}`,
      { field: "tokenAddress" },
    );
  if (b.decimals !== undefined && Number(b.decimals) !== token.decimals) {
    throw badRequest(`decimals ${b.decimals} does not match the token's ${token.decimals}`, { field: "decimals" });
  }
  return { token, units: toUnits(b.amount, token.decimals, "amount", options) };
}

async function read<T>(ctx: MethodContext, token: string, fn: string, args: unknown[]): Promise<T> {
  const result = await ctx.chain.provider.call({ to: token, data: agentTokenInterface.encodeFunctionData(fn, args) });
  return agentTokenInterface.decodeFunctionResult(fn, result)[0] as T;
}

export const balanceOf = (ctx: MethodContext, token: string, holder: string) =>
  read<bigint>(ctx, token, "balanceOf", [holder]);
export const allowanceOf = (ctx: MethodContext, token: string, owner: string, spender: string) =>
  read<bigint>(ctx, token, "allowance", [owner, spender]);
export const tokenOwner = async (ctx: MethodContext, token: string) =>
  getAddress(await read<string>(ctx, token, "owner", []));

export async function requireBalance(
  ctx: MethodContext,
  token: AgentTokenRecord,
  holder: string,
  units: bigint,
  field = "amount",
): Promise<void> {
  const balance = await balanceOf(ctx, token.tokenAddress, holder);
  if (balance < units) {
    throw preflightError(
      `${holder} holds ${fromUnits(balance, token.decimals)} ${token.symbol}, less than ${fromUnits(units, token.decimals)}`,
      { field, balance: balance.toString() },
    );
  }
}

export async function requireAllowance(
  ctx: MethodContext,
  token: AgentTokenRecord,
  owner: string,
  spender: string,
  units: bigint,
): Promise<void> {
  const allowance = await allowanceOf(ctx, token.tokenAddress, owner, spender);
  if (allowance < units) {
    throw preflightError(
      `${owner} allows ${spender} to spend ${fromUnits(allowance, token.decimals)} ${token.symbol}, less than ${fromUnits(units, token.decimals)}: approve it first (agentApproveToken)`,
      { field: "amount", allowance: allowance.toString() },
    );
  }
}

/** A confirmed agent-token batch in the token's history. */
export function recordTokenActivity(tx: Queryable, batch: ConfirmedBatch): Promise<void> {
  const { tokenAddress, ...details } = batch.record;
  return recordAgentActivity(tx, batch, { tokenAddress: tokenAddress as string }, { ...details, signer: batch.signer });
}

/** What every agent-token plan tells the client. */
export function tokenInfo(token: AgentTokenRecord, units: bigint, extra: Record<string, unknown> = {}) {
  return {
    tokenAddress: token.tokenAddress,
    tokenSymbol: token.symbol,
    decimals: token.decimals,
    amount: fromUnits(units, token.decimals),
    amountRaw: units.toString(),
    ...extra,
  };
}

export const encodeToken = (fn: string, args: unknown[]) => agentTokenInterface.encodeFunctionData(fn, args);
export const agentTokenBody = <E extends z.ZodRawShape>(extra: E) => z.object({ ...agentTokenFields, ...extra });
