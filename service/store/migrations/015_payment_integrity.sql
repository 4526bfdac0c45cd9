-- Payment integrity (paid work is never given away).
--
-- 1. A subject ("send:<txId>", "faucet:<key>", …) is paid once, but a payment that was released charged nothing and
--    must not stop a new payment for the same subject: the uniqueness holds among payments that are not released.
ALTER TABLE payments DROP CONSTRAINT payments_subject_key;
CREATE UNIQUE INDEX payments_open_subject ON payments (subject) WHERE status <> 'released';
CREATE INDEX payments_subject_idx ON payments (subject);

-- 2. One balance, one payment: a new authorisation is accepted only when the payer's balance covers it and the payer's
--    other payments that are not settled yet (reserved or settling), summed per payer and asset under a lock.
CREATE INDEX payments_open_by_payer ON payments (payer, asset) WHERE status IN ('reserved', 'settling');

-- 3. Idempotency-Key on the paid routes (prepare and send): the first answer to a key, kept 24 hours, is given again
--    to a retry with the same request; another request under the same key is refused. `scope` is the API key's id, or
--    the payer's address for a call paid with x402, or 'anonymous'; `request_hash` is a hash of the route and the
--    parsed request (never the request itself). The answer holds what the API answered (nothing secret: unsigned
--    transactions, ids, statuses) and no payment header.
CREATE TABLE idempotent_requests (
  scope text NOT NULL,
  idempotency_key text NOT NULL,
  route text NOT NULL,
  request_hash text NOT NULL,
  status integer,
  body jsonb,
  headers jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  PRIMARY KEY (scope, idempotency_key)
);
CREATE INDEX idempotent_requests_created_idx ON idempotent_requests (created_at);
