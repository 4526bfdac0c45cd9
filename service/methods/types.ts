import type { ZodType } from "zod";
import type { ExecutionMode } from "../wire/fields";
import type { AccessRule } from "../auth/access-rules";
import type { EventType } from "../events/types";
import type { ConfirmedFacts } from "../engine/runner-ports";
import type { PlannedCall } from "../model/batch";
import type { Queryable } from "../store/db";
import type { Batch } from "../model/batch";
import type { Environment } from "../config";
import type { DomainContext, DomainServices, RelayerAddresses } from "../domains/context";

/** What methods may use of the service (the composition root's object is handed to them). */
export type MethodServices = DomainServices;
export type { RelayerAddresses };

/** What a method's plan sees: the services, the resolved chain and the caller's key. */
export interface MethodContext extends DomainContext<MethodServices> {
  /** Who will sign: the body's signer, or the service's relayer in service-relayed mode. */
  signer?: string;
  executionMode?: ExecutionMode;
}

/** A method's decision: who signs, which calls in which order, what to tell the client, what to remember. */
export interface MethodPlan {
  signer: string;
  calls: PlannedCall[];
  info: Record<string, unknown>;
  /** Facts the onConfirmed hook needs later; persisted with the batch as JSON (bigints as decimal strings). */
  record?: Record<string, unknown>;
}

/** A batch whose transactions all confirmed, handed to its method's hook. */
export interface ConfirmedBatch extends ConfirmedFacts {
  services: MethodServices;
}

export interface MethodDefinition<B = any> {
  name: string;
  /** Other method values clients send for it. */
  aliases?: string[];
  area: "tokenization" | "sto" | "agents" | "rams" | "faucet";
  summary: string;
  /** The full request body (common fields included); unknown keys are ignored. */
  body: ZodType<B>;
  /** The wallet that must sign (and be whitelisted). */
  signerOf(body: B): string;
  /**
   * Who may call it and who pays (service/auth/access-rules.ts): ACCESS.keyMethod for the key surface,
   * ACCESS.agenticWrite for methods a key or an x402 payment may pay for (the price of its `access.price` tier).
   */
  access: AccessRule;
  /**
   * A send under an API key spends one credit of this method's own balance. Each plan grants its credits
   * (PLAN_CREDITS) of every metered method, a method metered later included: a key's balance is its plan's credits
   * until first spent or topped up (store/credits.ts), so a new metered method needs no migration. Absent: free for a key.
   */
  metered?: boolean;
  /**
   * The catalogue's events (events/types.ts) its confirmation announces, besides the transaction, batch and payment
   * events of every batch; test/service/method-registry.test.ts holds the catalogue's other types to these.
   */
  events?: readonly EventType[];
  /** The service's relayer may sign and send it (service-relayed). */
  relayable?: boolean;
  /**
   * Relayed, any of the relayer's keys may send it: no role, allowance or ownership follows the sender, so new batches
   * are spread over all its keys (RELAYER_EXTRA_PRIVATE_KEYS). Absent: the relayer's own key sends it.
   */
  anyRelayerKey?: boolean;
  /** Path of its x402 facade (e.g. /x402/token/create; docs/reference/methods.md lists them). */
  facadePath?: string;
  /** The facade's execution mode when the body names none (default: service-relayed). */
  facadeMode?: ExecutionMode;
  /** "data": the facade answers `{ data: <prepare response> }` (RAMS facades); absent: unwrapped. */
  facadeEnvelope?: "data";
  /** Chains it runs on (absent: every served chain). */
  chains?: number[];
  /** The chain used when the body names none (absent: chainId is required). */
  defaultChainId?: (environment: Environment) => number;
  /** Internal methods back other endpoints (the faucet) and are not exposed under /prepare-transactions. */
  internal?: boolean;
  /** Reads the chain and the database, never writes; returns the calls to make. */
  plan(ctx: MethodContext, body: B): Promise<MethodPlan>;
  /**
   * Writes what the receipts prove, inside the transaction that marks the batch successful. Must be idempotent.
   * May return the batch's outcome (e.g. the address of a token it created), shown by status and send.
   */
  onConfirmed?(tx: Queryable, batch: ConfirmedBatch): Promise<Record<string, unknown> | void>;
  /**
   * Re-checks at send, before the service broadcasts or relays the batch and before anything is paid or spent, what
   * the prepare checked and the chain may have changed since (RAMS execute: compliance, mandate state, caps, expiry).
   * Throws the client's 4xx; the batch stays prepared and may be sent again. Not run for client-broadcast reports.
   */
  checkAtSend?(services: MethodServices, batch: Batch): Promise<void>;
  /**
   * Service-relayed only: refusals that depend on who pays (e.g. only the wallet an agent is held for may pay for
   * changes to it). Runs at send once the payment header names its payer, before the payment is verified or held.
   */
  checkRelayedPayer?(services: MethodServices, batch: Batch, payer: string): Promise<void>;
  /**
   * Service-relayed only: the calldata of transaction `index` once the payer is known (e.g. a transfer of the payer's
   * own tokens), computed right before the relayer signs it; undefined keeps the prepared calldata.
   */
  bindRelayed?(services: MethodServices, batch: Batch, index: number, payer: string): Promise<string | undefined>;
}

export function defineMethod<B>(method: MethodDefinition<B>): MethodDefinition<B> {
  return method;
}
