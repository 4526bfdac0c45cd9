import type { ChainRegistry } from "../chains/registry";
import { errorFacts, type Logger } from "../logger";
import { openKeySource } from "../signers/key-sources";
import type { ServiceSigner } from "../signers/signer";
import type { Stores } from "../store/stores";
import type { Relayer } from "./relayer";

/** How often every instance reads the operator's relayer key records (an added key is taken up, a drain followed, within it). */
export const KEY_REFRESH_MS = 2_000;

export type KeyRotationServices = Pick<Stores, "relayerKeys"> & { chains: ChainRegistry; relayer: Relayer };

/**
 * Relayer keys rotated without a stop: every KEY_REFRESH_MS (and right after an operator command on this instance) the
 * operator's records (store/relayer-keys.ts) are applied to the relayer's keys. An added key is opened from its
 * source, its nonces synced and its delegation made, and only then takes new batches; a draining key takes no new
 * batch but finishes its own; a removed key is let go (the `remove` command refuses while it still has work).
 */
export class RelayerKeyRotation {
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;
  /** Keys being set up (chain:address), each by one promise at a time. */
  private readonly settingUp = new Map<string, Promise<void>>();
  /** The last error reported per key that could not be opened (reported again only when it changes). */
  private readonly reported = new Map<string, string>();
  constructor(
    private readonly services: KeyRotationServices,
    private readonly log: Logger,
    /** Called when a key starts taking batches or is let go (the wallet balances follow the keys). */
    private readonly onKeysChanged: () => void = () => undefined,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.refresh(), KEY_REFRESH_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.refreshing;
  }

  /** Applies the records now (one refresh at a time); keys added are set up in the background. */
  refresh(): Promise<void> {
    this.refreshing ??= this.apply()
      .catch((error: unknown) => this.log.warn({ err: errorFacts(error) }, "relayer keys not refreshed; trying again"))
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Resolves once every key being set up is set up (or failed, to be tried again). */
  async settled(): Promise<void> {
    await Promise.all(this.settingUp.values());
  }

  private async apply(): Promise<void> {
    const records = await this.services.relayerKeys.list();
    const { starting, removed } = this.services.relayer.keys.apply(records, openKeySource, (record, error) => {
      const id = `${record.chainId}:${record.address}`;
      if (this.reported.get(id) === error.message) return;
      this.reported.set(id, error.message);
      this.log.error(
        { chainId: record.chainId, relayer: record.address, err: error.message },
        "a relayer key the operator added cannot be opened on this instance; tried again every refresh",
      );
    });
    for (const { chainId, address } of removed)
      this.log.info({ chainId, relayer: address }, "relayer key removed: no longer signs");
    if (removed.length) this.onKeysChanged();
    for (const { chainId, signer } of starting) this.setUp(chainId, signer);
  }

  private setUp(chainId: number, signer: ServiceSigner): void {
    const id = `${chainId}:${signer.address}`;
    if (this.settingUp.has(id)) return;
    const chain = this.services.chains.find(chainId);
    if (!chain) return;
    const done = this.services.relayer
      .setUpKey(chain, signer)
      .then(() => {
        this.services.relayer.keys.activate(chainId, signer.address);
        this.log.info(
          { chainId, relayer: signer.address, kind: signer.kind },
          "relayer key added: takes new operations",
        );
        this.onKeysChanged();
      })
      .catch((error: unknown) =>
        this.log.warn(
          { chainId, relayer: signer.address, err: errorFacts(error) },
          "relayer key not set up yet; tried again at the next refresh",
        ),
      )
      .finally(() => this.settingUp.delete(id));
    this.settingUp.set(id, done);
  }
}
