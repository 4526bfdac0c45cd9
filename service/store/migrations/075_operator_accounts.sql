-- Operator accounts (issue 50): sessions end after a while without use, and a KYC decision names who made it.

-- When the session was last used (its cookie came with a request): a session unused for CONSOLE_SESSION_IDLE_TIMEOUT
-- ends, whatever its expires_at (auth/console-session.ts).
ALTER TABLE operator_sessions ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();

-- Who decided an investor's review: the operator's e-mail (console) or "admin tool". reviewed_by keeps the provider's
-- name ("operator"), which is what tenants and investors see; decided_by is shown to operators only.
ALTER TABLE kyc_investors ADD COLUMN decided_by text;
