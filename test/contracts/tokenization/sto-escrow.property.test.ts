/**
 * Model-based property tests for StoEscrow: random action sequences over ONE offering, driven against the real
 * contracts (on the in-process Hardhat network, or on a standalone `npx hardhat node` with `--network localhost`) and
 * checked, step by step, against a small TypeScript model of the rules in IStoEscrow's NatSpec.
 *
 * Besides the offering's own actions, the tokenizer freezes and unfreezes investors and pauses the token, so the
 * model covers issue 48's rules: invest refused when the token would not deliver (ERC-7943 canReceive) or is paused,
 * delivery held while the investor is frozen or the token paused, refunds never held; tokens priced on the whole
 * position with the rest paid back at claim; proceeds pulled by the tokenizer (withdrawProceeds), never pushed.
 *
 * Time is fully controlled: every transaction is mined at exactly `model.t + 1` (evm_setNextBlockTimestamp) and is
 * sent with an explicit gas limit, so a reverting transaction is still mined (Hardhat automine) instead of failing
 * in eth_estimateGas; view calls run against the latest block, whose timestamp is `model.t`.
 *
 * Reproduce / widen a run: FC_SEED=<seed> FC_NUM_RUNS=<n> npx hardhat test test/contracts/tokenization/sto-escrow.property.test.ts
 * On a node: HARDHAT_NODE_URL=http://127.0.0.1:<port> npx hardhat test <this file> --network localhost
 */
import { expect } from "chai";
import fc from "fast-check";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { ContractTransactionReceipt, ContractTransactionResponse, Interface } from "ethers";
import { TOKENS, USDC, createTokenization, deployFactoryFixture, tokenizationParams } from "./helpers";

const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? 50);
const SEED = Number(process.env.FC_SEED ?? 0x57035c0);
const WEEK = 7 * 24 * 3600;
const GAS = 2_000_000n;
const FUNDING = USDC(10_000_000);
const OFFERING_ID = 1n;
const Status = { NONE: 0n, PENDING: 1n, ACTIVE: 2n, PAUSED: 3n, ENDED: 4n, COMPLETED: 5n, FAILED: 6n };
const STATUS_NAMES = ["NONE", "PENDING", "ACTIVE", "PAUSED", "ENDED", "COMPLETED", "FAILED"];

// ───────────────────────────── fixture ─────────────────────────────

/** Token (no supply cap, no premint) + escrow; 5 whitelisted, funded, approved investors; a funded non-whitelisted outsider. */
async function propertyFixture() {
  const base = await deployFactoryFixture();
  const signers = await ethers.getSigners();
  const investors = [base.alice, base.bob, base.carol, base.dave, signers[7]];
  const { token, escrow } = await createTokenization(
    base.factory,
    base.tokenizer,
    tokenizationParams(await base.usdc.getAddress(), {
      initialHolders: investors.map((s) => s.address),
      preMints: investors.map(() => 0n),
    }),
  );
  for (const s of [...investors, base.outsider]) {
    await base.usdc.mint(s.address, FUNDING);
    await base.usdc.connect(s).approve(escrow.target, ethers.MaxUint256);
  }
  return { ...base, investors, token, escrow };
}
type Ctx = Awaited<ReturnType<typeof propertyFixture>>;

// ───────────────────────────── generated inputs ─────────────────────────────

/** Offering parameters, as fractions (basis points) resolved against the hard cap. */
interface ParamsSpec {
  tokenAmount: bigint;
  hardCap: bigint;
  softBps: number; // soft cap, of the hard cap
  maxBps: number; // max investment, of the hard cap (may exceed it)
  minBps: number; // min investment, of the max investment
  startDelay: number; // start = creation block time + startDelay
  duration: number;
}

/** Investment amounts are drawn relative to the state at the moment they are sent (see resolveAmount). */
type AmountKind =
  | "zero"
  | "dust" // around one token unit's price when that price is >= 1: the ticket may buy 0 units (refused)
  | "belowMin"
  | "exactMin"
  | "inRange"
  | "fillMax"
  | "aboveMax"
  | "fillCap"
  | "crossCap"
  | "any";
/** Time jumps name the timestamp at which the NEXT transaction will run (see resolveTime). */
type TimeKind = "tick" | "beforeStart" | "atStart" | "inside" | "lastSecond" | "atEnd" | "pastEnd";
/** "tokenizer", "outsider" (funded, not whitelisted) or "inv<i>". */
type Who = string;

type Action =
  | { kind: "invest"; who: Who; amount: AmountKind; bps: number }
  | { kind: "time"; to: TimeKind; bps: number }
  | { kind: "setPaused"; paused: boolean | "resume"; by: Who } // "resume": unpause if paused, else nothing
  | { kind: "close"; by: Who }
  | { kind: "claim"; by: Who; investor: Who; offeringId: bigint }
  | { kind: "withdrawProceeds"; by: Who }
  | { kind: "freezeInvestor"; investor: Who; frozen: boolean }
  | { kind: "pauseToken"; paused: boolean };

interface Scenario {
  n: number;
  params: ParamsSpec;
  actions: Action[];
  finalJumpBps: number;
  finalCloser: Who;
  finalClaimers: Who[];
}

const bpsArb = fc.integer({ min: 0, max: 10_000 });

const paramsArb: fc.Arbitrary<ParamsSpec> = fc.record({
  tokenAmount: fc.oneof(
    { weight: 3, arbitrary: fc.constant(TOKENS(1000)) },
    { weight: 3, arbitrary: fc.bigInt({ min: TOKENS(1), max: TOKENS(1_000_000) }) },
    { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 1000n }) }, // coarse: tickets can buy 0 units (refused)
  ),
  hardCap: fc.oneof(
    { weight: 3, arbitrary: fc.constant(USDC(10_000)) },
    { weight: 3, arbitrary: fc.bigInt({ min: USDC(1), max: USDC(20_000) }) },
    { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 1000n }) },
  ),
  softBps: fc.oneof(fc.constantFrom(0, 10_000), bpsArb, bpsArb),
  maxBps: fc.integer({ min: 1, max: 15_000 }),
  minBps: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 6000 })),
  startDelay: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 600 })),
  duration: fc.oneof(
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5 }) },
    { weight: 5, arbitrary: fc.integer({ min: 6, max: WEEK }) },
  ),
});

function scenarioArb(n: number): fc.Arbitrary<Scenario> {
  const inv = fc.integer({ min: 0, max: n - 1 }).map((i) => `inv${i}`);
  const caller = fc.oneof(
    { weight: 3, arbitrary: fc.constant("tokenizer") },
    { weight: 1, arbitrary: fc.constant("outsider") },
    { weight: 3, arbitrary: inv },
  );
  const investor = fc.oneof({ weight: 12, arbitrary: inv }, { weight: 1, arbitrary: fc.constant("outsider") });
  const claimTarget = fc.oneof(
    { weight: 10, arbitrary: inv },
    { weight: 1, arbitrary: fc.constantFrom("outsider", "tokenizer") },
  );
  const amountKind = fc.constantFrom<AmountKind>(
    "zero", "dust", "belowMin", "exactMin", "inRange", "inRange", "inRange", "fillMax", "aboveMax", "fillCap", "crossCap", "any", "any",
  );
  const timeKind = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom<TimeKind>("tick", "atStart") },
    { weight: 4, arbitrary: fc.constant<TimeKind>("inside") },
    { weight: 1, arbitrary: fc.constantFrom<TimeKind>("beforeStart", "lastSecond", "atEnd", "pastEnd") },
  );
  const action: fc.Arbitrary<Action> = fc.oneof(
    { weight: 55, arbitrary: fc.record({ kind: fc.constant("invest" as const), who: investor, amount: amountKind, bps: bpsArb }) },
    { weight: 18, arbitrary: fc.record({ kind: fc.constant("time" as const), to: timeKind, bps: bpsArb }) },
    {
      weight: 7,
      arbitrary: fc.record({
        kind: fc.constant("setPaused" as const),
        paused: fc.oneof({ weight: 4, arbitrary: fc.constant("resume" as const) }, { weight: 2, arbitrary: fc.boolean() }),
        by: fc.oneof({ weight: 5, arbitrary: fc.constant("tokenizer") }, { weight: 1, arbitrary: caller }),
      }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("close" as const), by: caller }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("withdrawProceeds" as const), by: caller }) },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant("freezeInvestor" as const), investor: inv, frozen: fc.boolean() }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("pauseToken" as const), paused: fc.boolean() }) },
    {
      weight: 9,
      arbitrary: fc.record({
        kind: fc.constant("claim" as const),
        by: caller,
        investor: claimTarget,
        offeringId: fc.oneof({ weight: 10, arbitrary: fc.constant(1n) }, { weight: 1, arbitrary: fc.constantFrom(0n, 2n) }),
      }),
    },
  );
  return fc.record({
    n: fc.constant(n),
    params: paramsArb,
    actions: fc.array(action, { minLength: 10, maxLength: 25 }),
    finalJumpBps: bpsArb,
    finalCloser: caller,
    finalClaimers: fc.array(caller, { minLength: n, maxLength: n }),
  });
}

const scenario = fc.integer({ min: 3, max: 5 }).chain(scenarioArb);

/**
 * Always run first (fast-check `examples`), so the default seed covers the 0-token refusal: 3 token units for a
 * 10,000 USDC hard cap, one unit costs 3_333_333_334 payment units; "dust" at 0 bps is 1 unit (refused with
 * InvestmentBuysNoTokens), at 10,000 bps 1 + 3_333_333_333 (the smallest ticket that buys 1 unit, accepted).
 */
const coarseExample: Scenario = {
  n: 3,
  params: { tokenAmount: 3n, hardCap: USDC(10_000), softBps: 0, maxBps: 10_000, minBps: 0, startDelay: 0, duration: WEEK },
  actions: [
    { kind: "time", to: "atStart", bps: 0 },
    { kind: "invest", who: "inv0", amount: "dust", bps: 0 },
    { kind: "invest", who: "inv0", amount: "dust", bps: 9_999 },
    { kind: "invest", who: "inv0", amount: "dust", bps: 10_000 },
    { kind: "invest", who: "inv1", amount: "fillCap", bps: 0 },
  ],
  finalJumpBps: 0,
  finalCloser: "outsider",
  finalClaimers: ["inv0", "inv1", "inv2"],
};

/**
 * Also run first: 1000 token units for 1300 USDC (1.30 a unit), tickets that leave remainders to pay back, two
 * tickets of one investor priced on their sum, the token paused at the claims and an investor frozen.
 */
const remainderExample: Scenario = {
  n: 3,
  params: { tokenAmount: 1000n, hardCap: USDC(1300), softBps: 0, maxBps: 10_000, minBps: 0, startDelay: 0, duration: WEEK },
  actions: [
    { kind: "time", to: "atStart", bps: 0 },
    { kind: "invest", who: "inv0", amount: "any", bps: 15 }, // 3.90 USDC + 1 unit: 3 units, 1 unit above
    { kind: "invest", who: "inv1", amount: "any", bps: 8 }, // 2.08 USDC: 1 unit, 0.78 above
    { kind: "invest", who: "inv1", amount: "any", bps: 8 }, // 4.16 USDC on the position: 3 units, 0.26 above
    { kind: "freezeInvestor", investor: "inv2", frozen: true },
    { kind: "invest", who: "inv2", amount: "any", bps: 100 },
    { kind: "close", by: "tokenizer" },
    { kind: "pauseToken", paused: true },
    { kind: "claim", by: "inv0", investor: "inv0", offeringId: 1n },
    { kind: "withdrawProceeds", by: "inv1" },
    { kind: "withdrawProceeds", by: "tokenizer" },
    { kind: "withdrawProceeds", by: "tokenizer" },
  ],
  finalJumpBps: 0,
  finalCloser: "outsider",
  finalClaimers: ["inv0", "inv1", "inv2"],
};

// ───────────────────────────── model ─────────────────────────────

interface Offering {
  tokenAmount: bigint;
  softCap: bigint;
  hardCap: bigint;
  min: bigint;
  max: bigint;
  start: number;
  end: number;
}
interface Position {
  invested: bigint;
  tokensOwed: bigint;
  claimed: boolean;
}
interface Model {
  t: number; // timestamp of the latest block
  o: Offering;
  raised: bigint;
  tokensSold: bigint;
  paused: boolean;
  closed: boolean;
  succeeded: boolean;
  proceeds: bigint; // what the tokens owed cost: the tokenizer's after a success
  proceedsWithdrawn: boolean;
  tokenPaused: boolean;
  frozen: Set<string>; // address-frozen investors (lower case)
  pos: Map<string, Position>; // by address (lower case)
}

/** An error the rules allow, with its expected arguments. */
interface Expected {
  name: string;
  args: unknown[];
}

const minB = (a: bigint, b: bigint) => (a < b ? a : b);
/** Token units a whole position of `invested` buys: floored. */
const tokensFor = (o: Offering, invested: bigint) => (invested * o.tokenAmount) / o.hardCap;
/** What `tokens` units cost: rounded up, never above the investment that bought them. */
const costOf = (o: Offering, tokens: bigint) => (tokens === 0n ? 0n : (tokens * o.hardCap + o.tokenAmount - 1n) / o.tokenAmount);
const remainderOf = (o: Offering, p: Position) => p.invested - costOf(o, p.tokensOwed);
const TOKEN_CODE = { PAUSED: 1n, RECEIVER_NOT_WHITELISTED: 3n, RECEIVER_FROZEN: 5n };
const frac = (x: bigint, bps: number) => (x * BigInt(bps)) / 10_000n;

function position(m: Model, addr: string): Position {
  const key = addr.toLowerCase();
  let p = m.pos.get(key);
  if (!p) {
    p = { invested: 0n, tokensOwed: 0n, claimed: false };
    m.pos.set(key, p);
  }
  return p;
}

function modelStatus(m: Model): bigint {
  if (m.closed) return m.succeeded ? Status.COMPLETED : Status.FAILED;
  if (m.paused) return Status.PAUSED;
  if (m.t < m.o.start) return Status.PENDING;
  if (m.t >= m.o.end || m.raised === m.o.hardCap) return Status.ENDED;
  return Status.ACTIVE;
}

function resolveAmount(m: Model, addr: string, kind: AmountKind, bps: number): bigint {
  const { o } = m;
  const invested = position(m, addr).invested;
  const room = o.max > invested ? o.max - invested : 0n; // up to the per-investor maximum
  const remaining = o.hardCap - m.raised; // up to the hard cap
  switch (kind) {
    case "zero":
      return 0n;
    case "dust":
      return 1n + frac(o.hardCap / o.tokenAmount, bps);
    case "belowMin":
      return o.min > 1n ? 1n + frac(o.min - 2n, bps) : 0n; // in [1, min - 1]
    case "exactMin":
      return o.min;
    case "inRange": {
      const lo = o.min > 1n ? o.min : 1n;
      const hi = room > lo ? room : lo;
      return lo + frac(hi - lo, bps);
    }
    case "fillMax":
      return room;
    case "aboveMax":
      return room + 1n + frac(o.max, bps);
    case "fillCap":
      return remaining;
    case "crossCap":
      return remaining + 1n + frac(o.hardCap, bps);
    case "any":
      return 1n + frac(2n * o.hardCap, bps);
  }
}

/** The timestamp at which the next transaction should run, or null when the jump is impossible (already later). */
function resolveTime(m: Model, kind: TimeKind, bps: number): number | null {
  const { start, end } = m.o;
  let x: number;
  switch (kind) {
    case "tick":
      x = m.t + 2 + (bps % 60);
      break;
    case "beforeStart":
      if (start - 1 < m.t + 2) return null;
      x = m.t + 2 + Math.floor(((start - 1 - (m.t + 2)) * bps) / 10_000);
      break;
    case "atStart":
      x = start;
      break;
    case "inside":
      x = start + Math.floor(((end - 1 - start) * bps) / 10_000);
      break;
    case "lastSecond":
      x = end - 1;
      break;
    case "atEnd":
      x = end;
      break;
    case "pastEnd":
      x = end + 1 + Math.floor((WEEK * bps) / 10_000);
      break;
  }
  return x - 1 > m.t ? x : null;
}

/**
 * Rules for invest(amount) by `addr` at time `now`; every violated rule is an allowed revert. `whitelisted` is false
 * for the outsider; a frozen investor or a paused token are read from the model.
 */
function investRules(m: Model, addr: string, whitelisted: boolean, amount: bigint, now: number) {
  const { o } = m;
  const errs: Expected[] = [];
  if (amount === 0n) errs.push({ name: "ZeroAmount", args: [] });
  if (m.closed) errs.push({ name: "OfferingAlreadyClosed", args: [OFFERING_ID] });
  if (m.paused) errs.push({ name: "OfferingIsPaused", args: [OFFERING_ID] });
  if (now < o.start) errs.push({ name: "OfferingNotStarted", args: [BigInt(o.start)] });
  if (now >= o.end) errs.push({ name: "OfferingEnded", args: [BigInt(o.end)] });
  if (m.tokenPaused) errs.push({ name: "TokenPaused", args: [] });
  // ERC-7943 canReceive, with the token's restriction code (pause is answered above, before it).
  else if (!whitelisted) {
    errs.push({ name: "InvestorCannotReceive", args: [OFFERING_ID, addr, TOKEN_CODE.RECEIVER_NOT_WHITELISTED] });
  } else if (m.frozen.has(addr)) {
    errs.push({ name: "InvestorCannotReceive", args: [OFFERING_ID, addr, TOKEN_CODE.RECEIVER_FROZEN] });
  }
  const remaining = o.hardCap - m.raised;
  const accepted = minB(amount, remaining); // the excess over the hard cap is never taken
  const before = position(m, addr);
  const total = before.invested + accepted;
  if (remaining === 0n) errs.push({ name: "HardCapReached", args: [o.hardCap] });
  else if (amount !== 0n) {
    // The minimum is waived when less than the minimum remains under the hard cap.
    if (accepted < o.min && remaining >= o.min) {
      errs.push({ name: "BelowMinimumInvestment", args: [amount, o.min] });
    }
    if (total > o.max) errs.push({ name: "AboveMaximumInvestment", args: [total, o.max] });
  }
  // Priced on the whole position, so two tickets buy what one of their sum buys (floor: the whole hard cap buys at
  // most tokenAmount).
  const owed = tokensFor(o, total);
  // Checked last, after every rule above (as in the contract): it is the revert only when nothing else reverts first.
  if (errs.length === 0 && owed === 0n) errs.push({ name: "InvestmentBuysNoTokens", args: [total] });
  return { errs, accepted, tokens: owed - before.tokensOwed, owed };
}

function setPausedRules(m: Model, caller: string, tokenizer: string, paused: boolean): Expected[] {
  const errs: Expected[] = [];
  if (caller !== tokenizer) errs.push({ name: "NotTokenizer", args: [caller] });
  if (m.closed) errs.push({ name: "OfferingAlreadyClosed", args: [OFFERING_ID] });
  if (paused && m.paused) errs.push({ name: "OfferingIsPaused", args: [OFFERING_ID] });
  if (!paused && !m.paused) errs.push({ name: "OfferingNotPaused", args: [OFFERING_ID] });
  return errs;
}

/** The tokenizer may close at any time; anyone else once the end is reached or the hard cap is filled. */
function closeRules(m: Model, caller: string, tokenizer: string, now: number): Expected[] {
  const errs: Expected[] = [];
  if (m.closed) errs.push({ name: "OfferingAlreadyClosed", args: [OFFERING_ID] });
  if (caller !== tokenizer && now < m.o.end && m.raised < m.o.hardCap) {
    errs.push({ name: "NotAllowedToClose", args: [caller] });
  }
  return errs;
}

function claimRules(m: Model, offeringId: bigint, investor: string): Expected[] {
  if (offeringId !== OFFERING_ID) return [{ name: "UnknownOffering", args: [offeringId] }];
  const errs: Expected[] = [];
  const p = position(m, investor);
  if (!m.closed) errs.push({ name: "OfferingNotClosed", args: [OFFERING_ID] });
  if (p.claimed) errs.push({ name: "AlreadyClaimed", args: [investor] });
  if (p.invested === 0n) errs.push({ name: "NothingToClaim", args: [investor] });
  if (errs.length === 0 && m.succeeded) {
    // Delivery waits for an investor the token would deliver to, and for the token to run; refunds never wait.
    if (m.frozen.has(investor)) {
      const code = m.tokenPaused ? TOKEN_CODE.PAUSED : TOKEN_CODE.RECEIVER_FROZEN;
      errs.push({ name: "InvestorCannotReceive", args: [OFFERING_ID, investor, code] });
    } else if (m.tokenPaused) errs.push({ name: "EnforcedPause", args: [] });
  }
  return errs;
}

/** Only the tokenizer, once, after a success, and only if the tokens sold cost something. */
function withdrawRules(m: Model, caller: string, tokenizer: string): Expected[] {
  const errs: Expected[] = [];
  if (caller !== tokenizer) errs.push({ name: "NotTokenizer", args: [caller] });
  if (!m.closed) errs.push({ name: "OfferingNotClosed", args: [OFFERING_ID] });
  else if (!m.succeeded) errs.push({ name: "OfferingNotSucceeded", args: [OFFERING_ID] });
  else if (m.proceedsWithdrawn || m.proceeds === 0n) errs.push({ name: "NothingToWithdraw", args: [OFFERING_ID] });
  return errs;
}

// ───────────────────────────── driver ─────────────────────────────

type Outcome = { ok: true; receipt: ContractTransactionReceipt } | { ok: false; name: string; args: unknown[] };

const norm = (v: unknown): string => (typeof v === "string" ? v.toLowerCase() : String(v));
const fmtArgs = (args: unknown[]) => args.map(norm).join(", ");
const fmtErr = (e: Expected) => `${e.name}(${fmtArgs(e.args)})`;

/**
 * The revert bytes of a failed send, in whichever shape the network reports them: the in-process Hardhat network
 * throws them as the error's `data` string; a node over JSON-RPC (`npx hardhat node`, `--network localhost`)
 * answers `{ message, txHash, data }` as the JSON-RPC error's data, so the bytes are at `data.data`; ethers may wrap
 * either (`error`, `info.error`, `parent`, `cause`). Undefined when the error carries no revert data at all.
 */
function revertDataOf(error: unknown, depth = 0): string | undefined {
  if (typeof error === "string") return /^0x(?:[0-9a-fA-F]{2})*$/.test(error) ? error : undefined;
  if (depth > 4 || typeof error !== "object" || error === null) return undefined;
  const e = error as Record<string, unknown>;
  for (const key of ["data", "error", "info", "parent", "cause"]) {
    const found = revertDataOf(e[key], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

class Runner {
  readonly trace: string[] = [];
  /** Coverage of the interesting invest paths, reported at the end. */
  readonly cover = { partialFill: 0, capFilled: 0, minWaived: 0, remainderPaid: 0 };
  readonly initialUsdc = new Map<string, bigint>();
  readonly investorAddrs: string[];
  readonly tokenizer: string;
  readonly outsider: string;
  readonly ifaces: Interface[];
  m!: Model;

  constructor(
    readonly ctx: Ctx,
    readonly n: number,
  ) {
    this.investorAddrs = ctx.investors.slice(0, n).map((s) => s.address.toLowerCase());
    this.tokenizer = ctx.tokenizer.address.toLowerCase();
    this.outsider = ctx.outsider.address.toLowerCase();
    this.ifaces = [ctx.escrow.interface, ctx.token.interface, ctx.usdc.interface];
  }

  signer(who: Who): HardhatEthersSigner {
    if (who === "tokenizer") return this.ctx.tokenizer;
    if (who === "outsider") return this.ctx.outsider;
    return this.ctx.investors[Number(who.slice(3))];
  }

  addr(who: Who): string {
    return this.signer(who).address.toLowerCase();
  }

  /** All accounts whose balances and positions are checked. */
  watched(): string[] {
    return [...this.investorAddrs, this.outsider];
  }

  fmtT(x: number): string {
    if (!this.m) return String(x);
    const { start, end } = this.m.o;
    if (x < start) return `S-${start - x}`;
    if (x < end) return `S+${x - start}`;
    return `E+${x - end}`;
  }

  /** Mines `send` at exactly t + 1 and decodes a revert. */
  async tx(send: () => Promise<ContractTransactionResponse>): Promise<Outcome> {
    const at = this.m ? this.m.t + 1 : (await time.latest()) + 1;
    await time.setNextBlockTimestamp(at);
    let outcome: Outcome;
    try {
      const receipt = await (await send()).wait();
      if (!receipt) throw new Error("no receipt");
      outcome = { ok: true, receipt };
    } catch (e) {
      const data = revertDataOf(e);
      if (data === undefined) throw e;
      const parsed = this.ifaces.map((i) => i.parseError(data)).find((d) => d !== null);
      outcome = parsed ? { ok: false, name: parsed.name, args: [...parsed.args] } : { ok: false, name: `raw:${data}`, args: [] };
    }
    // Also a reverted transaction was mined, at the chosen time.
    expect(await time.latest(), "transaction block timestamp").to.equal(at);
    if (this.m) this.m.t = at;
    return outcome;
  }

  /** Asserts the contract's outcome is the model's: success, or a revert with one of the allowed errors and its arguments. */
  check(label: string, allowed: Expected[], out: Outcome): void {
    if (allowed.length === 0) {
      expect(out.ok, `${label}: expected success, got ${out.ok ? "" : `${out.name}(${fmtArgs(out.args)})`}`).to.equal(true);
      return;
    }
    const allowedText = allowed.map(fmtErr).join(" | ");
    expect(out.ok, `${label}: expected a revert with ${allowedText}, but it succeeded`).to.equal(false);
    if (out.ok) return;
    const match = allowed.find((e) => e.name === out.name);
    expect(match, `${label}: reverted with ${out.name}(${fmtArgs(out.args)}), allowed: ${allowedText}`).to.not.equal(undefined);
    expect(out.args.map(norm), `${label}: arguments of ${out.name}`).to.deep.equal(match!.args.map(norm));
  }

  event(receipt: ContractTransactionReceipt, name: string): string[] {
    const found = receipt.logs
      .filter((l) => l.address.toLowerCase() === (this.ctx.escrow.target as string).toLowerCase())
      .map((l) => this.ctx.escrow.interface.parseLog(l))
      .filter((d) => d?.name === name);
    expect(found.length, `one ${name} event`).to.equal(1);
    return [...found[0]!.args].map(norm);
  }

  log(line: string, out: Outcome | null): void {
    const res = out === null ? "" : out.ok ? " => ok" : ` => revert ${out.name}(${fmtArgs(out.args)})`;
    this.trace.push(`  [t=${this.m ? this.fmtT(this.m.t) : "?"}] ${line}${res}`);
  }

  // ── setup ──

  async create(spec: ParamsSpec): Promise<void> {
    const { escrow, usdc, tokenizer } = this.ctx;
    for (const a of [...this.watched(), this.tokenizer, (escrow.target as string).toLowerCase()]) {
      this.initialUsdc.set(a, await usdc.balanceOf(a));
    }
    const hardCap = spec.hardCap;
    const max = frac(hardCap, spec.maxBps) > 0n ? frac(hardCap, spec.maxBps) : 1n;
    const now = (await time.latest()) + 1;
    const o: Offering = {
      tokenAmount: spec.tokenAmount,
      hardCap,
      softCap: frac(hardCap, spec.softBps),
      max,
      min: frac(max, spec.minBps),
      start: now + spec.startDelay,
      end: now + spec.startDelay + spec.duration,
    };
    const out = await this.tx(() =>
      escrow
        .connect(tokenizer)
        .newOffering(o.tokenAmount, 0n, o.softCap, o.hardCap, o.min, o.max, o.start, o.end, { gasLimit: GAS }),
    );
    this.trace.push(
      `  offering: tokenAmount=${o.tokenAmount} hardCap=${o.hardCap} softCap=${o.softCap} min=${o.min} max=${o.max}` +
        ` start=created+${spec.startDelay} duration=${spec.duration}`,
    );
    expect(out.ok, "newOffering").to.equal(true);
    this.m = {
      t: now,
      o,
      raised: 0n,
      tokensSold: 0n,
      paused: false,
      closed: false,
      succeeded: false,
      proceeds: 0n,
      proceedsWithdrawn: false,
      tokenPaused: false,
      frozen: new Set(),
      pos: new Map(),
    };
  }

  // ── actions ──

  async run(a: Action): Promise<void> {
    const { escrow } = this.ctx;
    const m = this.m;
    switch (a.kind) {
      case "invest": {
        const addr = this.addr(a.who);
        const amount = resolveAmount(m, addr, a.amount, a.bps);
        const now = m.t + 1;
        const { errs, accepted, tokens, owed } = investRules(m, addr, a.who !== "outsider", amount, now);
        const out = await this.tx(() => escrow.connect(this.signer(a.who)).invest(amount, { gasLimit: GAS }));
        this.log(`invest(${a.who}, ${a.amount}=${amount})`, out);
        this.check(`invest(${a.who}, ${amount})`, errs, out);
        if (out.ok) {
          expect(this.event(out.receipt, "Invested"), "Invested event").to.deep.equal(
            [OFFERING_ID, addr, accepted, tokens, amount - accepted].map(norm),
          );
          const p = position(m, addr);
          m.proceeds += costOf(m.o, owed) - costOf(m.o, p.tokensOwed);
          p.invested += accepted;
          p.tokensOwed = owed;
          m.raised += accepted;
          m.tokensSold += tokens;
          if (accepted < amount) this.cover.partialFill++;
          if (m.raised === m.o.hardCap) this.cover.capFilled++;
          if (accepted < m.o.min) this.cover.minWaived++;
        }
        return;
      }
      case "time": {
        const x = resolveTime(m, a.to, a.bps);
        if (x === null) {
          this.log(`time(${a.to}) skipped: already later`, null);
          return;
        }
        if (a.to === "tick") await time.increase(x - 1 - m.t);
        else await time.increaseTo(x - 1);
        m.t = x - 1;
        expect(await time.latest(), "time jump").to.equal(m.t);
        this.log(`time(${a.to}): next tx at ${this.fmtT(x)}`, null);
        return;
      }
      case "setPaused": {
        const caller = this.addr(a.by);
        if (a.paused === "resume" && !m.paused) {
          this.log(`setPaused(resume) skipped: not paused`, null);
          return;
        }
        const paused = a.paused === "resume" ? false : a.paused;
        const errs = setPausedRules(m, caller, this.tokenizer, paused);
        const out = await this.tx(() => escrow.connect(this.signer(a.by)).setPaused(paused, { gasLimit: GAS }));
        this.log(`setPaused(${paused}) by ${a.by}`, out);
        this.check(`setPaused(${paused}) by ${a.by}`, errs, out);
        if (out.ok) m.paused = paused;
        return;
      }
      case "close": {
        const caller = this.addr(a.by);
        const errs = closeRules(m, caller, this.tokenizer, m.t + 1);
        const out = await this.tx(() => escrow.connect(this.signer(a.by)).close({ gasLimit: GAS }));
        this.log(`close() by ${a.by} [raised=${m.raised}, softCap=${m.o.softCap}]`, out);
        this.check(`close() by ${a.by}`, errs, out);
        if (out.ok) {
          m.closed = true;
          m.succeeded = m.raised >= m.o.softCap;
          expect(this.event(out.receipt, "OfferingClosed"), "OfferingClosed event").to.deep.equal(
            [OFFERING_ID, m.succeeded, m.raised, m.tokensSold].map(norm),
          );
        }
        return;
      }
      case "claim": {
        const investor = this.addr(a.investor);
        const errs = claimRules(m, a.offeringId, investor);
        const out = await this.tx(() =>
          escrow.connect(this.signer(a.by)).claim(a.offeringId, investor, { gasLimit: GAS }),
        );
        this.log(`claim(${a.offeringId}, ${a.investor}) by ${a.by}`, out);
        this.check(`claim(${a.offeringId}, ${a.investor}) by ${a.by}`, errs, out);
        if (out.ok) {
          const p = position(m, investor);
          p.claimed = true;
          expect(this.event(out.receipt, "Claimed"), "Claimed event").to.deep.equal(
            [OFFERING_ID, investor, m.succeeded ? p.tokensOwed : 0n, m.succeeded ? remainderOf(m.o, p) : p.invested].map(
              norm,
            ),
          );
          if (m.succeeded && remainderOf(m.o, p) > 0n) this.cover.remainderPaid++;
        }
        return;
      }
      case "withdrawProceeds": {
        const errs = withdrawRules(m, this.addr(a.by), this.tokenizer);
        const out = await this.tx(() => escrow.connect(this.signer(a.by)).withdrawProceeds(OFFERING_ID, { gasLimit: GAS }));
        this.log(`withdrawProceeds() by ${a.by}`, out);
        this.check(`withdrawProceeds() by ${a.by}`, errs, out);
        if (out.ok) {
          expect(this.event(out.receipt, "ProceedsWithdrawn"), "ProceedsWithdrawn event").to.deep.equal(
            [OFFERING_ID, this.tokenizer, m.proceeds].map(norm),
          );
          m.proceedsWithdrawn = true;
        }
        return;
      }
      case "freezeInvestor": {
        const investor = this.addr(a.investor);
        const out = await this.tx(() =>
          this.ctx.token.connect(this.ctx.tokenizer).setAddressFrozen(investor, a.frozen, { gasLimit: GAS }),
        );
        this.log(`setAddressFrozen(${a.investor}, ${a.frozen})`, out);
        this.check(`setAddressFrozen(${a.investor})`, [], out);
        if (a.frozen) m.frozen.add(investor);
        else m.frozen.delete(investor);
        return;
      }
      case "pauseToken": {
        const errs = a.paused === m.tokenPaused ? [{ name: a.paused ? "EnforcedPause" : "ExpectedPause", args: [] }] : [];
        const token = this.ctx.token.connect(this.ctx.tokenizer);
        const out = await this.tx(() => (a.paused ? token.pause({ gasLimit: GAS }) : token.unpause({ gasLimit: GAS })));
        this.log(`token ${a.paused ? "pause" : "unpause"}()`, out);
        this.check(`token ${a.paused ? "pause" : "unpause"}()`, errs, out);
        if (out.ok) m.tokenPaused = a.paused;
        return;
      }
    }
  }

  /** Closes the offering if still open (after jumping past the end) and has every investor claim. */
  async finish(s: Scenario): Promise<void> {
    const m = this.m;
    this.trace.push("  -- finish --");
    if (!m.closed) {
      const target = m.o.end + Math.floor((3600 * s.finalJumpBps) / 10_000); // next tx at >= end
      if (target - 1 > m.t) {
        await time.increaseTo(target - 1);
        m.t = target - 1;
      }
      await this.run({ kind: "close", by: s.finalCloser });
      expect(m.closed, "the final close, after the end, is allowed to anyone").to.equal(true);
    }
    // The token runs and nobody is frozen any more: every position can be settled.
    if (m.tokenPaused) await this.run({ kind: "pauseToken", paused: false });
    for (let i = 0; i < this.n; i++) {
      if (m.frozen.has(this.investorAddrs[i])) await this.run({ kind: "freezeInvestor", investor: `inv${i}`, frozen: false });
    }
    for (let i = 0; i < this.n; i++) {
      const who = `inv${i}`;
      const p = position(m, this.investorAddrs[i]);
      if (p.invested === 0n || p.claimed) continue;
      await this.run({ kind: "claim", by: s.finalClaimers[i], investor: who, offeringId: OFFERING_ID });
      expect(p.claimed, `final claim for ${who}`).to.equal(true);
      await this.invariants();
    }
    if (m.succeeded && !m.proceedsWithdrawn && m.proceeds > 0n) {
      await this.run({ kind: "withdrawProceeds", by: "tokenizer" });
      expect(m.proceedsWithdrawn, "the tokenizer withdraws the proceeds").to.equal(true);
    }
  }

  // ── invariants ──

  async invariants(): Promise<void> {
    const { escrow, token, usdc } = this.ctx;
    const m = this.m;
    const { o } = m;
    const watched = this.watched();
    const escrowAddr = (escrow.target as string).toLowerCase();
    const [off, status, escrowBal, tokenizerBal, reserved, supply, views] = await Promise.all([
      escrow.offering(OFFERING_ID),
      escrow.status(OFFERING_ID),
      usdc.balanceOf(escrowAddr),
      usdc.balanceOf(this.tokenizer),
      token.reservedSupply(),
      token.totalSupply(),
      Promise.all(
        watched.map((a) =>
          Promise.all([
            escrow.invested(OFFERING_ID, a),
            escrow.tokensOwed(OFFERING_ID, a),
            escrow.claimed(OFFERING_ID, a),
            usdc.balanceOf(a),
            token.balanceOf(a),
            escrow.remainderOf(OFFERING_ID, a),
          ]),
        ),
      ),
    ]);

    // The model's offering state equals the contract's views.
    expect(off.raised, "raised").to.equal(m.raised);
    expect(off.tokensSold, "tokensSold").to.equal(m.tokensSold);
    expect([off.paused, off.closed, off.succeeded], "paused, closed, succeeded").to.deep.equal([
      m.paused,
      m.closed,
      m.succeeded,
    ]);
    expect(STATUS_NAMES[Number(status)], "status").to.equal(STATUS_NAMES[Number(modelStatus(m))]);
    expect(off.raised <= off.hardCap, "raised <= hardCap").to.equal(true);
    expect(off.tokensSold <= off.tokenAmount, "tokensSold <= tokenAmount").to.equal(true);

    expect(off.proceeds, "proceeds").to.equal(m.proceeds);
    expect(off.proceedsWithdrawn, "proceedsWithdrawn").to.equal(m.proceedsWithdrawn);

    let owedRefunds = 0n;
    let owedRemainders = 0n;
    let delivered = 0n;
    let sumInvested = 0n;
    let sumOwed = 0n;
    let sumCost = 0n;
    watched.forEach((a, i) => {
      const [invested, tokensOwed, claimed, usdcBal, tokenBal, remainder] = views[i];
      const p = position(m, a);
      expect([invested, tokensOwed, claimed], `position of ${a}`).to.deep.equal([p.invested, p.tokensOwed, p.claimed]);
      expect(remainder, `remainder of ${a}`).to.equal(remainderOf(o, p));
      expect(p.tokensOwed, `tokens owed to ${a}: its whole position, floored`).to.equal(tokensFor(o, p.invested));
      const paidBack = p.claimed ? (m.succeeded ? remainderOf(o, p) : p.invested) : 0n;
      const minted = p.claimed && m.succeeded ? p.tokensOwed : 0n;
      expect(usdcBal, `payment balance of ${a}`).to.equal(this.initialUsdc.get(a)! - p.invested + paidBack);
      expect(tokenBal, `token balance of ${a}`).to.equal(minted);
      if (m.closed && !m.succeeded && !p.claimed) owedRefunds += p.invested;
      if (m.closed && m.succeeded && !p.claimed) owedRemainders += remainderOf(o, p);
      delivered += tokenBal;
      sumInvested += p.invested;
      sumOwed += p.tokensOwed;
      sumCost += costOf(o, p.tokensOwed);
    });
    expect(sumInvested, "sum of invested == raised").to.equal(m.raised);
    expect(sumOwed, "sum of tokensOwed == tokensSold").to.equal(m.tokensSold);
    expect(sumCost, "sum of the positions' costs == proceeds").to.equal(m.proceeds);

    // The escrow holds exactly what it owes: everything while open; after a success the remainders not yet claimed and
    // the proceeds not yet withdrawn; after a failure the refunds not yet claimed.
    const held = escrowBal - this.initialUsdc.get(escrowAddr)!;
    const unwithdrawn = m.succeeded && !m.proceedsWithdrawn ? m.proceeds : 0n;
    const heldExpected = !m.closed ? m.raised : m.succeeded ? owedRemainders + unwithdrawn : owedRefunds;
    expect(held, "escrow payment balance").to.equal(heldExpected);
    // Close pushes nothing: the tokenizer has the proceeds once it withdrew them, and never more.
    expect(tokenizerBal, "tokenizer payment balance").to.equal(
      this.initialUsdc.get(this.tokenizer)! + (m.proceedsWithdrawn ? m.proceeds : 0n),
    );

    // Tokens: no premints, so the supply is what claims delivered.
    expect(supply, "total supply == delivered by claims").to.equal(delivered);
    expect(delivered <= o.tokenAmount, "delivered <= tokens offered").to.equal(true);
    if (!m.closed || m.succeeded) {
      expect(reserved + delivered <= o.tokenAmount, "reserved + delivered <= tokenAmount").to.equal(true);
    }
    const reservedExpected = !m.closed ? o.tokenAmount : m.succeeded ? m.tokensSold - delivered : 0n;
    expect(reserved, "reservedSupply").to.equal(reservedExpected);
  }

  /** Once closed and fully claimed: each investor has either its tokens or its money back, never both, never neither. */
  async eitherTokensOrMoney(): Promise<void> {
    const { usdc, token } = this.ctx;
    const m = this.m;
    expect(m.closed, "closed at the end").to.equal(true);
    for (const a of this.investorAddrs) {
      const p = position(m, a);
      const usdcBal = await usdc.balanceOf(a);
      const tokenBal = await token.balanceOf(a);
      const start = this.initialUsdc.get(a)!;
      if (p.invested === 0n) {
        expect([usdcBal, tokenBal], `non-investor ${a} untouched`).to.deep.equal([start, 0n]);
        continue;
      }
      expect(p.claimed, `${a} claimed`).to.equal(true);
      const gotMoneyBack = usdcBal === start;
      const gotTokens = tokenBal === p.tokensOwed && tokenBal > 0n;
      if (m.succeeded) {
        expect(tokenBal, `${a}: tokens delivered`).to.equal(p.tokensOwed);
        expect(usdcBal, `${a}: paid its tokens' price, the rest paid back`).to.equal(start - costOf(m.o, p.tokensOwed));
      } else {
        expect(usdcBal, `${a}: payment returned`).to.equal(start);
        expect(tokenBal, `${a}: no tokens after a failed offering`).to.equal(0n);
      }
      expect(gotTokens && gotMoneyBack, `${a}: both tokens and money back`).to.equal(false);
      expect(gotTokens || gotMoneyBack, `${a}: neither tokens nor money back`).to.equal(true);
    }
    const tokenizerBal = await usdc.balanceOf(this.tokenizer);
    expect(
      tokenizerBal - this.initialUsdc.get(this.tokenizer)!,
      "the tokenizer received exactly the price of the tokens sold on success",
    ).to.equal(m.succeeded ? m.proceeds : 0n);
  }
}

// ───────────────────────────── property ─────────────────────────────

describe("StoEscrow (property-based, model-checked)", function () {
  this.timeout(300_000);

  it("random offering histories agree with the model and keep the escrow invariants", async function () {
    const stats = { runs: 0, steps: 0, ok: 0, investOk: 0, reverts: new Map<string, number>(), completed: 0, failed: 0 };
    const cover = { partialFill: 0, capFilled: 0, minWaived: 0, remainderPaid: 0 };
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const ctx = await loadFixture(propertyFixture);
        const r = new Runner(ctx, s.n);
        try {
          await r.create(s.params);
          await r.invariants();
          for (const a of s.actions) {
            await r.run(a);
            await r.invariants();
          }
          await r.finish(s);
          await r.invariants();
          await r.eitherTokensOrMoney();
        } catch (e) {
          const msg = e instanceof Error ? e.message : String(e);
          throw new Error(`${msg}\n  executed trace (${s.n} investors):\n${r.trace.join("\n")}`);
        }
        stats.runs++;
        stats.steps += s.actions.length;
        for (const line of r.trace) {
          if (line.endsWith("=> ok")) stats.ok++;
          if (line.includes("] invest(") && line.endsWith("=> ok")) stats.investOk++;
          const rv = / => revert (\w+)\(/.exec(line);
          if (rv) stats.reverts.set(rv[1], (stats.reverts.get(rv[1]) ?? 0) + 1);
        }
        for (const k of Object.keys(cover) as (keyof typeof cover)[]) cover[k] += r.cover[k];
        if (r.m.succeeded) stats.completed++;
        else stats.failed++;
      }),
      { numRuns: NUM_RUNS, seed: SEED, endOnFailure: true, examples: [[coarseExample], [remainderExample]] },
    );
    const reverts = [...stats.reverts.entries()].sort().map(([k, v]) => `${k}=${v}`).join(" ");
    console.log(
      `      ${stats.runs} runs, ${stats.steps} random actions, ${stats.ok} successful txs (${stats.investOk} invests);` +
        ` closes: ${stats.completed} completed / ${stats.failed} failed\n      invests: ${JSON.stringify(cover)}` +
        `\n      reverts: ${reverts}`,
    );
  });
});
