-- tak_assert(ok, message): true, or the statement fails (and with it its transaction) with SQLSTATE TK001 and `message`.
-- For a statement the ones issued after it in the same trip must not outlive when what it checks is false:
-- Batches.markSuccess fails when the batch is no longer sending (another runner ended it), so that the method's
-- records and the COMMIT that travel with it (issue 51: one trip for a batch's end) never run for a batch it did not
-- end. The semicolons open lines because migrations are split at semicolons that end a line (store/migrate.ts).
CREATE FUNCTION tak_assert(ok boolean, message text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = 'TK001', MESSAGE = message
  ; END IF
  ; RETURN true
; END $$;
