-- Refunds (issue 50): a payment settled for an operation that then failed for a reason of the service's (the relayer
-- without gas money, a transaction the service signed refused by the node, the operator's cancellation, a gas limit the
-- service chose run out) is owed back to its payer, in its asset on its chain. One row per payment (its primary key):
-- recorded once, in the database transaction that ends the batch rejected.
--
--   owed     recorded; the refund wallet (X402_REFUND_PRIVATE_KEY) sends it when one is configured, else the operator
--            pays it and marks it in the console
--   sending  the refund wallet's transaction is signed and stored (sealed) before it is broadcast, in the same database
--            transaction that takes its nonce and claims the row (FOR UPDATE SKIP LOCKED: one instance signs it); from
--            then on any instance may broadcast the same bytes again and await them: they can be mined only once
--   refunded its transaction is mined and confirmed with the transfer to the payer (or the operator's transaction is)
CREATE TABLE payment_refunds (
  payment_id uuid PRIMARY KEY REFERENCES payments (id),
  tx_id text NOT NULL,
  network text NOT NULL,
  asset text NOT NULL,
  payer text NOT NULL,
  amount numeric(78, 0) NOT NULL,
  -- why the operation failed (the batch's error)
  reason text NOT NULL,
  status text NOT NULL DEFAULT 'owed' CHECK (status IN ('owed', 'sending', 'refunded')),
  attempts integer NOT NULL DEFAULT 0,
  -- an owed refund whose last attempt failed (its transaction reverted: the wallet lacks the asset) waits until then
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  -- the refund's transaction: the one mined once refunded; earlier forms replaced with higher fees (same nonce) in
  -- tx_replaced (hashes only)
  tx_hash text UNIQUE,
  tx_raw_sealed text,
  tx_from text,
  tx_nonce bigint,
  tx_replaced jsonb NOT NULL DEFAULT '[]'::jsonb,
  block_number bigint,
  -- "refund wallet", or the e-mail of the operator who paid it and marked it
  refunded_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  refunded_at timestamptz,
  CONSTRAINT payment_refunds_sent_has_tx CHECK (status = 'owed' OR tx_hash IS NOT NULL),
  -- a refunded row keeps no signed bytes (nothing usable at rest once it is done)
  CONSTRAINT payment_refunds_done_holds_nothing CHECK (status <> 'refunded' OR tx_raw_sealed IS NULL)
);
CREATE INDEX payment_refunds_open ON payment_refunds (next_attempt_at) WHERE status <> 'refunded';
CREATE INDEX payment_refunds_tx ON payment_refunds (tx_id);
CREATE INDEX payment_refunds_created ON payment_refunds (created_at, payment_id);
