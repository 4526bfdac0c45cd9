import { formatEther } from "ethers";
import type { ChainFacts } from "./chain-facts";
import { headAgeSeconds } from "./chain-facts";

/**
 * The overview's thresholds, each a state in words and colour with a link to the list it is about (the Grafana
 * convention: a rule, a state — OK, warning, failing — and the query behind it). Pure: the numbers come in, the states
 * go out.
 */

export type SignalState = "ok" | "warn" | "bad";

export interface Signal {
  /** Stable, for tests and anchors: head-<chainId>, stuck, wallet-<role>-<chainId>-<address>, webhooks, settlements, reserved. */
  id: string;
  state: SignalState;
  title: string;
  /** The figure, with its unit. */
  value: string;
  /** What the state means and what to look at. */
  words: string;
  /** The list filtered to what the figure counts (a console path), or null. */
  link: string | null;
}

/** A head this many block times old is a warning, and this many a failure (at least the seconds beside them). */
const HEAD_WARN = { blocks: 3, minSeconds: 5 };
const HEAD_BAD = { blocks: 10, minSeconds: 30 };
/** Deliveries owed to enabled endpoints: the oldest event's age (s) that warns, and that fails. */
const OWED_WARN_S = 60;
const OWED_BAD_S = 15 * 60;
/** Settlements not mined after this long (s): a warning, then a failure. */
const SETTLING_WARN_S = 2 * 60;
const SETTLING_BAD_S = 15 * 60;
/** Payments reserved (their work not done) this long: a warning. */
const RESERVED_WARN_S = 15 * 60;
/** A wallet with less than a day of its recent spend fails; less than this many days warns. */
const WALLET_WARN_DAYS = 3;

const seconds = (s: number) =>
  s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;

export function headSignal(facts: ChainFacts, now = Date.now()): Signal {
  const base = {
    id: `head-${facts.chainId}`,
    title: `${facts.name} head`,
    link: `/console/transactions?chain=${facts.chainId}&status=sending`,
  };
  const age = headAgeSeconds(facts, now);
  if (age === null || !facts.head)
    return {
      ...base,
      state: "bad",
      value: "no answer",
      words: `No RPC URL of chain ${facts.chainId} answered within 3 s.`,
    };
  const times = age / facts.blockSeconds;
  const value = `${seconds(age)} old (block ${facts.head.number})`;
  if (age > Math.max(HEAD_BAD.minSeconds, HEAD_BAD.blocks * facts.blockSeconds))
    return {
      ...base,
      state: "bad",
      value,
      words: `${Math.round(times)} block times without a new block (a block every ${facts.blockSeconds} s): the chain or its RPC URL has stopped; transactions on it wait.`,
    };
  if (age > Math.max(HEAD_WARN.minSeconds, HEAD_WARN.blocks * facts.blockSeconds))
    return {
      ...base,
      state: "warn",
      value,
      words: `${Math.round(times)} block times since the last block (a block every ${facts.blockSeconds} s): slower than usual.`,
    };
  return { ...base, state: "ok", value, words: `New blocks about every ${facts.blockSeconds} s.` };
}

/** Transactions not mined: stuck ones (pending `afterBlocks` blocks or more, or priced below the base fee). */
export function stuckSignal(stuck: number, oldestBlocks: number | null, afterBlocks: number): Signal {
  const base = { id: "stuck", title: "Stuck transactions", link: "/console/transactions?stuck=1", value: `${stuck}` };
  if (!stuck)
    return {
      ...base,
      state: "ok",
      words: `None pending ${afterBlocks} blocks or more, none priced below the base fee.`,
    };
  const long = oldestBlocks !== null && oldestBlocks >= afterBlocks;
  return {
    ...base,
    state: long ? "bad" : "warn",
    words: long
      ? `Pending ${afterBlocks} blocks or more (the oldest ${oldestBlocks} blocks): look at their fees, replace or cancel them.`
      : "Priced below the chain's base fee: they wait until the base fee falls or they are replaced with higher fees.",
  };
}

/** A service wallet: its balance against a day of its recent spend (and against the low-balance rule). */
export function walletSignal(w: {
  role: string;
  chainId: number;
  address: string;
  currency: string;
  balanceWei: bigint | null;
  spentPerDayWei: bigint | null;
  low: boolean | null;
}): Signal {
  const base = {
    id: `wallet-${w.role}-${w.chainId}-${w.address.toLowerCase()}`,
    title: `${w.role === "relayer" ? "Relayer" : "Settlement"} wallet on chain ${w.chainId}`,
    link: `/console/transactions?q=${w.address}`,
  };
  if (w.balanceWei === null)
    return { ...base, state: "warn", value: "not read", words: "Its balance could not be read from the chain yet." };
  const value = `${ether(w.balanceWei)} ${w.currency}`;
  const spend = w.spentPerDayWei ?? 0n;
  const daysLeft = spend > 0n ? Number((w.balanceWei * 100n) / spend) / 100 : null;
  const per = spend > 0n ? ` It spent ≈ ${ether(spend)} ${w.currency} in the last 24 h.` : "";
  if (daysLeft !== null && daysLeft < 1)
    return {
      ...base,
      state: "bad",
      value,
      words: `Less than a day of its recent spend left (${daysLeft} days).${per} Fund it now.`,
    };
  if ((daysLeft !== null && daysLeft < WALLET_WARN_DAYS) || w.low)
    return {
      ...base,
      state: "warn",
      value,
      words: `${daysLeft !== null ? `${daysLeft} days of its recent spend left.` : "Fewer than 100 transactions left at today's fees."}${per} Fund it soon.`,
    };
  return {
    ...base,
    state: "ok",
    value,
    words:
      daysLeft !== null
        ? `${daysLeft} days of its recent spend left.${per}`
        : "No spend in the last 24 h; enough for 100 transactions or more.",
  };
}

/** Webhook deliveries owed to enabled endpoints, by the age of the oldest (paused ones of disabled endpoints beside). */
export function webhooksSignal(owed: { owed: number; oldestOwedSeconds: number; paused: number }): Signal {
  const base = {
    id: "webhooks",
    title: "Webhook deliveries owed",
    link: "/console/webhooks?owed=1",
    value: `${owed.owed}`,
  };
  const paused = owed.paused ? ` ${owed.paused} more wait at disabled endpoints (not attempted until enabled).` : "";
  if (!owed.owed) return { ...base, state: "ok", words: `None owed to enabled endpoints.${paused}` };
  const oldest = `the oldest event ${seconds(owed.oldestOwedSeconds)} old`;
  if (owed.oldestOwedSeconds >= OWED_BAD_S)
    return { ...base, state: "bad", words: `Receivers are far behind (${oldest}): look at their attempts.${paused}` };
  if (owed.oldestOwedSeconds >= OWED_WARN_S)
    return { ...base, state: "warn", words: `Being retried (${oldest}).${paused}` };
  return { ...base, state: "ok", words: `On their way (${oldest}).${paused}` };
}

/** x402 settlements sent and not mined, and payments reserved whose work is not done. */
export function paymentSignals(
  owed: Record<"reserved" | "settling", { count: number; oldestAt: string | null }>,
  now = Date.now(),
): Signal[] {
  const age = (at: string | null) => (at ? Math.max(0, (now - Date.parse(at)) / 1000) : 0);
  const settling = owed.settling;
  const settlingAge = age(settling.oldestAt);
  const settlingState: SignalState =
    !settling.count || settlingAge < SETTLING_WARN_S ? "ok" : settlingAge < SETTLING_BAD_S ? "warn" : "bad";
  const reservedAge = age(owed.reserved.oldestAt);
  return [
    {
      id: "settlements",
      title: "Settlements owed",
      state: settlingState,
      value: `${settling.count}`,
      words: settling.count
        ? `The oldest waits for its settlement transaction for ${seconds(settlingAge)}.`
        : "Every settled payment's transaction is mined.",
      link: "/console/payments?status=settling",
    },
    {
      id: "reserved",
      title: "Payments reserved",
      state: owed.reserved.count && reservedAge >= RESERVED_WARN_S ? "warn" : "ok",
      value: `${owed.reserved.count}`,
      words: owed.reserved.count
        ? `Waiting for their work; the oldest for ${seconds(reservedAge)}.`
        : "No payment waits for its work.",
      link: "/console/payments?status=reserved",
    },
  ];
}

/** An amount of ether-like currency with at most 6 decimals (never 18). */
export function ether(wei: bigint): string {
  const text = formatEther(wei);
  const [whole, fraction = ""] = text.split(".");
  const kept = fraction.slice(0, 6).replace(/0+$/, "");
  if (!kept && wei > 0n && whole === "0") return "< 0.000001";
  return kept ? `${whole}.${kept}` : whole;
}
