-- Signers are whitelisted per API key (issue 41): a key prepares only for the signers the operator whitelisted for it,
-- so no tenant can prepare (and then claim, by reporting its hash first) a transaction of another tenant's signer. A
-- row without a key (api_key_id NULL) whitelists the signer for every key and for payers without a key: the
-- operator's explicit `signers add <address> --all-keys`.
ALTER TABLE signers DROP CONSTRAINT signers_pkey;
ALTER TABLE signers ADD COLUMN api_key_id text REFERENCES api_keys (id) ON DELETE CASCADE;
CREATE UNIQUE INDEX signers_address_key_idx ON signers (address, COALESCE(api_key_id, ''));
CREATE INDEX signers_key_idx ON signers (api_key_id);
-- What older versions whitelisted for the whole deployment becomes the whitelist of the keys that prepared with it;
-- a signer no key has used stays whitelisted for every key until the operator narrows it (`signers list` shows it).
INSERT INTO signers (address, api_key_id, added_at)
SELECT DISTINCT s.address, b.api_key_id, s.added_at
FROM signers s JOIN batches b ON lower(b.signer) = s.address AND b.api_key_id IS NOT NULL
WHERE s.api_key_id IS NULL;
DELETE FROM signers s WHERE s.api_key_id IS NULL AND EXISTS (SELECT 1 FROM signers k WHERE k.address = s.address AND k.api_key_id IS NOT NULL);
