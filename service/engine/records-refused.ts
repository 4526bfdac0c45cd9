/**
 * Thrown by a method's onConfirmed hook when what a batch's confirmed transactions did cannot be recorded for it: it
 * lost a race (its token symbol, its tokenizer e-mail, was recorded for another batch confirmed first). The runner
 * then ends the batch `rejected` with `reason` and nothing of it recorded: its transactions stay confirmed (they are
 * on chain), its credit comes back, and its events tell only of its own transactions and its end.
 */
export class RecordsRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "RecordsRefused";
  }
}
