-- An x402 payment settled inside the relayed operation's own transaction (the relayer's EIP-7702 code,
-- contracts/payments/PaidRelayDelegate.sol, runs transferWithAuthorization and the operation atomically). Such a
-- payment is 'settling' from the moment that transaction is signed (written with its bytes, before any broadcast);
-- it is settled once that transaction is confirmed and released if it reverted or never reached the chain. It never
-- gets a settlement transaction of its own, so settle_tx_raw stays NULL and settle_tx_hash names the operation's
-- transaction (as first signed; the settlement records the hash that was mined).
ALTER TABLE payments ADD COLUMN settle_in_operation boolean NOT NULL DEFAULT false;
