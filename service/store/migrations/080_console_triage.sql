-- The operator console's triage (issue 50): how many blocks a transaction has waited, which delivery a replay is of,
-- and the indexes its filtered lists page through at tens of thousands of rows.

-- The chain's head when the transaction was first broadcast: its pending age in blocks is the head now minus this.
-- NULL for rows written before this migration and for hashes a client reported (their age is estimated from time).
ALTER TABLE batch_transactions ADD COLUMN broadcast_block bigint;

-- The delivery an operator's or owner's replay delivered again (a replay of a replay names the replay).
ALTER TABLE webhook_deliveries ADD COLUMN replay_of bigint;
CREATE INDEX webhook_deliveries_replay_of ON webhook_deliveries (replay_of) WHERE replay_of IS NOT NULL;

-- Lists filtered by chain, method or state, newest first, a page at a time.
CREATE INDEX batches_chain_created_idx ON batches (chain_id, created_at, tx_id);
CREATE INDEX batches_method_created_idx ON batches (method, created_at, tx_id);
CREATE INDEX batches_status_created_idx ON batches (status, created_at, tx_id);
CREATE INDEX payments_status_created_idx ON payments (status, created_at, id);
CREATE INDEX payments_payer_created_idx ON payments (payer, created_at, id);
CREATE INDEX operator_audit_action_idx ON operator_audit (action, id);
-- A search by address: the signer, or any transaction from or to it.
CREATE INDEX batches_signer_idx ON batches (lower(signer));
CREATE INDEX batch_transactions_from_idx ON batch_transactions (lower(unsigned->>'from'));
CREATE INDEX batch_transactions_to_idx ON batch_transactions (lower(unsigned->>'to'));
-- The overview's last hour: batches ended and payments settled or released lately.
CREATE INDEX batches_completed_idx ON batches (completed_at) WHERE status IN ('success', 'rejected');
CREATE INDEX payments_updated_idx ON payments (updated_at) WHERE status IN ('settled', 'released');
-- What the relayer spent in the last day (the overview's wallets).
CREATE INDEX batches_relayed_completed_idx ON batches (chain_id, completed_at) WHERE execution_mode = 'service-relayed';
