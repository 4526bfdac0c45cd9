import type { TransactionReceipt } from "ethers";
import type { ZodType } from "zod";
import type { ExecutionMode } from "../http/fields";
import type { PriceTier } from "../payments/pricing";
import type { Chain } from "../chains/registry";
import type { PlannedCall } from "../engine/types";
import type { Services } from "../services";
import type { ApiKeyRecord } from "../store/api-keys";
import type { Queryable } from "../store/db";

/** What a method's plan sees: the services, the resolved chain and the caller's key. */
export interface MethodContext {
  services: Services;
  chain: Chain;
  apiKey?: ApiKeyRecord;
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
export interface ConfirmedBatch {
  services: Services;
  txId: string;
  chain: Chain;
  method: string;
  signer: string;
  apiKeyId: string | null;
  record: Record<string, unknown>;
  receipts: TransactionReceipt[];
}

export interface MethodDefinition<B = any> {
  name: string;
  /** Other method values clients send for it. */
  aliases?: string[];
  area: "tokenization" | "sto" | "agents" | "faucet";
  summary: string;
  /** The full request body (common fields included); unknown keys are ignored. */
  body: ZodType<B>;
  /** The wallet that must sign (and be whitelisted). */
  signerOf(body: B): string;
  /** Spends one credit of its own balance per send. */
  metered: boolean;
  /** Agentic methods may be paid per call through x402 (absent: API key only). */
  x402?: { tier: PriceTier };
  /** The service's relayer may sign and send it (service-relayed). */
  relayable?: boolean;
  /** Path of its x402 facade, which always prepares in service-relayed mode (e.g. /x402/token/create). */
  facadePath?: string;
  /** Chains it runs on (absent: every served chain). */
  chains?: number[];
  /** Internal methods back other endpoints (the faucet) and are not exposed under /prepare-transactions. */
  internal?: boolean;
  /** Reads the chain and the database, never writes; returns the calls to make. */
  plan(ctx: MethodContext, body: B): Promise<MethodPlan>;
  /**
   * Writes what the receipts prove, inside the transaction that marks the batch successful. Must be idempotent.
   * May return the batch's outcome (e.g. the address of a token it created), shown by status and send.
   */
  onConfirmed?(tx: Queryable, batch: ConfirmedBatch): Promise<Record<string, unknown> | void>;
}

export function defineMethod<B>(method: MethodDefinition<B>): MethodDefinition<B> {
  return method;
}
