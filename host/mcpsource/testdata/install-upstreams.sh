#!/bin/sh
# Installs the upstream MCP servers the host/mcpsource and mcpserver tests
# mount, pinned to versions that run on Node 20 (their SDK,
# @modelcontextprotocol/sdk 1.32.x, needs Node >= 18). The tests run it
# themselves when the servers are missing.
#
#   host/mcpsource/testdata/install-upstreams.sh [DIR]
#
# DIR defaults to $ORDO_UPSTREAMS_DIR, else ~/.cache/ordo/upstreams-2026.8.31.
set -eu
DIR="${1:-${ORDO_UPSTREAMS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ordo/upstreams-2026.8.31}}"
mkdir -p "$(dirname "$DIR")"
# npm installs into a directory of its own, renamed to DIR once complete:
# on a fresh machine both packages' tests run this at the same time, and
# neither may see (or npm into) the other's half-installed directory.
tmp=$(mktemp -d "$DIR.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
npm install --no-audit --no-fund --no-save --prefix "$tmp" \
	@modelcontextprotocol/server-filesystem@2026.8.31 \
	@modelcontextprotocol/server-memory@2026.8.31 \
	@modelcontextprotocol/server-everything@2026.8.31 >&2
done="$DIR/node_modules/.bin/mcp-server-everything"
if [ ! -x "$done" ]; then
	rm -rf "$DIR" # a partial install from before the rename
	mv "$tmp" "$DIR" || [ -x "$done" ]
fi
echo "$DIR"
