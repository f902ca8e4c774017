#!/usr/bin/env bash
# README command 2 on a busy machine: two CPU-bound processes run beside a fresh-clone run
# of the test command (tests/fresh_clone_check.sh), RUNS times in a row (default 3). The
# suite must pass every time: no test may depend on how fast the machine is. Prints each
# run's wall time; exits non-zero on the first failure.
set -euo pipefail
runs=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
busy=()
for _ in 1 2; do
  python3 -c 'while True: pass' &
  busy+=($!)
done
trap 'kill "${busy[@]}" 2>/dev/null || true' EXIT
echo "two busy processes: ${busy[*]}"
for n in $(seq 1 "$runs"); do
  start=$(date +%s)
  bash "$here/fresh_clone_check.sh"
  echo "busy run $n of $runs: passed in $(( $(date +%s) - start )) s"
done
