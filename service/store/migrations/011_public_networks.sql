-- Public networks: transactions are confirmed on the canonical chain only (their block hash is kept to notice reorgs),
-- a relayed or client-signed transaction may be replaced with higher fees (every hash sent for it is kept, and
-- whichever is mined wins), and a transaction that waits says why.

-- The block the transaction was mined in, as its receipt said (a reorg changes it or takes the receipt away).
ALTER TABLE batch_transactions ADD COLUMN block_hash text;
-- A reorg took the transaction off the chain after it had counted as confirmed; cleared once it is back on chain.
ALTER TABLE batch_transactions ADD COLUMN reorged_at timestamptz;
-- How many reorgs took it off the chain (before or after its confirmations).
ALTER TABLE batch_transactions ADD COLUMN reorgs integer NOT NULL DEFAULT 0;
-- Why a broadcast transaction is not mined yet (e.g. its fee cap is below the base fee) and the fees that would be
-- mined now; NULL when nothing is known to hold it back.
ALTER TABLE batch_transactions ADD COLUMN waiting jsonb;

-- Earlier signed forms of a transaction, replaced by one with the same nonce and higher fees. The current one stays
-- in batch_transactions; when an earlier one is mined instead, the two swap places.
CREATE TABLE batch_transaction_replacements (
  tx_hash text PRIMARY KEY,
  tx_id text NOT NULL,
  index integer NOT NULL,
  signed_raw text,
  max_fee_per_gas numeric(78, 0),
  max_priority_fee_per_gas numeric(78, 0),
  replaced_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (tx_id, index) REFERENCES batch_transactions (tx_id, index)
);
CREATE INDEX batch_transaction_replacements_tx_idx ON batch_transaction_replacements (tx_id, index);

-- An x402 settlement transaction replaced with higher fees keeps its earlier hashes (and bytes) here, as above.
ALTER TABLE payments ADD COLUMN settle_tx_replaced jsonb NOT NULL DEFAULT '[]'::jsonb;
-- The settlement transaction's sender and nonce, so that nonce healing knows which nonces settlements hold.
ALTER TABLE payments ADD COLUMN settle_tx_from text;
ALTER TABLE payments ADD COLUMN settle_tx_nonce bigint;
