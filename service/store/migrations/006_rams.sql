-- ERC-8226 (RAMS) executors set up by the operator (npm run admin -- rams setup-executor): one AgentExecutor per
-- principal and registry. The latest one recorded for a principal is its default executor (ramsExecute,
-- ramsSetExecutorAction and /rams/executor-action without executorAddress).
CREATE TABLE rams_executors (
  chain_id integer NOT NULL,
  executor text NOT NULL,
  registry text NOT NULL,
  principal text NOT NULL,
  owner text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, executor)
);
CREATE INDEX rams_executors_principal_idx ON rams_executors (chain_id, principal, created_at);
