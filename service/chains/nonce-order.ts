/** How long a broadcast waits for this process's lower nonces before it goes anyway (a stuck predecessor must not hold the wallet). */
const MAX_WAIT_MS = 30_000;

/**
 * Broadcasts of one service wallet in nonce order, within this process. A nonce is registered right after it is taken
 * (under the wallet's row lock, so registrations come in nonce order); its broadcast then waits until every lower nonce
 * this process registered was broadcast or dropped. Nodes that do not queue a nonce ahead of the account's next one
 * (Hardhat automine answers "nonce too high") then never see one out of order from this process. Across processes
 * sharing a PostgreSQL server the wallet's lock keeps the order: all nonces registered here
 * were taken in one turn of it. The broadcast's retry remains for what neither covers.
 */
export class NonceOrder {
  private readonly lanes = new Map<string, Map<number, Promise<void>>>();

  /** Registers `nonce` of `wallet` on `chainId`; the ticket must end with `broadcast` or `drop`. */
  register(chainId: number, wallet: string, nonce: number): NonceTicket {
    const laneKey = `${chainId}:${wallet.toLowerCase()}`;
    let lane = this.lanes.get(laneKey);
    if (!lane) this.lanes.set(laneKey, (lane = new Map()));
    const before = [...lane].filter(([n]) => n < nonce).map(([, done]) => done);
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    lane.set(nonce, done);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      if (lane.get(nonce) === done) lane.delete(nonce);
      if (lane.size === 0 && this.lanes.get(laneKey) === lane) this.lanes.delete(laneKey);
      finish();
    };
    return {
      nonce,
      broadcast: async <T>(send: () => Promise<T>): Promise<T> => {
        try {
          await waitAtMost(Promise.all(before), MAX_WAIT_MS);
          return await send();
        } finally {
          end();
        }
      },
      drop: end,
    };
  }
}

export interface NonceTicket {
  readonly nonce: number;
  /** Runs `send` once every lower nonce registered before this one was broadcast or dropped; then frees this nonce. */
  broadcast<T>(send: () => Promise<T>): Promise<T>;
  /** The nonce will not be broadcast from here (its transaction rolled back, or someone else sends the bytes). */
  drop(): void;
}

async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

const perService = new WeakMap<object, NonceOrder>();

/** The one NonceOrder of a service instance, shared by every wallet it signs with (relayer, x402 settlement). */
export function nonceOrderOf(services: object): NonceOrder {
  let order = perService.get(services);
  if (!order) perService.set(services, (order = new NonceOrder()));
  return order;
}
