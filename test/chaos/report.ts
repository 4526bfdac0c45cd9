import { Interface } from "ethers";
import { AgentTokenFactory__factory } from "../../typechain-types/factories/contracts/agents/AgentTokenFactory__factory";
import { USDC__factory } from "../../typechain-types/factories/contracts/payments/USDC__factory";
import { BKN__factory } from "../../typechain-types/factories/contracts/payments/BKN__factory";
import type { OpRecord } from "./operations";
import type { ChaosWorld } from "./world";

/** What one scenario did, in the terms: every figure but the first two must be 0. */
export interface ScenarioReport {
  scenario: string;
  operations: number;
  /** Reached success or rejected (with their payments settled or released). */
  terminal: number;
  /** Ended rejected: every operation of the scenarios is valid, so this must be 0 too. */
  rejected: number;
  stuck: number;
  /** The chain holds the operation more than once. */
  sentTwice: number;
  /** More than one of an operation's payments was taken on chain. */
  chargedTwice: number;
  /** A payment taken on chain for an operation the chain does not hold. */
  chargedWithoutOperation: number;
  /** An operation on chain whose payment was never taken (paid work given away). */
  unpaid: number;
  /** The API said success for an operation the chain does not hold (or rejected for one it does). */
  wrongStatus: number;
  http5xx: number;
  p50Ms?: number;
  p95Ms?: number;
  notes: string[];
}

const factoryEvents = new Interface(AgentTokenFactory__factory.abi);

/** How often each symbol's agent token was created on the canonical chain since `fromBlock`. */
async function creationsBySymbol(world: ChaosWorld, fromBlock: number): Promise<Map<string, number>> {
  const logs = await world.base.provider.getLogs({
    address: world.base.deployment.contracts.AgentTokenFactory,
    topics: [factoryEvents.getEvent("AgentTokenCreated")!.topicHash],
    fromBlock,
    toBlock: "latest",
  });
  const counts = new Map<string, number>();
  for (const log of logs) {
    const symbol = String(factoryEvents.parseLog(log)!.args.symbol);
    counts.set(symbol, (counts.get(symbol) ?? 0) + 1);
  }
  return counts;
}

function percentile(values: number[], p: number): number | undefined {
  if (!values.length) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Checks every operation of a scenario against the chain (faults cleared, mining resumed). */
export async function reportScenario(
  world: ChaosWorld,
  scenario: string,
  fromBlock: number,
  ops: OpRecord[],
): Promise<ScenarioReport> {
  const created = await creationsBySymbol(world, fromBlock);
  const usdc = USDC__factory.connect(world.base.deployment.contracts.USDC!, world.base.provider);
  const report: ScenarioReport = {
    scenario,
    operations: ops.length,
    terminal: 0,
    rejected: 0,
    stuck: 0,
    sentTwice: 0,
    chargedTwice: 0,
    chargedWithoutOperation: 0,
    unpaid: 0,
    wrongStatus: 0,
    http5xx: 0,
    notes: [],
  };
  const bkn = BKN__factory.connect(world.faucet.bkn, world.faucet.provider);
  const faucetAmount = await bkn.FAUCET_AMOUNT();
  for (const op of ops) {
    const onChain =
      op.kind === "paid-elsewhere"
        ? Number((await bkn.balanceOf(op.recipient!)) / faucetAmount)
        : (created.get(op.symbol) ?? 0);
    const charged = (
      await Promise.all(op.paymentNonces.map((n) => usdc.authorizationState(world.payer.address, n)))
    ).filter(Boolean).length;
    if (op.status === "success" || op.status === "rejected") report.terminal++;
    else if (op.status === "pending") report.stuck++;
    if (op.status === "rejected" || op.status === "failed-to-start") report.rejected++;
    if (onChain > 1) report.sentTwice++;
    if (charged > 1) report.chargedTwice++;
    if (charged > 0 && onChain === 0) report.chargedWithoutOperation++;
    if (op.kind !== "client-signed" && onChain > 0 && charged === 0) report.unpaid++;
    if ((op.status === "success") !== onChain > 0 && op.status !== "pending") report.wrongStatus++;
    report.http5xx += op.http5xx;
    for (const e of op.errors ?? []) report.notes.push(`${op.kind} ${op.symbol}: ${e}`);
    if (op.note) report.notes.push(`${op.kind} ${op.symbol}: ${op.note}`);
    else if (op.status !== "success") report.notes.push(`${op.kind} ${op.symbol} (${op.txId}): ${op.status}`);
  }
  const times = ops.filter((o) => o.msToTerminal !== undefined).map((o) => o.msToTerminal!);
  report.p50Ms = percentile(times, 50);
  report.p95Ms = percentile(times, 95);
  return report;
}

/** The reports as the closing note's table. */
export function reportTable(reports: ScenarioReport[]): string {
  const head = [
    "scenario",
    "ops",
    "terminal",
    "rejected",
    "stuck",
    "sent twice",
    "charged twice",
    "charged w/o op",
    "unpaid",
    "wrong status",
    "5xx",
    "p50 s",
    "p95 s",
  ];
  const s = (ms?: number) => (ms === undefined ? "–" : (ms / 1000).toFixed(1));
  const rows = reports.map((r) =>
    [
      r.scenario,
      r.operations,
      r.terminal,
      r.rejected,
      r.stuck,
      r.sentTwice,
      r.chargedTwice,
      r.chargedWithoutOperation,
      r.unpaid,
      r.wrongStatus,
      r.http5xx,
      s(r.p50Ms),
      s(r.p95Ms),
    ].map(String),
  );
  const lines = [head, head.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`);
  return lines.join("\n");
}

/** The figures that must be 0 in every scenario, with what is not. */
export function failures(report: ScenarioReport): string[] {
  const zero: (keyof ScenarioReport)[] = [
    "rejected",
    "stuck",
    "sentTwice",
    "chargedTwice",
    "chargedWithoutOperation",
    "unpaid",
    "wrongStatus",
    "http5xx",
  ];
  return zero.filter((k) => report[k] !== 0).map((k) => `${report.scenario}: ${k} = ${String(report[k])}`);
}
