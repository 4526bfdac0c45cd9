-- Facts about this deployment's database (e.g. the pepper API keys are hashed with, which binds keys to it).
CREATE TABLE deployment_meta (
  key text PRIMARY KEY,
  value text NOT NULL
);

-- Genesis hash per chain as last seen: a changed genesis means a local chain was restarted empty.
CREATE TABLE chain_instances (
  chain_id integer PRIMARY KEY,
  genesis_hash text NOT NULL,
  seen_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  key_hash text NOT NULL,
  email text NOT NULL,
  plan text NOT NULL CHECK (plan IN ('Starter', 'Professional', 'Enterprise')),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE TABLE credit_balances (
  key_id text NOT NULL REFERENCES api_keys (id),
  method text NOT NULL,
  balance integer NOT NULL CHECK (balance >= 0),
  PRIMARY KEY (key_id, method)
);

-- One row per charged batch, so a batch is never charged twice.
CREATE TABLE credit_charges (
  tx_id text PRIMARY KEY,
  key_id text NOT NULL REFERENCES api_keys (id),
  method text NOT NULL,
  charged_at timestamptz NOT NULL DEFAULT now(),
  refunded_at timestamptz
);

-- Wallets the operator allows as signerAddress on prepare (lower-case).
CREATE TABLE signers (
  address text PRIMARY KEY,
  added_at timestamptz NOT NULL DEFAULT now()
);

-- A prepared batch of transactions (txId) and where it stands.
CREATE TABLE batches (
  tx_id text PRIMARY KEY,
  chain_id integer NOT NULL,
  method text NOT NULL,
  execution_mode text NOT NULL,
  signer text NOT NULL,
  api_key_id text REFERENCES api_keys (id),
  status text NOT NULL CHECK (status IN ('prepared', 'sending', 'success', 'rejected')),
  body jsonb NOT NULL,
  plan jsonb NOT NULL,
  info jsonb NOT NULL,
  failed_index integer,
  error text,
  records_written boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  completed_at timestamptz
);
CREATE INDEX batches_status_idx ON batches (status);

CREATE TABLE batch_transactions (
  tx_id text NOT NULL REFERENCES batches (tx_id),
  index integer NOT NULL,
  unsigned jsonb NOT NULL,
  signed_raw text,
  tx_hash text UNIQUE,
  status text NOT NULL CHECK (status IN ('prepared', 'signed', 'broadcast', 'confirmed', 'reverted', 'refused')),
  block_number bigint,
  gas_used numeric(78, 0),
  error text,
  broadcast_at timestamptz,
  confirmed_at timestamptz,
  PRIMARY KEY (tx_id, index)
);

CREATE TABLE tokens (
  id uuid PRIMARY KEY,
  chain_id integer NOT NULL,
  symbol text NOT NULL UNIQUE,
  name text NOT NULL,
  token_name text NOT NULL,
  token_type text NOT NULL,
  tokenizer_email text NOT NULL,
  tokenizer_address text NOT NULL,
  company_wallet_address text NOT NULL,
  api_key_id text REFERENCES api_keys (id),
  token_address text NOT NULL,
  escrow_address text NOT NULL,
  payment_token_symbol text NOT NULL,
  payment_token_address text NOT NULL,
  payment_token_decimals integer NOT NULL,
  decimals integer NOT NULL,
  supply_cap numeric(78, 0) NOT NULL,
  initial_supply numeric(78, 0) NOT NULL,
  url text NOT NULL DEFAULT '',
  logotype_ref text,
  subscription_agreement_ref text,
  legal_docs_ref text,
  created_tx_id text NOT NULL,
  created_tx_hash text NOT NULL,
  created_block bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tokens_api_key_idx ON tokens (api_key_id);
CREATE INDEX tokens_email_idx ON tokens (tokenizer_email);

-- Wallets known for a token: whitelist state from WhitelistUpdated events, holders from Transfer events,
-- e-mails and names from the request that produced them.
CREATE TABLE investors (
  token_id uuid NOT NULL REFERENCES tokens (id),
  address text NOT NULL,
  email text,
  first_name text,
  last_name text,
  investor_type text,
  whitelisted boolean NOT NULL DEFAULT false,
  whitelist_tx_hash text,
  received_tokens boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (token_id, address)
);
CREATE INDEX investors_email_idx ON investors (token_id, email);

CREATE TABLE dividend_distributions (
  id uuid PRIMARY KEY,
  token_id uuid NOT NULL REFERENCES tokens (id),
  amount numeric(78, 0) NOT NULL,
  distributor text NOT NULL,
  tx_hash text NOT NULL UNIQUE,
  block_number bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE dividend_claims (
  id uuid PRIMARY KEY,
  token_id uuid NOT NULL REFERENCES tokens (id),
  holder text NOT NULL,
  amount numeric(78, 0) NOT NULL,
  tx_hash text NOT NULL UNIQUE,
  block_number bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Token documents, content-addressed by SHA-256.
CREATE TABLE documents (
  sha256 text PRIMARY KEY,
  media_type text NOT NULL,
  size integer NOT NULL,
  content bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- rate-limiter-flexible's Postgres store (shared by every service instance on one database).
CREATE TABLE rate_limits (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);
