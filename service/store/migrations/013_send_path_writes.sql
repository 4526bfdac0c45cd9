-- Fewer writes on the path every send takes (prepared → sending → success).
--
-- 1. Batches are looked up by status only to find those in flight ('sending'). An index on every status made each move
--    rewrite an index entry, and the embedded database (no autovacuum, so no statistics) planned `tx_id = $1 AND status
--    = 'prepared'` through it, reading every prepared batch. A partial index keeps the in-flight batches alone.
DROP INDEX batches_status_idx;
CREATE INDEX batches_in_flight ON batches (sent_at) WHERE status = 'sending';

-- 2. An event's position. On the embedded database one connection runs every transaction, one after the other, so an
--    event numbered when it is inserted is numbered in commit order too: the service sets tak.single_writer on that
--    connection (store/db.ts) and the column's default numbers it then; the commit-time trigger no longer takes the
--    lock, the number and an UPDATE that rewrote every index of the row. On a PostgreSQL server the setting is absent:
--    the default is NULL and the trigger numbers the event at commit under the lock, as before (migration 010).
ALTER TABLE events ALTER COLUMN position SET DEFAULT (
  CASE WHEN current_setting('tak.single_writer', true) = 'on' THEN nextval('event_positions') END
);

CREATE OR REPLACE FUNCTION events_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE assigned bigint
; BEGIN
  assigned := NEW.position
  ; IF assigned IS NULL THEN
    PERFORM pg_advisory_xact_lock(80042008)
    ; assigned := nextval('event_positions')
    ; UPDATE events SET position = assigned WHERE id = NEW.id
  ; END IF
  ; INSERT INTO webhook_deliveries (endpoint_id, event_id, position, ordering_key)
    SELECT w.id, NEW.id, assigned, NEW.ordering_key FROM webhook_endpoints w
    WHERE w.disabled_at IS NULL AND (
      (NEW.endpoint_id IS NOT NULL AND w.id = NEW.endpoint_id)
      OR (NEW.endpoint_id IS NULL
        AND ((NEW.api_key_id IS NOT NULL AND w.api_key_id = NEW.api_key_id)
          OR (NEW.api_key_id IS NULL AND NEW.tx_id IS NOT NULL AND w.api_key_id IS NULL AND w.tx_id = NEW.tx_id))
        AND (cardinality(w.event_types) = 0 OR NEW.type = ANY (w.event_types))))
  ; PERFORM pg_notify('tak_events', '')
  ; RETURN NULL
; END $$;
