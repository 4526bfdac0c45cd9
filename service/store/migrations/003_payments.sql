-- What a confirmed batch produced (e.g. the address of a token it created), set by its method's hook.
ALTER TABLE batches ADD COLUMN outcome jsonb;

-- Next nonce per service-held wallet (relayer, x402 settlement) and chain. Rows are locked while a nonce is taken,
-- so several service instances on one PostgreSQL never reuse or skip a nonce.
CREATE TABLE wallet_nonces (
  chain_id integer NOT NULL,
  address text NOT NULL,
  next_nonce bigint NOT NULL,
  PRIMARY KEY (chain_id, address)
);

-- x402 payments: none → reserved (verified, operation runs) → settling → settled, or → released (nothing charged).
CREATE TABLE payments (
  id uuid PRIMARY KEY,
  subject text NOT NULL UNIQUE,
  route text NOT NULL,
  tx_id text,
  network text NOT NULL,
  asset text NOT NULL,
  pay_to text NOT NULL,
  amount numeric(78, 0) NOT NULL,
  payer text NOT NULL,
  authorization_nonce text NOT NULL,
  valid_before bigint NOT NULL,
  payload jsonb NOT NULL,
  requirements jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('reserved', 'settling', 'settled', 'released')),
  settle_tx_raw text,
  settle_tx_hash text,
  settlement jsonb,
  release_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (payer, authorization_nonce)
);
CREATE INDEX payments_tx_idx ON payments (tx_id);
CREATE INDEX payments_status_idx ON payments (status);

-- Governance-token faucet claims (sandbox), keyed by the client's Idempotency-Key.
CREATE TABLE faucet_claims (
  id uuid PRIMARY KEY,
  idempotency_key text NOT NULL UNIQUE,
  recipient text NOT NULL,
  tx_id text NOT NULL,
  api_key_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Price overrides per environment and operation, in USDC base units; defaults live in service/payments/pricing.ts.
CREATE TABLE prices (
  environment text NOT NULL,
  operation text NOT NULL,
  amount numeric(78, 0) NOT NULL,
  PRIMARY KEY (environment, operation)
);

CREATE TABLE agent_tokens (
  token_address text PRIMARY KEY,
  chain_id integer NOT NULL,
  agent_wallet text NOT NULL,
  creator text NOT NULL,
  name text NOT NULL,
  symbol text NOT NULL,
  decimals integer NOT NULL,
  premint numeric(78, 0) NOT NULL,
  owner_email text,
  tx_id text NOT NULL,
  tx_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
