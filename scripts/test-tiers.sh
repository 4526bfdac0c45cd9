#!/usr/bin/env bash
# `npm run test:tiers`: every test tier but the fast one (`npm test`), as .ci/run runs them after it (docs/testing.md).
# The contracts' deep invariants, their suite on a standalone node and the PostgreSQL tier start in the background, and
# the files of the e2e, browser, release and chaos tiers run meanwhile in one Mocha run on three workers: all of them
# wait on child processes, chains, browsers, block intervals or the server more than they compute. Each background
# tier prints its output, named, when it has ended; any failure fails the whole once everything ended.
set -euo pipefail
cd "$(dirname "$0")/.."
logs="$(mktemp -d "${TMPDIR:-/tmp}/test-tiers.XXXXXX")"
trap 'rm -rf "$logs"' EXIT
names=(invariants:deep contracts:node pg)
pids=()
for name in "${names[@]}"; do
  npm run "test:$name" >"$logs/$name.log" 2>&1 &
  pids+=("$!")
done
failed=()
TEST_JOBS="${TEST_JOBS:-3}" TEST_TIER=e2e,browser,release,chaos npx hardhat test || failed+=("e2e,browser,release,chaos")
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
