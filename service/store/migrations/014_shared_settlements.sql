-- A settlement transaction may pay several payments at once (a batched settlement, payments/facilitator.ts): the
-- payments it carries are found by its hash, to be replaced, promoted and awaited together.
CREATE INDEX payments_settle_tx_idx ON payments (settle_tx_hash) WHERE settle_tx_hash IS NOT NULL;
