-- Which API keys may act on a tokenizer e-mail (no key outside this list): the key that first tokenized with it, and
-- keys an operator bound to it. A newTokenization by any other key with that e-mail is refused. Lower-case e-mails.
CREATE TABLE tokenizer_email_keys (
  email text NOT NULL,
  api_key_id text NOT NULL REFERENCES api_keys (id),
  bound_by text NOT NULL CHECK (bound_by IN ('tokenization', 'operator')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (email, api_key_id)
);
INSERT INTO tokenizer_email_keys (email, api_key_id, bound_by)
  SELECT DISTINCT ON (lower(tokenizer_email)) lower(tokenizer_email), api_key_id, 'tokenization'
  FROM tokens WHERE api_key_id IS NOT NULL ORDER BY lower(tokenizer_email), created_at;

-- A client-broadcast hash that never appeared on the chain: the batch ends, and the client may report the right hash.
ALTER TABLE batch_transactions DROP CONSTRAINT batch_transactions_status_check;
ALTER TABLE batch_transactions ADD CONSTRAINT batch_transactions_status_check
  CHECK (status IN ('prepared', 'signed', 'broadcast', 'confirmed', 'reverted', 'refused', 'unseen'));
