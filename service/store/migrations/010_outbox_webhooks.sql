-- Events (service/events/): the outbox, webhook endpoints and their deliveries.
--
-- The outbox: one row per change worth telling, inserted in the same database transaction as the change. `id` is the
-- row's internal key; `position` is its public id (SSE `id:`, webhook-id, Last-Event-ID), assigned when the inserting
-- transaction commits, under a lock, so positions grow in commit order: a reader that has seen position P never later
-- finds a smaller one committed (a bigserial taken at insert would not: a slower transaction may commit a smaller id).
CREATE TABLE events (
  id bigserial PRIMARY KEY,
  position bigint UNIQUE,
  type text NOT NULL,
  api_key_id text,
  tx_id text,
  chain_id integer,
  hash text,
  -- Deliveries with the same ordering key go out in position order (the txId; kyc:<investor> for onboarding).
  ordering_key text,
  -- A test event addressed to one endpoint: delivered to it alone, never on the stream.
  endpoint_id text,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_key_position ON events (api_key_id, position);
CREATE INDEX events_tx_position ON events (tx_id, position);
CREATE INDEX events_created_at ON events (created_at);
-- One transaction.broadcast per transaction hash, however many writers see it go out.
CREATE UNIQUE INDEX events_one_broadcast ON events (tx_id, hash) WHERE type = 'transaction.broadcast';
CREATE SEQUENCE event_positions;

-- The highest position pruned by the retention sweep: a stream resuming below it may have missed events (410).
CREATE TABLE event_retention (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  pruned_through bigint NOT NULL DEFAULT 0
);
INSERT INTO event_retention DEFAULT VALUES;

-- A receiver of events: an API key's (filtered by event type), or, for a batch prepared without a key, one txId's.
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  api_key_id text,
  tx_id text,
  url text NOT NULL,
  description text,
  event_types text[] NOT NULL DEFAULT '{}',
  -- The signing secret (whsec_…), sealed with the data encryption key (crypto/sealed.ts); never stored in clear.
  secret_sealed text NOT NULL,
  -- After a rotation the previous secret still signs until previous_secret_expires_at.
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  disabled_at timestamptz,
  disabled_reason text,
  -- Since when every attempt failed (NULL after a success); a day of that disables the endpoint.
  failing_since timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((api_key_id IS NULL) <> (tx_id IS NULL))
);
CREATE INDEX webhook_endpoints_key ON webhook_endpoints (api_key_id) WHERE api_key_id IS NOT NULL;
CREATE INDEX webhook_endpoints_tx ON webhook_endpoints (tx_id) WHERE tx_id IS NOT NULL;

-- One event owed to one endpoint. pending (due at next_attempt_at) → delivering (claimed by an instance until
-- lease_until) → delivered, or back to pending with the next backoff, or failed once the schedule is spent.
CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  position bigint NOT NULL,
  ordering_key text,
  -- A redelivery asked for by the endpoint's owner: outside the ordering of its key.
  manual boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivering', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz,
  claimed_by text,
  last_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'delivering');
-- Claims walk the deliveries owed oldest event first and stop at their limit.
CREATE INDEX webhook_deliveries_owed ON webhook_deliveries (position) WHERE status IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, ordering_key, position) WHERE status IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- Every attempt and what the receiver answered (status and the start of its body), for the deliveries listing.
CREATE TABLE webhook_attempts (
  id bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  status_code integer,
  response_body text,
  error text,
  -- The service instance (process) that made the attempt.
  instance text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempt);

-- At commit (a deferred constraint trigger runs in the committing transaction, after everything else): the event takes
-- the next position under a transaction-scoped lock held until the commit is done, gets one delivery per endpoint that
-- wants it, and listeners are woken (NOTIFY is delivered at commit). The semicolons open lines because migrations are
-- split at semicolons that end a line (store/migrate.ts).
CREATE FUNCTION events_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE assigned bigint
; BEGIN
  PERFORM pg_advisory_xact_lock(80042008)
  ; assigned := nextval('event_positions')
  ; UPDATE events SET position = assigned WHERE id = NEW.id
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

CREATE CONSTRAINT TRIGGER events_at_commit AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION events_at_commit();
