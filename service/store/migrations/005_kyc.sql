-- Investor onboarding (KYC). An investor record belongs to the API key that first invited the e-mail; the key's
-- tokenizer scope (itself and every key that tokenized under one of its tokenizer e-mails, service/store/kyc.ts) shares
-- it. Nothing here references chain-scoped rows: a local chain reset keeps onboarding records.
CREATE TABLE kyc_investors (
  id uuid PRIMARY KEY,
  api_key_id text NOT NULL REFERENCES api_keys (id),
  -- lower-case
  email text NOT NULL,
  need_kyc boolean NOT NULL,
  status text NOT NULL CHECK (status IN ('none', 'invited', 'submitted', 'approved', 'rejected')),
  -- What the investor submitted, all of it covered by the wallet's signature (proof_message).
  first_name text,
  last_name text,
  country text,
  -- Recovered from proof_signature over proof_message (EIP-4361), checksummed.
  wallet_address text,
  proof_message text,
  proof_signature text,
  submitted_at timestamptz,
  -- The provider that decided ('operator'), when, and why (rejections).
  reviewed_by text,
  reviewed_at timestamptz,
  review_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (api_key_id, email)
);
CREATE INDEX kyc_investors_email_idx ON kyc_investors (email);

-- Single-use links. The token is the link's capability (kept so get-investor-info can show kycUrl while pending);
-- the nonce is what the wallet signs. A link is live while unused, not voided (a newer link replaced it) and unexpired.
CREATE TABLE kyc_links (
  token text PRIMARY KEY,
  investor_id uuid NOT NULL REFERENCES kyc_investors (id),
  nonce text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  voided_at timestamptz,
  invitation_message_id text,
  invitation_sent_at timestamptz,
  invitation_error text
);
CREATE INDEX kyc_links_investor_idx ON kyc_links (investor_id);

-- What happened to an investor record, oldest first (invitations, submissions, decisions).
CREATE TABLE kyc_events (
  id bigserial PRIMARY KEY,
  investor_id uuid NOT NULL REFERENCES kyc_investors (id),
  event text NOT NULL,
  actor text NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX kyc_events_investor_idx ON kyc_events (investor_id, id);

-- The invitation balance (POST /create-kyc-link) for keys created before this migration: the plan's credits.
INSERT INTO credit_balances (key_id, method, balance)
SELECT id, 'invitation', CASE plan WHEN 'Starter' THEN 10 WHEN 'Professional' THEN 100 ELSE 10000 END FROM api_keys
ON CONFLICT (key_id, method) DO NOTHING;
