-- Issuer controls of security tokens (freezes, forced transfers, recoveries, pauses, roles): what each confirmed
-- control did on chain, one row per event, and the credits of their methods for keys created before this migration.
-- Numbered 035 to leave room below for migrations written meanwhile by other changes.
CREATE TABLE token_controls (
  id uuid PRIMARY KEY,
  token_id uuid NOT NULL REFERENCES tokens (id),
  action text NOT NULL CHECK (action IN ('frozen', 'address_frozen', 'address_unfrozen', 'forced_transfer', 'recovery', 'paused', 'unpaused', 'role_granted', 'role_revoked')),
  account text,
  counterparty text,
  amount numeric(78, 0),
  role text,
  agent text,
  tx_hash text NOT NULL,
  log_index integer NOT NULL,
  block_number bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tx_hash, log_index)
);
CREATE INDEX token_controls_token_idx ON token_controls (token_id, block_number, log_index);

INSERT INTO credit_balances (key_id, method, balance)
SELECT k.id, m.method, CASE k.plan WHEN 'Starter' THEN 10 WHEN 'Professional' THEN 100 ELSE 10000 END
FROM api_keys k
CROSS JOIN (VALUES ('freezeTokens'), ('unfreezeTokens'), ('freezeAddress'), ('forcedTransfer'), ('recoverWallet'), ('pauseToken'),
                   ('unpauseToken'), ('grantTokenRole'), ('revokeTokenRole'), ('resolveOfferingClaim')) AS m (method)
ON CONFLICT (key_id, method) DO NOTHING;
