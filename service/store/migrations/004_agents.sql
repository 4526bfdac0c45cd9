-- ERC-8004 agents registered through this service. `uuid` is the client's handle (info.agentUuid); the row is written
-- when the registration is confirmed, from the Registered event.
CREATE TABLE agents (
  uuid uuid PRIMARY KEY,
  chain_id integer NOT NULL,
  registry text NOT NULL,
  agent_id numeric(78, 0) NOT NULL,
  api_key_id text REFERENCES api_keys (id),
  owner_email text,
  -- Who controls the agent: its on-chain owner, or, while the service's relayer holds the NFT for it (a relayed
  -- registration), the wallet that paid for the registration.
  owner_wallet text NOT NULL,
  -- The relayer holding the NFT in custody for owner_wallet; null once the NFT is with its owner.
  custodian text,
  agent_wallet text,
  agent_uri text NOT NULL,
  registration jsonb NOT NULL,
  -- Metadata keys set through this service, to read them back (the registry cannot list keys).
  metadata_keys jsonb NOT NULL DEFAULT '[]',
  prepare_tx_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (chain_id, registry, agent_id)
);
CREATE INDEX agents_owner_idx ON agents (chain_id, owner_wallet);
CREATE INDEX agents_key_idx ON agents (api_key_id);

-- What was done to an agent or an agent token through this service (GET /get-agent-transactions), written when the
-- batch is confirmed. `details` holds only parsed, public facts.
CREATE TABLE agent_activity (
  tx_id text PRIMARY KEY,
  chain_id integer NOT NULL,
  agent_uuid uuid,
  token_address text,
  category text NOT NULL CHECK (category IN ('erc8004', 'agentToken', 'rams')),
  method text NOT NULL,
  tx_hashes jsonb NOT NULL,
  details jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_activity_agent_idx ON agent_activity (agent_uuid, created_at);
CREATE INDEX agent_activity_token_idx ON agent_activity (token_address, created_at);

-- Feedback the relayer gave on a payer's behalf: only that payer may have it revoked through the relayer.
CREATE TABLE relayed_feedback (
  chain_id integer NOT NULL,
  agent_id numeric(78, 0) NOT NULL,
  client text NOT NULL,
  feedback_index bigint NOT NULL,
  payer text NOT NULL,
  tx_id text NOT NULL,
  PRIMARY KEY (chain_id, agent_id, client, feedback_index)
);
