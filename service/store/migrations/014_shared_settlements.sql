-- A settlement transaction may pay several payments at once (a batched settlement, payments/facilitator.ts): the
-- payments it carries are found by its hash, to be replaced, promoted and awaited together. Payments settled inside
-- their operation's transaction (whose hash they name too) are never looked up so, and stay out of the index: the paid
-- relay's hot path writes no entry for them.
CREATE INDEX payments_settle_tx_idx ON payments (settle_tx_hash) WHERE settle_tx_hash IS NOT NULL AND NOT settle_in_operation;
