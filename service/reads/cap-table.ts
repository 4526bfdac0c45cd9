import { getAddress, ZeroAddress } from "ethers";
import { z } from "zod";
import { logsInRanges } from "../chains/log-ranges";
import { parseEventLog, securityTokenInterface } from "../chains/contracts";
import { badRequest, ApiError } from "../errors";
import { TtlCache } from "../cache/ttl-cache";
import { responseFields } from "../wire/responses";
import { fromUnits } from "../model/units";
import { securityToken } from "../domains/tokenization/tokens";
import type { DomainContext } from "../domains/context";
import type { TokenRecord } from "../store/tokens";

const { address, integerText, int } = responseFields;
const amount = z.string().regex(/^\d+(\.\d+)?$/);

export const CapTable = z
  .strictObject({
    tokenSymbol: z.string(),
    tokenAddress: address,
    blockNumber: int.meta({ description: "The block the table is as of (its end)" }),
    totalSupply: amount,
    totalSupplyRaw: integerText,
    holders: z.array(
      z.strictObject({
        address,
        email: z.string().nullable().meta({ description: "The investor's e-mail recorded for the wallet, if any" }),
        balance: amount,
        balanceRaw: integerText,
        frozenAmount: amount,
        frozenAmountRaw: integerText,
        addressFrozen: z.boolean(),
        shareOfSupply: z
          .string()
          .regex(/^\d+(\.\d+)?$/)
          .meta({ description: 'Percent of the total supply, 6 decimals ("12.5")' }),
      }),
    ),
    total: int.meta({ description: "Holders with a non-zero balance at that block" }),
    limit: int,
    offset: int,
    checkedAgainstChain: z.literal(true).meta({
      description:
        "The page's balances and frozen amounts and the total supply equal balanceOf, getFrozenTokens and totalSupply at that block",
    }),
  })
  .meta({
    id: "CapTable",
    description:
      "Who holds the token as of a block, built from the token's own events (largest holding first, then address)",
  });

interface Holding {
  address: string;
  balance: bigint;
  frozen: bigint;
  addressFrozen: boolean;
}

interface Replayed {
  supply: bigint;
  holders: Holding[];
}

/** Tables of past blocks never change once built: kept a minute, so paging through one replays the events once. */
const replays = new TtlCache<string, Promise<Replayed>>(60_000, 100);

const EVENTS = (["Transfer", "Frozen", "AddressFrozen"] as const).map(
  (name) => securityTokenInterface.getEvent(name).topicHash,
);

/** Replays the token's Transfer, Frozen and AddressFrozen events from its creation to `blockNumber`. */
async function replay(ctx: DomainContext, token: TokenRecord, blockNumber: number): Promise<Replayed> {
  const logs = await logsInRanges(
    ctx.chain.provider,
    { address: token.tokenAddress, topics: [EVENTS] },
    token.createdBlock,
    blockNumber,
  );
  const balances = new Map<string, bigint>();
  const frozen = new Map<string, bigint>();
  const addressFrozen = new Map<string, boolean>();
  let supply = 0n;
  for (const log of logs) {
    const event = parseEventLog(securityTokenInterface, log);
    if (!event) continue;
    if (event.name === "Transfer") {
      const { from, to, value } = event.args as unknown as { from: string; to: string; value: bigint };
      if (from === ZeroAddress) supply += value;
      else balances.set(from, (balances.get(from) ?? 0n) - value);
      if (to === ZeroAddress) supply -= value;
      else balances.set(to, (balances.get(to) ?? 0n) + value);
    } else if (event.name === "Frozen") {
      frozen.set(event.args.account, event.args.amount);
    } else {
      addressFrozen.set(event.args.account, event.args.isFrozen);
    }
  }
  const holders = [...balances.entries()]
    .filter(([, balance]) => balance !== 0n)
    .map(([holder, balance]) => ({
      address: getAddress(holder),
      balance,
      frozen: frozen.get(holder) ?? 0n,
      addressFrozen: addressFrozen.get(holder) ?? false,
    }))
    .sort((a, b) => (a.balance === b.balance ? a.address.localeCompare(b.address) : a.balance > b.balance ? -1 : 1));
  return { supply, holders };
}

/** The events' totals checked against the token's own views at that block (a node that lost logs would differ). */
async function checkAgainstChain(
  ctx: DomainContext,
  token: TokenRecord,
  blockNumber: number,
  replayed: Replayed,
  page: Holding[],
): Promise<void> {
  const contract = securityToken(ctx, token);
  const at = { blockTag: blockNumber };
  const [supply, ...onChain] = await Promise.all([
    contract.totalSupply(at),
    ...page.map((h) =>
      Promise.all([
        contract.balanceOf(h.address, at),
        contract.getFrozenTokens(h.address, at),
        contract.isFrozen(h.address, at),
      ]),
    ),
  ]);
  const sum = replayed.holders.reduce((s, h) => s + h.balance, 0n);
  const mismatch = (what: string) =>
    new ApiError(
      "CHAIN_READ_FAILED",
      `The cap table of ${token.symbol} at block ${blockNumber} does not match the chain (${what}): the node's logs are incomplete`,
      {
        blockNumber,
      },
    );
  if (supply !== replayed.supply || supply !== sum)
    throw mismatch(`totalSupply ${supply}, events ${replayed.supply}, balances ${sum}`);
  page.forEach((h, i) => {
    const [balance, frozenAmount, addressFrozen] = onChain[i];
    if (balance !== h.balance || frozenAmount !== h.frozen || addressFrozen !== h.addressFrozen)
      throw mismatch(`holder ${h.address}`);
  });
}

/** Percent with 6 decimals, floored. */
function percentOf(part: bigint, whole: bigint): string {
  if (whole === 0n) return "0";
  return fromUnits((part * 100n * 10n ** 6n) / whole, 6);
}

/**
 * GET /get-holders: the cap table as of `blockNumber` (default: the latest block), from the token's creation block on.
 * Paged, largest holding first; each page checked against the chain at that block.
 */
export async function capTableView(
  ctx: DomainContext,
  token: TokenRecord,
  q: { blockNumber?: number; limit: number; offset: number },
): Promise<z.infer<typeof CapTable>> {
  const latest = await ctx.chain.provider.getBlockNumber();
  const blockNumber = q.blockNumber ?? latest;
  if (blockNumber < token.createdBlock || blockNumber > latest) {
    throw badRequest(
      `blockNumber must be from ${token.symbol}'s creation block ${token.createdBlock} to the latest block ${latest}`,
      {
        field: "blockNumber",
        createdBlock: token.createdBlock,
        latestBlock: latest,
      },
    );
  }
  // The latest block's table is built fresh (blocks arrive); a past block's is kept while pages are read.
  const key = `${token.chainId}:${token.tokenAddress.toLowerCase()}:${blockNumber}`;
  let replayed = blockNumber < latest ? replays.get(key) : undefined;
  if (!replayed) {
    replayed = replay(ctx, token, blockNumber);
    if (blockNumber < latest) replays.set(key, replayed);
    // A failed replay (a node that did not answer) is not kept: the next request asks again.
    replayed.catch(() => replays.delete(key));
  }
  const table = await replayed;
  const page = table.holders.slice(q.offset, q.offset + q.limit);
  await checkAgainstChain(ctx, token, blockNumber, table, page);
  const emails = await Promise.all(page.map((h) => ctx.services.investors.byAddress(token.id, h.address)));
  return {
    tokenSymbol: token.symbol,
    tokenAddress: token.tokenAddress,
    blockNumber,
    totalSupply: fromUnits(table.supply, token.decimals),
    totalSupplyRaw: table.supply.toString(),
    holders: page.map((h, i) => ({
      address: h.address,
      email: emails[i]?.email ?? null,
      balance: fromUnits(h.balance, token.decimals),
      balanceRaw: h.balance.toString(),
      frozenAmount: fromUnits(h.frozen, token.decimals),
      frozenAmountRaw: h.frozen.toString(),
      addressFrozen: h.addressFrozen,
      shareOfSupply: percentOf(h.balance, table.supply),
    })),
    total: table.holders.length,
    limit: q.limit,
    offset: q.offset,
    checkedAgainstChain: true,
  };
}

const CSV_COLUMNS = [
  "address",
  "email",
  "balance",
  "balanceRaw",
  "frozenAmount",
  "frozenAmountRaw",
  "addressFrozen",
  "shareOfSupply",
] as const;

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The cap table for a registrar: one header line, then one line per holder of the page (CRLF line ends). */
export function capTableCsv(table: z.infer<typeof CapTable>): string {
  const lines = [CSV_COLUMNS.join(",")];
  for (const h of table.holders) lines.push(CSV_COLUMNS.map((c) => csvField(String(h[c] ?? ""))).join(","));
  return lines.join("\r\n") + "\r\n";
}
