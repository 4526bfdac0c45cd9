-- Issue 48: security tokens whose recovery is requested then executed after a delay, whose tokenizer is handed over in
-- two steps, and which are upgraded after a delay to a published implementation. The controls their events prove, and
-- the credits of their methods for keys created before this migration.
ALTER TABLE token_controls DROP CONSTRAINT token_controls_action_check;
ALTER TABLE token_controls ADD CONSTRAINT token_controls_action_check CHECK (action IN ('frozen', 'address_frozen',
  'address_unfrozen', 'forced_transfer', 'recovery', 'paused', 'unpaused', 'role_granted', 'role_revoked',
  'recovery_requested', 'recovery_cancelled', 'tokenizer_transfer_started', 'tokenizer_changed', 'upgrade_scheduled',
  'upgrade_cancelled', 'upgraded'));

INSERT INTO credit_balances (key_id, method, balance)
SELECT k.id, m.method, CASE k.plan WHEN 'Starter' THEN 10 WHEN 'Professional' THEN 100 ELSE 10000 END
FROM api_keys k
CROSS JOIN (VALUES ('cancelWalletRecovery'), ('executeWalletRecovery'), ('transferTokenizer'), ('acceptTokenizer'),
                   ('cancelTokenizerTransfer'), ('scheduleTokenUpgrade'), ('cancelTokenUpgrade'), ('executeTokenUpgrade'),
                   ('withdrawProceeds')) AS m (method)
ON CONFLICT (key_id, method) DO NOTHING;
