import { LOW_BALANCE, type WalletBalance } from "../wallet-balances";
import type { Overview } from "../wire/console";
import type { Services } from "../usecases/services";
import { recently } from "./recently";
import { chainFacts, headAgeSeconds, stuckBounds, type ChainFacts } from "./chain-facts";
import { ether, headSignal, paymentSignals, stuckSignal, walletSignal, webhooksSignal, type Signal } from "./triage";

/** The span the wallets' recent spend is measured over. */
const SPEND_HOURS = 24;
/** The last day's half-hour buckets and the wallets' day of spend are read at most this often (they move slowly). */
const SLOW_TTL_MS = 30_000;
/**
 * The console's overview, from the service's own state: first what needs someone (the triage's signals: stale heads,
 * stuck transactions, wallets short of a day of spend, deliveries and settlements owed, each linking to its list),
 * then each chain's head and RPC URLs (the resilient provider's own record of each), the relayer and settlement
 * wallets (balance, spend, nonce counter, work in flight), the queues, and the last hour's and day's activity.
 */
export async function overview(services: Services): Promise<Overview> {
  const now = Date.now();
  const facts = await chainFacts(services.chains.list(), services.config);
  const afterBlocks = services.config.CONSOLE_STUCK_AFTER_BLOCKS;
  const [wallets, depth, payments, owed, webhooks, stuck, inFlight, lastHour, lastDay] = await Promise.all([
    walletViews(services, facts),
    services.batchSearch.queueDepth(),
    services.paymentSearch.counts(),
    services.paymentSearch.owed(),
    services.webhookAdmin.owed(),
    services.batchSearch.count({ stuck: stuckBounds(facts, afterBlocks, now) }),
    services.batchSearch.inFlightByChain(),
    services.batchSearch.activity(60, 1),
    recently(services, "activity-day", SLOW_TTL_MS, () => services.batchSearch.activity(48, 30)),
  ]);
  // The longest wait in blocks: from the head recorded at its broadcast, else its time over the chain's block time.
  const oldestBlocks = Math.max(
    -1,
    ...inFlight.map((c) => {
      const chain = facts.find((f) => f.chainId === c.chainId);
      if (chain?.head && c.oldestBroadcastBlock !== null) return chain.head.number - c.oldestBroadcastBlock;
      if (!chain || !c.oldestBroadcastAt) return -1;
      return Math.floor((now - Date.parse(c.oldestBroadcastAt)) / 1000 / chain.blockSeconds);
    }),
  );
  const signals: Signal[] = [
    ...facts.map((f) => headSignal(f, now)),
    stuckSignal(stuck.total, oldestBlocks < 0 ? null : oldestBlocks, afterBlocks),
    ...wallets.map((w) => w.signal),
    webhooksSignal(webhooks),
    ...paymentSignals(owed, now),
  ];
  return {
    generatedAt: new Date(now).toISOString(),
    signals,
    chains: facts.map((f) => chainView(services, f, now)),
    wallets: wallets.map((w) => w.view),
    queue: {
      prepared: depth.prepared,
      sending: depth.sending,
      stuck: stuck.total,
      paymentsReserved: payments.reserved,
      paymentsSettling: payments.settling,
      webhooksOwed: webhooks.owed,
      webhooksPaused: webhooks.paused,
      oldestUndeliveredSeconds: Math.round(webhooks.oldestOwedSeconds),
    },
    lastHour,
    lastDay,
  };
}

function chainView(services: Services, f: ChainFacts, now: number): Overview["chains"][number] {
  const chain = services.chains.find(f.chainId)!;
  const inUse = chain.provider.inUse();
  return {
    chainId: f.chainId,
    name: f.name,
    currency: f.currency,
    confirmations: chain.confirmations,
    headBlock: f.head?.number ?? null,
    headAgeSeconds: headAgeSeconds(f, now),
    blockSeconds: f.blockSeconds,
    baseFeePerGas: f.head?.baseFeePerGas?.toString() ?? null,
    explorer: f.explorer,
    rpc: chain.provider.endpoints.map((e) => ({
      url: e.label,
      inUse: e === inUse,
      healthy: !e.resting(now) && e.failures === 0,
      failuresInARow: e.failures,
      answered: e.answered,
      failed: e.failed,
      throttled: e.throttled,
      latencyMs: e.latencyMs === undefined ? null : Math.round(e.latencyMs),
    })),
  };
}

/**
 * The service's wallets with their last balance reading, what they spent in the last day (the relayer: the gas its
 * mined transactions used; the settlement wallet: its settlement transactions, at LOW_BALANCE.gas each), both priced
 * at the fee of that reading, their nonce counter and work in flight.
 */
async function walletViews(
  services: Services,
  facts: ChainFacts[],
): Promise<{ view: Overview["wallets"][number]; signal: Signal }[]> {
  const readings: WalletBalance[] = (await services.walletBalances?.current(15_000, 500)) ?? [];
  const [settlingHere, settlements] = await Promise.all([
    services.paymentSearch.settlementsInFlight(),
    recently(services, "settlements-day", SLOW_TTL_MS, () =>
      services.paymentSearch.settlementTransactionsSince(SPEND_HOURS),
    ),
  ]);
  return Promise.all(
    readings.map(async (w) => {
      const perGas =
        w.lowBelowWei === undefined ? undefined : w.lowBelowWei / (LOW_BALANCE.transactions * LOW_BALANCE.gas);
      const gas =
        w.role === "relayer"
          ? BigInt(
              (
                await recently(services, `gas-day-${w.chainId}-${w.address}`, SLOW_TTL_MS, () =>
                  services.batchSearch.gasUsedSince(w.chainId, w.address, SPEND_HOURS),
                )
              ).gas,
            )
          : BigInt(settlements) * LOW_BALANCE.gas;
      const spentPerDayWei = perGas === undefined ? null : gas * perGas;
      const currency = facts.find((f) => f.chainId === w.chainId)?.currency ?? "ETH";
      const perTransaction = w.lowBelowWei === undefined ? undefined : w.lowBelowWei / LOW_BALANCE.transactions;
      const signal = walletSignal({ ...w, currency, balanceWei: w.wei ?? null, spentPerDayWei, low: w.low ?? null });
      return {
        signal,
        view: {
          role: w.role,
          chainId: w.chainId,
          address: w.address,
          currency,
          balanceWei: w.wei?.toString() ?? null,
          balance: w.wei === undefined ? null : ether(w.wei),
          spentPerDayWei: spentPerDayWei?.toString() ?? null,
          transactionsLeft: w.wei === undefined || !perTransaction ? null : Number(w.wei / perTransaction),
          low: w.low ?? null,
          state: signal.state,
          nextNonce: (await services.walletNonces.next(w.chainId, w.address)) ?? null,
          inFlight:
            w.role === "relayer"
              ? await services.batchSearch.inFlight(w.chainId, w.address)
              : w.role === "refund"
                ? (await services.paymentRefunds.totals()).counts.sending
                : settlingHere,
          readAt: w.readAt === undefined ? null : new Date(w.readAt).toISOString(),
        },
      };
    }),
  );
}
