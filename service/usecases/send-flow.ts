import { admitSend, chargeSend, type Caller, type SendAccess } from "../auth/gate";
import { EngineError } from "../engine/errors";
import { replacePendingTransactions } from "../engine/replace";
import {
  assertHashesFree,
  assertReportedTransactions,
  loadBatchToSend,
  loadSendableBatch,
  normalizeSendBody,
  reportable,
  sendingState,
  type SendBody,
  type SendRequest,
} from "../engine/send";
import { badRequest, conflict, outOfCredits as outOfCreditsError } from "../errors";
import { paymentHeaderOf } from "../http/x402-headers";
import { findPublicMethod } from "../methods";
import type { MethodDefinition } from "../methods/types";
import type { Batch } from "../model/batch";
import type { Queryable } from "../store/db";
import type { PaymentRecord } from "../store/payments";
import type { RequestFacts } from "../wire/request";
import type { Services } from "./services";

/** What each transaction of a client-signed or reported batch becomes when it is marked sending (none when relayed). */
type SendingState = ReturnType<typeof sendingState>;

/**
 * How a send ended for its caller. `replaced`: a pending client-signed batch's unmined transactions were replaced by
 * the signed ones (higher fees, same nonces). `ended`: the batch's run ended within SEND_WAIT_MS; `sending`: it still
 * runs. `batch` is as the store last answered it; `payment`, the send's payment as settled or stored.
 */
export type SendResult =
  { kind: "replaced"; batch: Batch } | { kind: "ended" | "sending"; batch: Batch; payment?: PaymentRecord };

/**
 * One send of a prepared batch: signed transactions, client-reported hashes, or a paid relayed txId. Its steps, in the
 * order clients see their refusals: the batch loaded (or a pending one's transactions replaced), the body checked
 * against it, the credentials admitted and the payment reserved, the batch marked sending (its payment released when
 * that is refused), then its run started with the batch as markSending returned it, and waited for.
 */
export class SendFlow {
  private readonly request: SendRequest;

  constructor(
    private readonly services: Services,
    private readonly req: RequestFacts,
    private readonly caller: Caller,
    private readonly body: SendBody,
  ) {
    this.request = normalizeSendBody(body);
  }

  async run(): Promise<SendResult> {
    const loaded = await this.load();
    if (!loaded) return { kind: "replaced", batch: await this.replace() };
    const { batch, hashOwners } = loaded;
    const method = findPublicMethod(batch.method);
    const state = await this.checkBody(batch, hashOwners);
    const access = admitSend(this.services, this.caller, batch, method);
    const payment = await this.charge(batch, method, access);
    let sent: Batch;
    try {
      sent = await this.markSending(batch, state, access);
    } catch (error) {
      if (payment) await this.services.x402!.release(payment.id, `send refused: ${(error as Error).message}`);
      throw error;
    }
    const relayed = batch.executionMode === "service-relayed";
    void this.services.runner.run(batch.txId, sent, relayed ? payment : undefined);
    return this.outcome(batch.txId, payment);
  }

  /**
   * The batch and the other batches holding the hashes the body names. A caller without an API key may be asked to pay
   * (x402): a taken hash is refused before that; so is a reported hash (before it is looked for on chain). Undefined:
   * signed transactions for a pending batch, which replace its unmined ones when they are that (see replace).
   */
  private async load(): Promise<{ batch: Batch; hashOwners: Map<string, string> } | undefined> {
    const { request } = this;
    const early = !this.caller.apiKey || request.kind === "reported";
    return loadBatchToSend(this.services, request, early).catch((error: unknown) => {
      if (
        request.kind === "signed" &&
        error instanceof EngineError &&
        error.kind === "conflict" &&
        error.details?.status === "pending"
      )
        return undefined;
      throw error;
    });
  }

  private replace(): Promise<Batch> {
    const request = this.request as Extract<SendRequest, { kind: "signed" }>;
    return replacePendingTransactions(this.services, this.caller.apiKey?.id, request.txId, request.signedTransactions);
  }

  /** The body against the prepared batch: what its transactions become when it is marked sending. */
  private async checkBody(batch: Batch, hashOwners: Map<string, string>): Promise<SendingState> {
    const { request } = this;
    if (batch.executionMode === "service-relayed") {
      if (request.kind !== "relayed")
        throw badRequest(
          "A service-relayed txId is sent as { txId } (optionally with transactions) and an x402 payment, without signed transactions",
          { field: "signedTransactions" },
        );
      for (const [index, t] of (this.body.transactions ?? []).entries()) {
        const twin = batch.transactions[index];
        if (
          !twin ||
          (t.to && t.to.toLowerCase() !== twin.unsigned.to.toLowerCase()) ||
          (t.data && t.data.toLowerCase() !== twin.unsigned.data.toLowerCase())
        )
          throw badRequest(`transactions[${index}] is not the prepared transaction ${index + 1} of this txId`, {
            transactionIndex: index,
          });
      }
      await this.assertRelayerStillHas(batch);
      return [];
    }
    const state = sendingState(batch, request);
    assertHashesFree(batch, state, hashOwners);
    if (request.kind === "reported")
      await assertReportedTransactions(this.services.chains.resolve(batch.chainId), batch, state);
    return state;
  }

  /**
   * A relayed batch is sent by the relayer key it was prepared for: when the service no longer has that key (removed
   * from RELAYER_EXTRA_PRIVATE_KEYS since), the batch is refused before anyone pays; preparing it again picks a key it has.
   * Another instance may have taken up a key the operator just added before this one's next refresh of the operator's
   * records (KEY_REFRESH_MS): a key this instance does not know is looked for there (and set up) before the refusal.
   */
  private async assertRelayerStillHas(batch: Batch): Promise<void> {
    const unknown = () => batch.transactions.find((t) => !this.services.relayer.hasKey(batch.chainId, t.unsigned.from));
    if (unknown()) {
      await this.services.relayerKeyRotation.refresh();
      await this.services.relayerKeyRotation.settled();
    }
    const gone = unknown();
    if (gone)
      throw conflict(
        `txId ${batch.txId} was prepared for the relayer key ${gone.unsigned.from}, which this service no longer sends with: prepare it again`,
        { txId: batch.txId, relayer: gone.unsigned.from },
      );
  }

  /** The method's checks at send time, then the send's payment reserved (x402), if it is paid for. */
  private async charge(
    batch: Batch,
    method: MethodDefinition | undefined,
    access: SendAccess,
  ): Promise<PaymentRecord | undefined> {
    const { services } = this;
    if (this.request.kind !== "reported") await method?.checkAtSend?.(services, batch);
    if (!method) return undefined;
    const checkPayer =
      method.checkRelayedPayer && batch.executionMode === "service-relayed"
        ? (payer: string) => method.checkRelayedPayer!(services, batch, payer)
        : undefined;
    return chargeSend(services, this.req, paymentHeaderOf(this.req), access, batch, method, checkPayer);
  }

  /**
   * One statement marks the batch sending (and spends the key's credit); a reported batch being sent again is first
   * reopened, in one transaction. Answers the batch as that statement left it: what its run starts from.
   */
  private async markSending(batch: Batch, state: SendingState, access: SendAccess): Promise<Batch> {
    const { services, request } = this;
    if (!reportable(batch)) return this.markIn(services.db, batch, state, access);
    return services.db.transaction(async (q) => {
      if (request.kind !== "reported")
        throw badRequest("This txId's reported hash never appeared: report the right hash with { txId, txHash }", {
          field: "txHash",
        });
      if ((await services.batches.lock(q, batch.txId)) !== "rejected") await loadSendableBatch(services, batch.txId, q);
      await services.batches.reopen(q, batch.txId);
      return this.markIn(q, batch, state, access);
    });
  }

  private async markIn(q: Queryable, batch: Batch, state: SendingState, access: SendAccess): Promise<Batch> {
    const { services } = this;
    const credit = access.creditKeyId ? { keyId: access.creditKeyId, method: batch.method } : undefined;
    if (credit) await services.credits.grantPlanned(q, credit.keyId, credit.method);
    const { sent, outOfCredits, hashOwners } = await services.batches.markSending(q, batch.txId, state, credit, batch);
    assertHashesFree(batch, state, hashOwners);
    if (sent) return sent;
    // Only a prepared batch moves: of two concurrent sends of one txId, the second finds it moved and gets the 409.
    await loadSendableBatch(services, batch.txId, q);
    if (outOfCredits) throw outOfCreditsError(batch.method);
    throw conflict(`txId ${batch.txId} changed while it was being sent; look it up with GET /get-transaction-status`, {
      txId: batch.txId,
    });
  }

  /** The batch once its run ended, or after SEND_WAIT_MS while it still runs, with the send's payment as it now stands. */
  private async outcome(txId: string, reserved: PaymentRecord | undefined): Promise<SendResult> {
    const { services } = this;
    const batch =
      (await services.runner.waitFor(txId, services.config.SEND_WAIT_MS)) ?? (await services.batches.get(txId))!;
    const payment = reserved ? await services.x402!.settledOrStored(reserved.id) : undefined;
    return { kind: batch.status === "sending" ? "sending" : "ended", batch, ...(payment ? { payment } : {}) };
  }
}
