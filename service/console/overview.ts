import { formatEther } from "ethers";
import type { Chain } from "../chains/registry";
import { LOW_BALANCE, type WalletBalance } from "../wallet-balances";
import type { Overview } from "../wire/console";
import type { Services } from "../usecases/services";

/** A chain's head is asked for at most this long: a chain that does not answer shows as such, it never holds the page. */
const HEAD_TIMEOUT_MS = 3_000;

/**
 * The console's overview, from the service's own state: each chain's head and RPC URLs (the resilient provider's own
 * record of each), the relayer and settlement wallets (the background balance readings, the nonce counter, the
 * transactions in flight), what waits in the queues, and the last hour's and day's activity from the batches and
 * payments tables.
 */
export async function overview(services: Services): Promise<Overview> {
  const [chains, wallets, depth, payments, webhooks, lastHour, lastDay] = await Promise.all([
    Promise.all(services.chains.list().map(chainView)),
    walletViews(services),
    services.batchSearch.queueDepth(),
    services.paymentSearch.counts(),
    services.webhooks.backlog(),
    services.batchSearch.activity(60, 1),
    services.batchSearch.activity(48, 30),
  ]);
  return {
    generatedAt: new Date().toISOString(),
    chains,
    wallets,
    queue: {
      prepared: depth.prepared,
      sending: depth.sending,
      paymentsReserved: payments.reserved,
      paymentsSettling: payments.settling,
      webhooksOwed: webhooks.pending + webhooks.delivering,
      oldestUndeliveredSeconds: Math.round(webhooks.oldestUndeliveredSeconds),
    },
    lastHour,
    lastDay,
  };
}

async function chainView(chain: Chain): Promise<Overview["chains"][number]> {
  const head = await withTimeout(chain.provider.getBlock("latest"), HEAD_TIMEOUT_MS).catch(() => null);
  const now = Date.now();
  const inUse = chain.provider.inUse();
  return {
    chainId: chain.chainId,
    name: chain.network.name,
    confirmations: chain.confirmations,
    headBlock: head?.number ?? null,
    headAgeSeconds: head ? Math.max(0, Math.round(now / 1000 - head.timestamp)) : null,
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

/** The service's wallets with their last balance reading, nonce counter and work in flight. */
async function walletViews(services: Services): Promise<Overview["wallets"]> {
  const readings: WalletBalance[] = (await services.walletBalances?.current(15_000, 500)) ?? [];
  const settlingHere = await services.paymentSearch.settlementsInFlight();
  return Promise.all(
    readings.map(async (w) => {
      const perTransaction = w.lowBelowWei === undefined ? undefined : w.lowBelowWei / LOW_BALANCE.transactions;
      return {
        role: w.role,
        chainId: w.chainId,
        address: w.address,
        balanceWei: w.wei?.toString() ?? null,
        balance: w.wei === undefined ? null : formatEther(w.wei),
        transactionsLeft: w.wei === undefined || !perTransaction ? null : Number(w.wei / perTransaction),
        low: w.low ?? null,
        nextNonce: (await services.walletNonces.next(w.chainId, w.address)) ?? null,
        inFlight:
          w.role === "relayer"
            ? await services.batchSearch.inFlight(w.chainId, w.address)
            : w.role === "refund"
              ? (await services.paymentRefunds.totals()).counts.sending
              : settlingHere,
        readAt: w.readAt === undefined ? null : new Date(w.readAt).toISOString(),
      };
    }),
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
