-- Signatures are never stored: the wallet proof keeps the signed message and the address recovered from it (verified
-- when it was submitted), not the signature.
ALTER TABLE kyc_investors DROP COLUMN proof_signature;
