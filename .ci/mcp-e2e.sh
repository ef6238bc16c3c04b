#!/usr/bin/env bash
# End-to-end tests of the MCP bridge with the official TypeScript MCP SDK
# (@modelcontextprotocol/sdk, pinned in mcpbridge/e2e/package-lock.json): node's test runner
# spawns 'ansight mcp --demo' over stdio and drives every meta-tool: names checked against
# the strictest client pattern, annotations, image content, result truncation and paging,
# progress notifications, no response after a cancellation, refusals, a snapshot and an
# action on one of its refs; exposed app tools and notifications/tools/list_changed; and
# --http with its bearer token refused and accepted and a foreign origin refused.
#
# Skips (exit 0, with a message) only when the npm registry cannot be reached.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v node >/dev/null || { echo "mcp e2e: node is required"; exit 1; }
command -v npm >/dev/null || { echo "mcp e2e: npm is required"; exit 1; }

echo "== npm ci (mcpbridge/e2e)"
if ! (cd mcpbridge/e2e && npm ci --prefer-offline --no-audit --no-fund --loglevel=error); then
  if ! timeout 30 npm ping --loglevel=error >/dev/null 2>&1; then
    echo "SKIP mcp e2e: the npm registry is unreachable, so @modelcontextprotocol/sdk cannot be installed"
    exit 0
  fi
  echo "mcp e2e: npm ci failed although the registry answers"
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== build"
GOTOOLCHAIN=${GOTOOLCHAIN:-local} go build -o "$work/ansight" ./cmd/ansight

echo "== MCP tests (TypeScript SDK $(node -p 'require("./mcpbridge/e2e/node_modules/@modelcontextprotocol/sdk/package.json").version'))"
cd mcpbridge/e2e
ANSIGHT_BIN="$work/ansight" node --test --test-reporter=spec mcp.test.mjs
