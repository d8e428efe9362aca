#!/usr/bin/env bash
# The official MCP conformance suite's client authorization scenarios against orch
# (`@modelcontextprotocol/conformance`, pinned in package.json: run `npm ci` first). Each
# scenario starts its own authorization server and protected MCP server on loopback and
# drives scripts/mcp-auth-conformance-client.sh (orch mcp login, orch tools, orch run).
# Offline after npm ci; about half a minute. Exit 0 when every scenario passes but the ones
# orch leaves out on purpose (listed below, each with why); the last line counts them.
#   ORCH_BIN=target/debug/orch scripts/mcp-auth-conformance.sh [SCENARIO…]
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
export ORCH_BIN="${ORCH_BIN:-$PWD/target/debug/orch}"
[ -x "$ORCH_BIN" ] || { echo "error: $ORCH_BIN is not built (cargo build)" >&2; exit 2; }
dist=node_modules/@modelcontextprotocol/conformance/dist
[ -f "$dist/index.js" ] || { echo "error: run npm ci first (no $dist)" >&2; exit 2; }
cli="$dist/index.js"
# Node 20 lacks fs.globSync, which the suite imports for a report orch does not use: a copy
# without that import runs the scenarios the same.
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  cli="$dist/.index-node20.js"
  sed 's/globSync as o,//' "$dist/index.js" > "$cli"
fi
# Left out on purpose: the 2025-03-26 revision's fallbacks, client ID metadata documents,
# private_key_jwt client authentication and the enterprise-managed (cross-app access)
# extension (docs/tools.md says so).
left_out=" auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback auth/basic-cimd"
left_out+=" auth/client-credentials-jwt auth/cross-app-access-complete-flow "
if [ $# -gt 0 ]; then
  scenarios=("$@")
else
  mapfile -t scenarios < <(node "$cli" list 2>/dev/null | sed -n 's/^  - \(auth\/[^ ]*\).*/\1/p')
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0 failed=0 skipped=0 unexpected=()
for scenario in "${scenarios[@]}"; do
  if (cd "$work" && timeout 120 node "$root/$cli" client --command "bash $root/scripts/mcp-auth-conformance-client.sh" \
      --scenario "$scenario" > "$work/log" 2>&1); then
    echo "pass  $scenario"
    passed=$((passed + 1))
  elif [[ "$left_out" == *" $scenario "* ]]; then
    echo "skip  $scenario (left out on purpose)"
    skipped=$((skipped + 1))
  else
    echo "FAIL  $scenario"
    sed 's/\x1b\[[0-9;]*m//g' "$work/log" | grep -E "FAILURE|^error" | head -5 | sed 's/^/      /'
    failed=$((failed + 1))
    unexpected+=("$scenario")
  fi
done
echo "conformance: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
