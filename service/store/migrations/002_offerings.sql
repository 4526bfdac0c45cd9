-- Offerings (STOs) as their escrow events show them; amounts in base units of the token or the payment token.
CREATE TABLE offerings (
  id uuid PRIMARY KEY,
  token_id uuid NOT NULL REFERENCES tokens (id),
  onchain_id integer NOT NULL,
  name text NOT NULL,
  accepted_coin text NOT NULL,
  token_amount numeric(78, 0) NOT NULL,
  price numeric(78, 0) NOT NULL,
  soft_cap numeric(78, 0) NOT NULL,
  hard_cap numeric(78, 0) NOT NULL,
  min_investment numeric(78, 0) NOT NULL,
  max_investment numeric(78, 0) NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz NOT NULL,
  created_tx_hash text NOT NULL,
  closed boolean NOT NULL DEFAULT false,
  succeeded boolean,
  raised_at_close numeric(78, 0),
  closed_tx_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (token_id, onchain_id)
);

-- One row per Invested event; status follows the investor's claim (invest → claimTokens or refund).
CREATE TABLE investments (
  id uuid PRIMARY KEY,
  offering_id uuid NOT NULL REFERENCES offerings (id),
  investor_address text NOT NULL,
  investor_email text,
  amount numeric(78, 0) NOT NULL,
  refunded numeric(78, 0) NOT NULL,
  tokens numeric(78, 0) NOT NULL,
  tx_hash text NOT NULL,
  log_index integer NOT NULL,
  block_number bigint NOT NULL,
  status text NOT NULL DEFAULT 'invest',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tx_hash, log_index)
);
CREATE INDEX investments_offering_idx ON investments (offering_id, investor_address);
