-- Relayer keys an operator added, drained or removed on a running service (`npm run admin -- relayer-keys …`): every
-- instance reads this table every few seconds and follows it without a restart. A key of the configuration
-- (RELAYER_PRIVATE_KEY, RELAYER_EXTRA_PRIVATE_KEYS, RELAYER_PKCS11_*) has a row only once its state changed. No secret
-- is kept here: an added key is named by where it is (a keystore file and its password file, or a PKCS#11 token and
-- its PIN file), which every instance reads for itself.
CREATE TABLE relayer_keys (
  -- 0: every chain the relayer serves
  chain_id bigint NOT NULL,
  -- lower-case
  address text NOT NULL,
  state text NOT NULL CHECK (state IN ('active', 'draining', 'removed')),
  -- null for a key of the configuration
  source jsonb,
  added_at timestamptz NOT NULL DEFAULT now(),
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, address)
);
