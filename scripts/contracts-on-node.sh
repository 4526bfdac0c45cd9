#!/usr/bin/env bash
# `npm run test:contracts:node`: the contract suite against a standalone node over JSON-RPC (`npx hardhat node` +
# `--network localhost`), as people run it: errors, receipts and time travel come back through HTTP there, not from
# the in-process network that `npm test` uses.
set -euo pipefail
cd "$(dirname "$0")/.."
# A free ephemeral port (never 8545); the node is started from its bin (what `npx hardhat node` runs) so that $! is
# the node itself, and the trap stops exactly that process however this script ends.
node_port="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
node_url="http://127.0.0.1:${node_port}"
node_log="$(mktemp "${TMPDIR:-/tmp}/hardhat-node.XXXXXX")"
./node_modules/.bin/hardhat node --hostname 127.0.0.1 --port "$node_port" >"$node_log" 2>&1 &
node_pid=$!
stop_node() {
  if kill -0 "$node_pid" 2>/dev/null; then
    kill "$node_pid" 2>/dev/null || true
    wait "$node_pid" 2>/dev/null || true
  fi
  rm -f "$node_log"
}
trap stop_node EXIT
# Wait until it answers eth_chainId (up to 90 s; it compiles first when artifacts are stale), then silence its
# per-request log, which otherwise costs a third of the run.
if ! NODE_URL="$node_url" NODE_PID="$node_pid" node -e '
  const rpc = (method, params = []) =>
    fetch(process.env.NODE_URL, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })
      .then((r) => r.json());
  const alive = () => { try { process.kill(Number(process.env.NODE_PID), 0); return true; } catch { return false; } };
  (async () => {
    for (const deadline = Date.now() + 90_000; Date.now() < deadline && alive(); await new Promise((r) => setTimeout(r, 250))) {
      const answer = await rpc("eth_chainId").catch(() => undefined);
      if (answer?.result) {
        await rpc("hardhat_setLoggingEnabled", [false]);
        console.log(`hardhat node up at ${process.env.NODE_URL} (chain ${Number(answer.result)})`);
        return;
      }
    }
    process.exit(1);
  })();
'; then
  echo "hardhat node did not start; its output:" >&2
  tail -n 50 "$node_log" >&2
  exit 1
fi
# The property test runs 10 cases here (plus its fixed example); npm test ran the same seed with 50 in-process.
mapfile -t contract_tests < <(find test/contracts -name '*.test.ts' | sort)
HARDHAT_NODE_URL="$node_url" FC_NUM_RUNS="${FC_NUM_RUNS:-10}" npx hardhat test "${contract_tests[@]}" --network localhost

