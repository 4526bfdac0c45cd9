-- The actions a token control may record are the store's list (TOKEN_CONTROL_ACTIONS in store/token-controls.ts,
-- which the event catalogue and GET /get-token-controls also read) and the store refuses any other. The CHECK that
-- wrote the same list out a second time (035, widened by 073) is dropped, so a new control's action needs no migration.
-- The last migration that changes this list.
ALTER TABLE token_controls DROP CONSTRAINT token_controls_action_check;
