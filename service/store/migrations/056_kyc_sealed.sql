-- KYC details sealed at rest (issue 41): an investor's e-mail, names, country, verified wallet, signed message and the
-- review's reason are held sealed with the data key (service/crypto/sealed.ts), never in clear; the e-mail is looked
-- up by its keyed hash (HMAC under a key derived from the data key), which reveals nothing without that key. Rows an
-- older version wrote in clear are sealed at the service's next start (KycStore.sealClearDetails), after which the
-- clear columns stay empty: the CHECK refuses a write that would put anything in them again.
ALTER TABLE kyc_investors ADD COLUMN email_hash text;
ALTER TABLE kyc_investors ADD COLUMN email_sealed text;
ALTER TABLE kyc_investors ADD COLUMN details_sealed text;
ALTER TABLE kyc_investors ADD COLUMN reason_sealed text;
ALTER TABLE kyc_investors ALTER COLUMN email DROP NOT NULL;
CREATE UNIQUE INDEX kyc_investors_key_email_hash_idx ON kyc_investors (api_key_id, email_hash);
CREATE INDEX kyc_investors_email_hash_idx ON kyc_investors (email_hash);
ALTER TABLE kyc_investors ADD CONSTRAINT kyc_investors_nothing_in_clear
  CHECK (email IS NULL AND first_name IS NULL AND last_name IS NULL AND country IS NULL AND wallet_address IS NULL
         AND proof_message IS NULL AND review_reason IS NULL) NOT VALID;
-- The history's personal details (a wallet, a reason) sealed too.
ALTER TABLE kyc_events ADD COLUMN detail_sealed text;
-- KYC events carry identifiers only (the investor record's id, its status and dates): what older versions copied into
-- them (e-mail, names, country, wallet, reason) is dropped.
UPDATE events SET data = jsonb_build_object(
    'investorId', data->'investorId', 'status', data->'kyc'->'status', 'needKyc', data->'kyc'->'needKyc',
    'submittedAt', data->'kyc'->'submittedAt', 'reviewedAt', data->'kyc'->'reviewedAt', 'reviewedBy', data->'kyc'->'reviewedBy')
  WHERE type IN ('kyc.submitted', 'kyc.approved', 'kyc.rejected') AND data ? 'kyc';
-- No dead row version keeps what was dropped.
CLUSTER events USING events_pkey;
