/**
 * Property tests for SecurityToken's issuer controls with its escrow: random sequences of holder transfers, mints,
 * burns, whitelist changes, address and partial freezes, pauses, forced transfers, two-step recoveries (request,
 * cancel by the lost wallet or an agent, execute after the delay, and time passing), dividend distributions and
 * claims, and one offering (invest, close, claim, redirect, refund), driven against the real contracts. Wallets 0 and
 * 5, 1 and 6, 2 and 4 belong to one investor each (3 to its own), so recoveries and redirects have somewhere to go.
 * After every step the invariants hold:
 *
 *   - total supply = the sum of every balance, and supply + reserved supply stays within the cap;
 *   - no frozen amount exceeds its balance (freezes are drawn within the balance: ERC-7943 allows more, and the
 *     unit tests cover that case);
 *   - dividend entitlements, magnified and unrounded, are conserved: outside distributions no account's entitlement
 *     changes, except that an executed recovery moves the lost wallet's, and its withdrawn total, to the new wallet
 *     exactly; a distribution adds exactly what it distributed (with the carried remainder); withdrawn never exceeds
 *     accumulated, and the token holds every unclaimed dividend;
 *   - the escrow's reservation is exactly the tokens still owed (the whole offering while it is open);
 *   - a holder's transfer, burn or a mint succeeds exactly when detectTransferRestriction said 0 just before, and a
 *     dividend claim exactly when the token is not paused, the holder not address-frozen and something is owed;
 *   - a pending recovery always joins two wallets of one investor, and a reverted action changes nothing.
 *
 * Reproduce / widen: FC_SEED=<seed> FC_NUM_RUNS=<n> npx hardhat test test/contracts/tokenization/issuer-controls.property.test.ts
 */
import { expect } from "chai";
import fc from "fast-check";
import { ethers } from "hardhat";
import { ErrorFragment } from "ethers";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import {
  DAY,
  INVESTOR,
  MAGNITUDE,
  SECURITY_TOKEN_STORAGE,
  TOKEN_SLOT,
  TOKENS,
  USDC,
  createTokenization,
  deployFactoryFixture,
  magnifiedEntitlementOf,
  tokenizationParams,
} from "./helpers";

const DEFAULT_NUM_RUNS = 30;
const NUM_RUNS = Number(process.env.FC_NUM_RUNS ?? DEFAULT_NUM_RUNS);
const SEED = Number(process.env.FC_SEED ?? 0x1c0f7e1);
const CAP = TOKENS(10_000);
const OFFERED = TOKENS(1000);
const PREMINTS = [TOKENS(1000), TOKENS(500), TOKENS(200), 0n, TOKENS(50)];
/** The investor of each actor: 0 and 5, 1 and 6, 2 and 4 share one. */
const INVESTOR_OF = ["a", "b", "c", "d", "c", "a", "b"].map(INVESTOR);
/** Each actor's other wallet (3 has none: its recoveries go to a random actor and are refused). */
const PARTNER = [5, 6, 4, -1, 2, 0, 1];

async function controlsPropertyFixture() {
  const base = await deployFactoryFixture();
  const signers = await ethers.getSigners();
  const holders = [base.alice, base.bob, base.carol, base.dave, signers[7]];
  const fresh = [signers[8], signers[9]]; // bound and whitelisted, empty: the other wallets of 0 and 1
  const { token, escrow } = await createTokenization(
    base.factory,
    base.tokenizer,
    tokenizationParams(await base.usdc.getAddress(), {
      supplyCap: CAP,
      initialHolders: holders.map((h) => h.address),
      initialInvestorIds: INVESTOR_OF.slice(0, 5),
      preMints: PREMINTS,
    }),
  );
  await token.connect(base.tokenizer).whitelistInvestors(
    fresh.map((f) => f.address),
    INVESTOR_OF.slice(5),
  );
  await token.connect(base.tokenizer).setRecoveryDelay(DAY);
  for (const s of [base.tokenizer, ...holders, ...fresh]) {
    await base.usdc.mint(s.address, USDC(1_000_000));
    await base.usdc.connect(s).approve(escrow.target, ethers.MaxUint256);
  }
  await base.usdc.connect(base.tokenizer).approve(token.target, ethers.MaxUint256);
  const start = (await time.latest()) + 10;
  await escrow
    .connect(base.tokenizer)
    .newOffering(OFFERED, 0n, USDC(1000), USDC(10_000), USDC(1), USDC(10_000), start, start + 60 * DAY);
  await time.increaseTo(start);
  return { ...base, token, escrow, actors: [...holders, ...fresh] };
}
type Ctx = Awaited<ReturnType<typeof controlsPropertyFixture>>;

// ───────────────────────────── actions ─────────────────────────────

/** Holders (0-4) mostly, the fresh wallets (5, 6) sometimes. */
const actor = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 0, max: 4 }) },
  { weight: 1, arbitrary: fc.integer({ min: 5, max: 6 }) },
);
const bps = fc.integer({ min: 0, max: 12_000 });
/** A recovery or redirect target: the actor's other wallet mostly (-1: it), any actor sometimes. */
const target = fc.oneof({ weight: 4, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 6 }) });

type Action =
  | { kind: "transfer" | "forced"; from: number; to: number; bps: number }
  | { kind: "burn" | "freeze" | "unfreeze" | "invest"; who: number; bps: number }
  | { kind: "mint"; to: number; bps: number }
  | { kind: "freezeAddress" | "whitelist"; who: number; on: boolean }
  | { kind: "requestRecovery" | "redirect" | "refund"; from: number; to: number }
  | { kind: "cancelRecovery"; from: number; byAgent: boolean }
  | { kind: "executeRecovery"; from: number; byNewWallet: boolean }
  | { kind: "wait"; seconds: number }
  | { kind: "pause"; on: boolean }
  | { kind: "distribute"; amount: bigint }
  | { kind: "claimDividends" | "claimOffering"; who: number }
  | { kind: "close" };

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ kind: fc.constant("transfer" as const), from: actor, to: actor, bps }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("forced" as const), from: actor, to: actor, bps }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("burn" as const), who: actor, bps }) },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("freeze" as const), who: actor, bps: fc.integer({ min: 0, max: 10_000 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("unfreeze" as const), who: actor, bps }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("invest" as const), who: actor, bps }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("mint" as const), to: actor, bps }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("freezeAddress" as const), who: actor, on: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("whitelist" as const), who: actor, on: fc.boolean() }) },
  { weight: 7, arbitrary: fc.record({ kind: fc.constant("requestRecovery" as const), from: actor, to: target }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("cancelRecovery" as const), from: actor, byAgent: fc.boolean() }),
  },
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("executeRecovery" as const), from: actor, byNewWallet: fc.boolean() }),
  },
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("wait" as const), seconds: fc.integer({ min: 6 * 3600, max: 3 * 24 * 3600 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("redirect" as const), from: actor, to: target }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("refund" as const), from: actor, to: target }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("pause" as const),
      on: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 2, arbitrary: fc.constant(false) }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("distribute" as const), amount: fc.bigInt({ min: 1n, max: USDC(5000) }) }),
  },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("claimDividends" as const), who: actor }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("claimOffering" as const), who: actor }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("close" as const) }) },
);

const scaled = (value: bigint, basisPoints: number) => (value * BigInt(basisPoints)) / 10_000n;
/** The first actor from `from` on (cyclically) with a recovery pending, or `from` when none has one. */
function withPendingRecovery(s: Snapshot, from: number): number {
  for (let k = 0; k < s.pending.length; k++) {
    const i = (from + k) % s.pending.length;
    if (s.pending[i] !== ethers.ZeroAddress) return i;
  }
  return from;
}
/** `to` of a recovery, redirect or refund: -1 names the actor's other wallet (or, for 3, the actor itself). */
const resolveTarget = (from: number, to: number) => (to >= 0 ? to : PARTNER[from] >= 0 ? PARTNER[from] : from);

// ───────────────────────────── state ─────────────────────────────

interface Snapshot {
  balances: bigint[];
  frozen: bigint[];
  addressFrozen: boolean[];
  magnified: bigint[];
  accumulated: bigint[];
  withdrawn: bigint[];
  withdrawable: bigint[];
  pending: string[]; // each actor's pending recovery target (zero address: none)
  supply: bigint;
  reserved: bigint;
  distributed: bigint;
  carried: bigint;
  paused: boolean;
  tokenUsdc: bigint;
  owed: bigint[];
  claimed: boolean[];
  status: bigint;
}

async function snapshot(c: Ctx): Promise<Snapshot> {
  const { token, escrow, usdc, actors } = c;
  const each = <T>(f: (a: string) => Promise<T>) => Promise.all(actors.map((a) => f(a.address)));
  return {
    balances: await each((a) => token.balanceOf(a)),
    frozen: await each((a) => token.getFrozenTokens(a)),
    addressFrozen: await each((a) => token.isFrozen(a)),
    magnified: await each((a) => magnifiedEntitlementOf(token, a)),
    accumulated: await each((a) => token.accumulativeDividendOf(a)),
    withdrawn: await each((a) => token.withdrawnDividendOf(a)),
    withdrawable: await each((a) => token.withdrawableDividendOf(a)),
    pending: await each(async (a) => (await token.pendingRecovery(a)).newWallet),
    supply: await token.totalSupply(),
    reserved: await token.reservedSupply(),
    distributed: await token.totalDividendsDistributed(),
    carried: BigInt(await ethers.provider.getStorage(token.target, SECURITY_TOKEN_STORAGE + TOKEN_SLOT.carriedRemainder)),
    paused: await token.paused(),
    tokenUsdc: await usdc.balanceOf(token.target),
    owed: await each((a) => escrow.tokensOwed(1, a)),
    claimed: await each((a) => escrow.claimed(1, a)),
    status: await escrow.status(1),
  };
}

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);
const COMPLETED = 5n;
const FAILED = 6n;

function checkInvariants(c: Ctx, s: Snapshot): void {
  expect(s.supply, "total supply = sum of balances").to.equal(sum(s.balances));
  expect(s.supply + s.reserved <= CAP, "supply + reserved within the cap").to.equal(true);
  s.frozen.forEach((f, i) =>
    expect(f <= s.balances[i], `actor ${i}: frozen ${f} <= balance ${s.balances[i]}`).to.equal(true),
  );
  s.withdrawn.forEach((w, i) => expect(w <= s.accumulated[i], `actor ${i}: withdrawn <= accumulated`).to.equal(true));
  s.magnified.forEach((m, i) => expect(m / MAGNITUDE, `actor ${i}: accumulated = magnified / 2^128`).to.equal(s.accumulated[i]));
  expect(sum(s.accumulated) <= s.distributed, "entitlements <= distributed").to.equal(true);
  expect(sum(s.accumulated) - sum(s.withdrawn) <= s.tokenUsdc, "the token holds every unclaimed dividend").to.equal(true);
  const stillOwed = sum(s.owed.filter((_, i) => !s.claimed[i]));
  const expectedReserved = s.status === COMPLETED ? stillOwed : s.status === FAILED ? 0n : OFFERED;
  expect(s.reserved, "reservation = tokens still owed").to.equal(expectedReserved);
  s.pending.forEach((p, i) => {
    if (p === ethers.ZeroAddress) return;
    const j = c.actors.findIndex((a) => a.address === p);
    expect(INVESTOR_OF[j], `pending recovery of ${i} to ${j}: one investor`).to.equal(INVESTOR_OF[i]);
  });
}

/**
 * Magnified entitlements are conserved by everything but a distribution, which adds exactly its amount (with the
 * remainder carried from the last one, less the one it carries); an executed recovery moves one wallet's entitlement
 * and withdrawn total to another, exactly.
 */
function checkEntitlements(c: Ctx, before: Snapshot, after: Snapshot, a: Action, succeeded: boolean): void {
  const expected = [...before.magnified];
  const expectedWithdrawn = [...before.withdrawn];
  if (a.kind === "distribute" && succeeded) {
    expect(sum(after.magnified) - sum(before.magnified), `a distribution of ${a.amount}`).to.equal(
      a.amount * MAGNITUDE + before.carried - after.carried,
    );
    return;
  }
  if (a.kind === "executeRecovery" && succeeded) {
    const from = withPendingRecovery(before, a.from);
    const to = c.actors.findIndex((x) => x.address === before.pending[from]);
    expected[to] += expected[from];
    expected[from] = 0n;
    expectedWithdrawn[to] += expectedWithdrawn[from];
    expectedWithdrawn[from] = 0n;
  }
  expect(after.magnified, `entitlements after ${a.kind}`).to.deep.equal(expected);
  if (a.kind !== "claimDividends") expect(after.withdrawn, `withdrawn after ${a.kind}`).to.deep.equal(expectedWithdrawn);
}

// ───────────────────────────── runner ─────────────────────────────

async function attempt(send: () => Promise<{ wait(): Promise<unknown> }>): Promise<{ ok: boolean; error?: string }> {
  try {
    await (await send()).wait();
    return { ok: true };
  } catch (e) {
    const data = (e as { data?: string }).data;
    return { ok: false, error: typeof data === "string" ? data.slice(0, 10) : (e as Error).message.slice(0, 80) };
  }
}

async function run(c: Ctx, a: Action, s: Snapshot, trace: string[]): Promise<boolean> {
  const { token, escrow, tokenizer, actors } = c;
  const addr = (i: number) => actors[i].address;
  const as = (i: number): HardhatEthersSigner => actors[i];
  let expectOk: boolean | undefined;
  let result: { ok: boolean; error?: string };
  switch (a.kind) {
    case "transfer": {
      const amount = scaled(s.balances[a.from], a.bps);
      expectOk = (await token.detectTransferRestriction(addr(a.from), addr(a.to), amount)) === 0n;
      result = await attempt(() => token.connect(as(a.from)).transfer(addr(a.to), amount));
      break;
    }
    case "burn": {
      const amount = scaled(s.balances[a.who], a.bps);
      expectOk = amount > 0n && (await token.detectTransferRestriction(addr(a.who), ethers.ZeroAddress, amount)) === 0n;
      result = await attempt(() => token.connect(as(a.who)).burn(amount));
      break;
    }
    case "mint": {
      const amount = scaled(TOKENS(1000), a.bps);
      expectOk = amount > 0n && (await token.detectTransferRestriction(ethers.ZeroAddress, addr(a.to), amount)) === 0n;
      result = await attempt(() => token.connect(tokenizer).mint(addr(a.to), amount));
      break;
    }
    case "forced":
      result = await attempt(() =>
        token.connect(tokenizer).forcedTransfer(addr(a.from), addr(a.to), scaled(s.balances[a.from], a.bps)),
      );
      break;
    case "freeze":
      result = await attempt(() =>
        token.connect(tokenizer).setFrozenTokens(addr(a.who), scaled(s.balances[a.who], a.bps)),
      );
      break;
    case "unfreeze":
      result = await attempt(() =>
        token.connect(tokenizer).unfreezePartialTokens(addr(a.who), scaled(s.frozen[a.who], a.bps)),
      );
      break;
    case "freezeAddress":
      result = await attempt(() => token.connect(tokenizer).setAddressFrozen(addr(a.who), a.on));
      break;
    case "whitelist":
      result = await attempt(() => token.connect(tokenizer).setWhitelisted(addr(a.who), a.on));
      break;
    case "requestRecovery": {
      const to = resolveTarget(a.from, a.to);
      result = await attempt(() => token.connect(tokenizer).requestRecovery(addr(a.from), addr(to)));
      break;
    }
    case "cancelRecovery": {
      const from = withPendingRecovery(s, a.from);
      result = await attempt(() => token.connect(a.byAgent ? tokenizer : as(from)).cancelRecovery(addr(from)));
      break;
    }
    case "executeRecovery": {
      const from = withPendingRecovery(s, a.from);
      const newWallet = actors.find((x) => x.address === s.pending[from]);
      const caller = a.byNewWallet && newWallet ? newWallet : tokenizer;
      result = await attempt(() => token.connect(caller).executeRecovery(addr(from)));
      break;
    }
    case "wait":
      await time.increase(a.seconds);
      result = { ok: true };
      break;
    case "pause":
      result = await attempt(() => (a.on ? token.connect(tokenizer).pause() : token.connect(tokenizer).unpause()));
      break;
    case "distribute":
      result = await attempt(() => token.connect(tokenizer).distributeDividends(a.amount));
      break;
    case "claimDividends":
      // Frozen means frozen: nothing is paid while paused or to an address-frozen holder; a removed one may claim.
      expectOk = !s.paused && !s.addressFrozen[a.who] && s.withdrawable[a.who] > 0n;
      result = await attempt(() => token.connect(as(a.who)).claimDividends());
      break;
    case "invest":
      result = await attempt(() => escrow.connect(as(a.who)).invest(scaled(USDC(3000), a.bps)));
      break;
    case "close":
      result = await attempt(() => escrow.connect(tokenizer).close());
      break;
    case "claimOffering":
      result = await attempt(() => escrow.claim(1, addr(a.who)));
      break;
    case "redirect":
      result = await attempt(() =>
        escrow.connect(tokenizer).redirectClaim(1, addr(a.from), addr(resolveTarget(a.from, a.to))),
      );
      break;
    case "refund":
      result = await attempt(() =>
        escrow.connect(tokenizer).refundClaim(1, addr(a.from), addr(resolveTarget(a.from, a.to))),
      );
      break;
  }
  trace.push(
    `${JSON.stringify(a, (_, v) => (typeof v === "bigint" ? v.toString() : v))} => ${result.ok ? "ok" : `revert ${result.error}`}`,
  );
  if (expectOk !== undefined) expect(result.ok, `the token's prediction agreed with ${a.kind}`).to.equal(expectOk);
  return result.ok;
}

/**
 * Closes the offering if still open, then settles every position: the investor claims, or, refused by the token,
 * the tokenizer redirects its tokens to the investor's other wallet if that may receive, or refunds it to itself.
 * Nothing stays.
 */
async function settleEverything(c: Ctx, trace: string[]): Promise<void> {
  const { escrow, token, tokenizer, actors } = c;
  if ((await token.paused()) === true) await (await token.connect(tokenizer).unpause()).wait();
  if ((await escrow.status(1)) < COMPLETED) await (await escrow.connect(tokenizer).close()).wait();
  const succeeded = (await escrow.status(1)) === COMPLETED;
  for (const [i, a] of actors.entries()) {
    if ((await escrow.invested(1, a.address)) === 0n || (await escrow.claimed(1, a.address))) continue;
    if (!succeeded || (await token.canReceive(a.address))) {
      await (await escrow.claim(1, a.address)).wait();
      trace.push(`settle: actor ${i} claims`);
      continue;
    }
    const partner = PARTNER[i];
    const sameInvestor = partner >= 0 && (await token.investorOf(actors[partner].address)) === INVESTOR_OF[i];
    if (sameInvestor && (await token.canReceive(actors[partner].address))) {
      await (await escrow.connect(tokenizer).redirectClaim(1, a.address, actors[partner].address)).wait();
      trace.push(`settle: actor ${i} redirected to ${partner}`);
    } else {
      await (await escrow.connect(tokenizer).refundClaim(1, a.address, a.address)).wait();
      trace.push(`settle: actor ${i} refunded`);
    }
  }
  for (const a of actors) {
    expect(
      (await escrow.invested(1, a.address)) === 0n || (await escrow.claimed(1, a.address)),
      "every position settled",
    ).to.equal(true);
  }
  expect(await token.reservedSupply(), "no reservation left").to.equal(0n);
}

function errorName(c: Ctx, selector: string): string {
  for (const iface of [c.token.interface, c.escrow.interface, c.usdc.interface]) {
    for (const f of iface.fragments) if (f instanceof ErrorFragment && f.selector === selector) return f.name;
  }
  return selector;
}

describe("SecurityToken issuer controls (property-based)", function () {
  this.timeout(900_000);

  it("random histories keep supply, frozen amounts, dividend entitlements, recoveries and reservations consistent", async function () {
    const counts = new Map<string, number>();
    const reverts = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 15, maxLength: 40 }), async (actions) => {
        const c = await loadFixture(controlsPropertyFixture);
        const trace: string[] = [];
        try {
          let before = await snapshot(c);
          checkInvariants(c, before);
          for (const a of actions) {
            const ok = await run(c, a, before, trace);
            if (ok) counts.set(a.kind, (counts.get(a.kind) ?? 0) + 1);
            else {
              const name = trace[trace.length - 1].split("revert ")[1];
              const key = `${a.kind}:${errorName(c, name)}`;
              reverts.set(key, (reverts.get(key) ?? 0) + 1);
            }
            const after = await snapshot(c);
            checkInvariants(c, after);
            checkEntitlements(c, before, after, a, ok);
            if (!ok) expect(after, "a reverted action changes nothing").to.deep.equal(before);
            before = after;
          }
          await settleEverything(c, trace);
          checkInvariants(c, await snapshot(c));
        } catch (e) {
          throw new Error(`${(e as Error).message}\n  trace:\n    ${trace.join("\n    ")}`);
        }
      }),
      { numRuns: NUM_RUNS, seed: SEED, endOnFailure: true },
    );
    const list = (m: Map<string, number>) =>
      [...m.entries()]
        .sort()
        .map(([k, v]) => `${k}=${v}`)
        .join(" ");
    console.log(`      reverts: ${list(reverts)}`);
    console.log(`      successful actions: ${list(counts)}`);
    // What the histories reached is asked of the full run (npm test); a shorter one (the standalone node's, .ci/run)
    // checks the same properties on fewer histories.
    if (NUM_RUNS < DEFAULT_NUM_RUNS) return;
    for (const kind of [
      "transfer",
      "forced",
      "requestRecovery",
      "cancelRecovery",
      "executeRecovery",
      "distribute",
      "claimDividends",
      "freeze",
      "invest",
    ]) {
      expect(counts.get(kind) ?? 0, `${kind} succeeded at least once`).to.be.greaterThan(0);
    }
    for (const refusal of ["claimDividends:DividendsHeld", "requestRecovery:NotSameInvestor", "executeRecovery:RecoveryNotReady"]) {
      expect(reverts.get(refusal) ?? 0, `${refusal} met at least once`).to.be.greaterThan(0);
    }
  });
});
