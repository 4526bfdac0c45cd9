import { errorFacts, type Logger } from "../logger";
import type { Config } from "../config";
import type { Stores } from "../store/stores";

/** The longest pause between two sweeps. */
const SWEEP_MAX_MS = 60 * 60_000;

/**
 * Prepared batches nobody sent are deleted once they expire (PREPARED_BATCH_TTL_HOURS; their send is refused as
 * expired from then on: engine/send.ts), so free prepares (relayed, or under a key) cannot pile up for ever. Sweeps at
 * start and then every half TTL, at most hourly; several instances sweeping at once delete each batch once.
 */
export class PreparedExpiry {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly services: Pick<Stores, "batches"> & { config: Pick<Config, "PREPARED_BATCH_TTL_HOURS"> },
    private readonly log: Logger,
  ) {}

  start(): void {
    const every = Math.min(
      SWEEP_MAX_MS,
      Math.max(1_000, (this.services.config.PREPARED_BATCH_TTL_HOURS * 3_600_000) / 2),
    );
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One sweep; answers how many batches went. */
  async sweep(): Promise<number> {
    try {
      const pruned = await this.services.batches.pruneExpiredPrepared(this.services.config.PREPARED_BATCH_TTL_HOURS);
      if (pruned) this.log.info({ pruned }, "expired prepared batches deleted");
      return pruned;
    } catch (error) {
      this.log.warn({ err: errorFacts(error) }, "expired prepared batches not deleted; trying again at the next sweep");
      return 0;
    }
  }
}
