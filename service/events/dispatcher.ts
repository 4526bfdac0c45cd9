import { randomUUID } from "node:crypto";
import { errorFacts, type Logger } from "../logger";
import type { AttemptOutcome, ClaimedDelivery, DeliveryStatus } from "../store/webhook-deliveries";
import { postWebhook } from "./delivery";
import { pruneEvents } from "../store/outbox";
import { destinationPolicy } from "./policy";
import { signedHeaders } from "../crypto/webhook-signing";
import type { Stores } from "../store/stores";
import type { Config } from "../config";
import type { EventNotifier } from "./notifier";

/** What the webhook dispatcher uses. */
export type DispatcherServices = Pick<Stores, "db" | "webhooks" | "webhookDeliveries"> & {
  config: Config;
  eventNotifier: EventNotifier;
};

/** Without a wake-up (NOTIFY), due deliveries are looked for at least this often. */
const POLL_MS = 1_000;
/** The outbox's retention sweep runs this often (and at start). */
const PRUNE_EVERY_MS = 60 * 60_000;

export type DeliveryOutcomeLabel = "delivered" | "retry" | "failed" | "lost_lease";

/**
 * Delivers webhooks from the outbox, at least once, in order per txId and endpoint. Each instance claims due
 * deliveries (store/webhook-deliveries.ts claim: FOR UPDATE SKIP LOCKED and a lease longer than an attempt can take),
 * sends them signed, and records the answer. A commit anywhere wakes it (LISTEN tak_events); it also polls, so a lost
 * wake-up only delays. Start it after the EventNotifier.
 */
export class WebhookDispatcher {
  readonly instance = randomUUID();
  private inFlight = new Set<Promise<void>>();
  private running = false;
  private wakeUp?: () => void;
  private woken = false;
  private loop?: Promise<void>;
  private unsubscribe?: () => void;
  private pruner?: NodeJS.Timeout;
  /** Attempts of this process by outcome (metrics). */
  readonly outcomes: Record<DeliveryOutcomeLabel, number> = { delivered: 0, retry: 0, failed: 0, lost_lease: 0 };

  constructor(
    private readonly services: DispatcherServices,
    private readonly log: Logger,
  ) {}

  private get leaseMs(): number {
    return this.services.config.WEBHOOK_TIMEOUT_MS + 10_000;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const { db, webhookDeliveries } = this.services;
    if (db.kind === "pglite") {
      const released = await webhookDeliveries.releaseAllClaims();
      if (released) this.log.info({ released }, "deliveries a stopped process had claimed are due again");
    }
    this.unsubscribe = this.services.eventNotifier.subscribe(() => this.wake());
    this.loop = this.run();
    void this.prune();
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  /** Something was committed: look for due deliveries now. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops claiming; deliveries in flight finish (each within its timeout). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.pruner);
    this.wake();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    this.unsubscribe?.();
  }

  private async run(): Promise<void> {
    const { config, webhookDeliveries } = this.services;
    while (this.running) {
      // A wake-up comes from inside a commit: whatever that commit's caller does next (answer its request) runs first.
      // On the embedded database a claim runs on this thread and would hold that answer back.
      await new Promise((resolve) => setImmediate(resolve));
      this.woken = false;
      let claimed: ClaimedDelivery[] = [];
      const room = config.WEBHOOK_CONCURRENCY - this.inFlight.size;
      if (room > 0 && !(await this.mayHaveDeliveries())) {
        if (this.woken || !this.running) continue;
        await this.sleep(POLL_MS);
        continue;
      }
      if (room > 0) {
        try {
          claimed = await webhookDeliveries.claim(this.instance, room, this.leaseMs);
        } catch (error) {
          if (this.running) this.log.error({ err: errorFacts(error) }, "could not claim webhook deliveries");
        }
      }
      for (const delivery of claimed) {
        const sending: Promise<void> = this.deliver(delivery).finally(() => {
          this.inFlight.delete(sending);
          this.wake(); // room again; and the next event of its txId may be due now
        });
        this.inFlight.add(sending);
      }
      if (claimed.length === room && room > 0) continue; // maybe more due
      if (this.woken || !this.running) continue;
      await this.sleep(room > 0 ? await this.untilNextDue() : POLL_MS);
    }
  }

  /**
   * Whether a delivery may be claimable. On the embedded database this process makes every endpoint change, so while no
   * endpoint is enabled (known for at most POLL_MS, and never across a change made here) the claims, which would run on
   * this thread after every commit that wrote events, are skipped. On the server other instances change endpoints: it
   * always claims.
   */
  private async mayHaveDeliveries(): Promise<boolean> {
    const { db, webhooks, webhookDeliveries } = this.services;
    if (db.kind !== "pglite") return true;
    const known = this.endpointsKnown;
    if (known && known.changes === webhooks.endpointChanges && Date.now() < known.until) return known.any;
    const changes = webhooks.endpointChanges;
    const any = await webhookDeliveries.anyEnabledEndpoint().catch(() => true);
    this.endpointsKnown = { any, changes, until: Date.now() + POLL_MS };
    return any;
  }

  private endpointsKnown?: { any: boolean; changes: number; until: number };

  /**
   * How long to sleep when nothing was claimable: until the next delivery falls due (at most POLL_MS). One already due
   * but not claimed waits behind an earlier delivery of its txId, or another instance holds it: the end of that attempt
   * wakes every instance (recordAttempt notifies), so it is not polled for in a loop.
   */
  private async untilNextDue(): Promise<number> {
    try {
      const next = await this.services.webhookDeliveries.nextDue();
      const wait = next ? next.getTime() - Date.now() : POLL_MS;
      return wait > 0 ? Math.min(POLL_MS, wait) : POLL_MS;
    } catch {
      return POLL_MS;
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    const { config, webhooks, webhookDeliveries } = this.services;
    let outcome: AttemptOutcome;
    try {
      const body = JSON.stringify(d.event);
      const headers = signedHeaders(d.event.id, new Date(), body, webhooks.secretsOf(d));
      outcome = await postWebhook(new URL(d.url), headers, body, {
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        responseLimitBytes: config.WEBHOOK_RESPONSE_LIMIT_BYTES,
        policy: destinationPolicy(config),
      });
    } catch (error) {
      outcome = {
        ok: false,
        startedAt: new Date(),
        durationMs: 0,
        statusCode: null,
        response: null,
        error: `not sent: ${(error as Error).message}`.slice(0, 500),
      };
    }
    let status: DeliveryStatus | undefined;
    try {
      status = await webhookDeliveries.recordAttempt(
        this.instance,
        d,
        outcome,
        config.WEBHOOK_RETRY_SCHEDULE,
        config.WEBHOOK_DISABLE_AFTER,
      );
    } catch (error) {
      // Not recorded: the lease runs out and the delivery is attempted again (at least once).
      this.log.error({ deliveryId: d.id, err: errorFacts(error) }, "could not record a webhook attempt");
      return;
    }
    const label: DeliveryOutcomeLabel =
      status === undefined
        ? "lost_lease"
        : status === "delivered"
          ? "delivered"
          : status === "failed"
            ? "failed"
            : "retry";
    this.outcomes[label]++;
    if (label !== "delivered") {
      this.log.info(
        {
          deliveryId: d.id,
          endpointId: d.endpointId,
          eventId: d.event.id,
          attempt: d.attempt,
          status: outcome.statusCode,
          error: outcome.error,
          outcome: label,
        },
        "webhook not delivered",
      );
    }
  }

  private async prune(): Promise<void> {
    try {
      const pruned = await pruneEvents(this.services.db, this.services.config.EVENT_RETENTION_DAYS * 86_400_000);
      if (pruned) this.log.info({ pruned }, "events older than the retention window pruned");
    } catch (error) {
      if (this.running) this.log.warn({ err: errorFacts(error) }, "event retention sweep failed");
    }
  }
}
