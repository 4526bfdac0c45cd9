-- The operator console at /console (service/console/): operator accounts and their roles, one-time sign-in links,
-- sessions and the audit log of every change an operator makes. Nothing here can be used if read: passwords are kept
-- as scrypt hashes, link and session tokens as their SHA-256.

-- An operator: created and removed with `npm run admin -- operators …`. viewer reads; reviewer also decides KYC
-- reviews; admin also changes keys, credits, signers, prices, webhooks and relayed transactions.
CREATE TABLE operators (
  id text PRIMARY KEY,
  -- lower-case
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('viewer', 'reviewer', 'admin')),
  -- scrypt$N$r$p$salt$hash (service/auth/operator-passwords.ts); NULL: signs in by one-time link only
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE UNIQUE INDEX operators_email ON operators (email) WHERE removed_at IS NULL;

-- A one-time sign-in link the admin tool printed: usable once, until it expires.
CREATE TABLE operator_sign_in_links (
  token_hash text PRIMARY KEY,
  operator_id text NOT NULL REFERENCES operators (id),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operator_sign_in_links_operator ON operator_sign_in_links (operator_id);

-- A signed-in browser: the cookie's token, by its hash. Ends when it expires, when the operator signs out, or when the
-- operator is removed or their sessions revoked.
CREATE TABLE operator_sessions (
  token_hash text PRIMARY KEY,
  operator_id text NOT NULL REFERENCES operators (id),
  via text NOT NULL CHECK (via IN ('password', 'link')),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id);

-- Every change an operator made (in the console or with the admin tool): who, what, on what, before and after.
CREATE TABLE operator_audit (
  id bigserial PRIMARY KEY,
  -- the operator's e-mail, or "admin tool" for a command run on the server
  actor text NOT NULL,
  action text NOT NULL,
  target text,
  before jsonb,
  after jsonb,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operator_audit_at ON operator_audit (at, id);

-- The console lists batches and payments newest first, a page at a time, at tens of thousands of rows.
CREATE INDEX batches_created_idx ON batches (created_at, tx_id);
CREATE INDEX payments_created_idx ON payments (created_at, id);
