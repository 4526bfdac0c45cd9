#!/usr/bin/env bash
# `npm run test:tiers`: every test tier but the fast one (`npm test`), as .ci/run runs them after it (docs/testing.md).
# The files of the e2e, browser, release and chaos tiers in one Mocha run, so that its workers share them; then the
# contracts' deep invariants, their suite on a standalone node and the PostgreSQL tier side by side: each waits mostly
# on its own chain or server. Each of those three prints its output when it ends, named; the first failure fails the
# whole once all three ended.
set -euo pipefail
cd "$(dirname "$0")/.."
# Four workers (TEST_JOBS): these files wait on child processes, browsers and block intervals more than they compute,
# and two leave the cores idle half the time.
TEST_JOBS="${TEST_JOBS:-4}" TEST_TIER=e2e,browser,release,chaos npx hardhat test
logs="$(mktemp -d "${TMPDIR:-/tmp}/test-tiers.XXXXXX")"
trap 'rm -rf "$logs"' EXIT
names=(invariants:deep contracts:node pg)
pids=()
for name in "${names[@]}"; do
  npm run "test:$name" >"$logs/$name.log" 2>&1 &
  pids+=("$!")
done
failed=()
for i in "${!names[@]}"; do
  status=0
  wait "${pids[$i]}" || status=$?
  echo "──── npm run test:${names[$i]} (exit $status) ────"
  cat "$logs/${names[$i]}.log"
  if [ "$status" -ne 0 ]; then failed+=("test:${names[$i]}"); fi
done
if [ "${#failed[@]}" -ne 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
