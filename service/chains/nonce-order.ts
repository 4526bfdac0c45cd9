/** How long a broadcast waits for this process's lower nonces before it goes anyway (a stuck predecessor must not hold the wallet). */
const MAX_WAIT_MS = 30_000;
/**
 * At most this many broadcasts leave together: with the receipt each asks for, they fill one JSON-RPC batch of the
 * chain's provider (chains/rpc.ts RPC_BATCH_MAX, 20), so they reach the node in one request, in nonce order.
 */
export const WAVE_MAX = 10;
/** After the node refused a nonce ahead of the account's, the lane sends one at a time this long. */
const REFUSED_PAUSE_MS = 30_000;

/**
 * Broadcasts of one service wallet in nonce order, within this process. A nonce is registered right after it is taken
 * (under the wallet's row lock); its broadcast then waits until every lower nonce this process registered was
 * broadcast or dropped. Those ready meanwhile leave together, in nonce order, as one request to the node (a wave of at
 * most WAVE_MAX), and the next wave leaves once the node answered this one: a burst of a thousand relayed operations
 * costs its wallet a hundred round trips to the node, not a thousand one after the other. Waves go only to a node that
 * queues a nonce ahead of the account's next one (every public network's; see nonce-queueing.ts): it takes a wave
 * whatever order it runs its calls in. To a node that refuses one ("nonce too high": Hardhat while it mines each
 * transaction at once, which also runs a batch's calls in any order) the lane sends one at a time, and for
 * REFUSED_PAUSE_MS after any refusal; the refused one is retried (chains/broadcast.ts). Across processes sharing a
 * PostgreSQL server the wallet's lock keeps the order: all nonces registered here were taken in one turn of it.
 */
export class NonceOrder {
  private readonly lanes = new Map<string, Lane>();

  /**
   * Registers `nonce` of `wallet` on `chainId`; the ticket must end with `broadcast` or `drop`. `queuesAhead`: whether
   * the chain's node takes a nonce ahead of the account's now (default: it does).
   */
  register(chainId: number, wallet: string, nonce: number, queuesAhead: () => boolean = () => true): NonceTicket {
    const laneKey = `${chainId}:${wallet.toLowerCase()}`;
    let lane = this.lanes.get(laneKey);
    // A lane stays once made (one per service wallet and chain): it remembers a refusal for REFUSED_PAUSE_MS.
    if (!lane) this.lanes.set(laneKey, (lane = new Lane()));
    lane.queuesAhead = queuesAhead;
    return lane.register(nonce);
  }
}

export interface NonceTicket {
  readonly nonce: number;
  /**
   * Runs `send` once every lower nonce of its wallet registered here was broadcast or dropped (with those ready at
   * the same time, in one wave); then frees this nonce. `send` calls `refusedAhead` when the node refused its nonce as
   * ahead of the account's (it does not queue them).
   */
  broadcast<T>(send: (refusedAhead: () => void) => Promise<T>): Promise<T>;
  /** The nonce will not be broadcast from here (its transaction rolled back, or someone else sends the bytes). */
  drop(): void;
}

/** A registered nonce whose broadcast was asked for: it leaves with the next wave it heads or joins. */
interface Ready {
  go(): Promise<unknown>;
  timer: NodeJS.Timeout;
}

/** One wallet's nonces on one chain: registered, waiting for their turn, and the wave in flight. */
class Lane {
  /** Registered nonces not broadcast or dropped yet; undefined until the nonce's broadcast is asked for. */
  private readonly open = new Map<number, Ready | undefined>();
  private inFlight = false;
  /** Whether the node takes a nonce ahead of the account's (waves), as the lane's last registration said. */
  queuesAhead: () => boolean = () => true;
  /** Until then one broadcast at a time: the node refused a nonce ahead of the account's. */
  private refusedUntil = 0;

  register(nonce: number): NonceTicket {
    this.open.set(nonce, undefined);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const ready = this.open.get(nonce);
      if (ready) clearTimeout(ready.timer);
      this.open.delete(nonce);
      this.next();
    };
    return {
      nonce,
      broadcast: <T>(send: (refusedAhead: () => void) => Promise<T>) =>
        new Promise<T>((resolve, reject) => {
          if (ended) return reject(new Error(`nonce ${nonce} was broadcast or dropped already`));
          const refusedAhead = () => (this.refusedUntil = Date.now() + REFUSED_PAUSE_MS);
          const go = () => {
            ended = true;
            // Called now (not a tick later): a wave's sends must reach the provider in nonce order, in this turn.
            const sent = new Promise<T>((settle) => settle(send(refusedAhead)));
            sent.then(resolve, reject);
            return sent;
          };
          // A predecessor never ready (stuck) does not hold this one longer than MAX_WAIT_MS: it goes alone.
          const timer = setTimeout(() => {
            if (this.open.get(nonce) !== ready) return;
            this.open.delete(nonce);
            void go().catch(() => undefined);
            this.next();
          }, MAX_WAIT_MS);
          const ready: Ready = { go, timer };
          this.open.set(nonce, ready);
          this.next();
        }),
      drop: end,
    };
  }

  /** Sends the next wave: the lowest open nonces, as long as each is ready, unless a wave is in flight. */
  private next(): void {
    if (this.inFlight || !this.open.size) return;
    const size = Date.now() < this.refusedUntil || !this.queuesAhead() ? 1 : WAVE_MAX;
    const wave: [number, Ready][] = [];
    for (const [nonce, ready] of [...this.open].sort(([a], [b]) => a - b)) {
      if (!ready) break;
      wave.push([nonce, ready]);
      if (wave.length >= size) break;
    }
    if (!wave.length) return;
    this.inFlight = true;
    // Started in nonce order within this turn of the event loop: the provider sends them as one batch, in this order.
    const sent = wave.map(([nonce, ready]) => {
      clearTimeout(ready.timer);
      this.open.delete(nonce);
      return ready.go();
    });
    void Promise.allSettled(sent).then(() => {
      this.inFlight = false;
      this.next();
    });
  }
}

const perService = new WeakMap<object, NonceOrder>();

/** The one NonceOrder of a service instance, shared by every wallet it signs with (relayer, x402 settlement). */
export function nonceOrderOf(services: object): NonceOrder {
  let order = perService.get(services);
  if (!order) perService.set(services, (order = new NonceOrder()));
  return order;
}
