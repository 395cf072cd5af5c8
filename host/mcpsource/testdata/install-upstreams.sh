#!/bin/sh
# Installs the upstream MCP servers the host/mcpsource tests mount, pinned
# to versions that run on Node 20 (their SDK, @modelcontextprotocol/sdk
# 1.32.x, needs Node >= 18). CI runs this once before `go test`; the tests
# run it themselves when the servers are missing.
#
#   host/mcpsource/testdata/install-upstreams.sh [DIR]
#
# DIR defaults to $ORDO_UPSTREAMS_DIR, else ~/.cache/ordo/upstreams-2026.8.31.
set -eu
DIR="${1:-${ORDO_UPSTREAMS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ordo/upstreams-2026.8.31}}"
mkdir -p "$DIR"
npm install --no-audit --no-fund --no-save --prefix "$DIR" \
	@modelcontextprotocol/server-filesystem@2026.8.31 \
	@modelcontextprotocol/server-memory@2026.8.31 \
	@modelcontextprotocol/server-everything@2026.8.31 >&2
echo "$DIR"
