#!/usr/bin/env bash
# Run README command 2 ("Run the tests") as a newcomer would: a fresh clone of this
# repository's committed HEAD in a temporary folder, a new venv, a clean environment
# (env -i, minimal PATH), so nothing installed by hand can make it pass. Prints the wall
# time. `--no-pip-cache` also ignores pip's cache (a machine that never built llama.cpp).
set -euo pipefail
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
dir=$(mktemp -d /tmp/bookmarks-fresh.XXXXXX)
git clone -q "$repo" "$dir"
cd "$dir"
cmd=$(sed -n '/^Run the tests/,/^```$/p' README.md | sed -n '/^```bash$/,/^```$/p' | sed '1d;$d')
extra=()
[ "${1:-}" = "--no-pip-cache" ] && extra=(PIP_NO_CACHE_DIR=1)
echo "in $dir: $cmd"
start=$(date +%s)
status=0
env -i HOME="$HOME" PATH=/usr/local/bin:/usr/bin:/bin "${extra[@]}" bash -c "$cmd" || status=$?
echo "README command 2: exit $status after $(( $(date +%s) - start )) s (fresh clone in $dir)"
exit "$status"
