-- Nothing usable at rest (issue 23).

-- x402 payments: the payer's signed EIP-3009 authorization is held only while the payment waits to be settled, and
-- only sealed (AES-256-GCM, service/crypto/sealed.ts, key outside the database) in payload_sealed. The clear payload
-- column stays for rows written before this migration that are still reserved or settling: the service seals them at
-- start (Payments.sealClearSecrets). Ended payments keep accounting fields only.
ALTER TABLE payments ADD COLUMN payload_sealed text;
ALTER TABLE payments ALTER COLUMN payload DROP NOT NULL;
UPDATE payments SET payload = NULL, payload_sealed = NULL, settle_tx_raw = NULL WHERE status IN ('settled', 'released');
ALTER TABLE payments ADD CONSTRAINT payments_ended_hold_nothing_usable
  CHECK (status IN ('reserved', 'settling') OR (payload IS NULL AND payload_sealed IS NULL AND settle_tx_raw IS NULL));

-- KYC links are found by the SHA-256 of their token (32 random bytes), never by the token itself. token_sealed keeps
-- the token sealed while the link is open, so get-investor-info can show the live link; it is cleared once the link
-- is used or replaced. Links issued before this migration have no sealed token: they still open, but their kycUrl
-- reads null. failed_attempts counts refused submissions through the link; locked_at is set when there were too many.
ALTER TABLE kyc_links ADD COLUMN token_hash text;
UPDATE kyc_links SET token_hash = encode(sha256(convert_to(token, 'UTF8')), 'hex');
ALTER TABLE kyc_links DROP COLUMN token;
ALTER TABLE kyc_links ADD PRIMARY KEY (token_hash);
ALTER TABLE kyc_links ADD COLUMN token_sealed text;
ALTER TABLE kyc_links ADD COLUMN failed_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE kyc_links ADD COLUMN locked_at timestamptz;

-- A rejected batch's signed transactions that were never mined could still be broadcast by whoever reads them (their
-- nonce may be free): a batch that ended rejected keeps only the bytes of transactions the chain already holds.
UPDATE batch_transactions SET signed_raw = NULL
  WHERE signed_raw IS NOT NULL AND status NOT IN ('confirmed', 'reverted')
    AND tx_id IN (SELECT tx_id FROM batches WHERE status = 'rejected');

-- Rewrite the three tables, so the values cleared above (and the dropped token column) do not linger in their files
-- as dead row versions. (Older WAL segments and backups taken before this migration may still hold them.)
CLUSTER payments USING payments_pkey;
CLUSTER kyc_links USING kyc_links_pkey;
CLUSTER batch_transactions USING batch_transactions_pkey;
