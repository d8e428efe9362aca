#!/usr/bin/env bash
# The client the MCP conformance suite drives (scripts/mcp-auth-conformance.sh): given the
# scenario's server URL (the last argument), it writes a config whose one server is that URL
# with auth = "oauth", logs in with `orch mcp login` (the "browser" is curl following the
# authorization server's redirect back to orch's loopback callback), then lists the server's
# tools with `orch tools` and runs a request whose agent calls one. An insufficient_scope
# answer is followed by one more login, which asks for the scope the server named.
set -euo pipefail
url="${!#}"
orch="${ORCH_BIN:-$(dirname "$0")/../target/debug/orch}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ORCH_HOME="$work/home"
export BROWSER="curl -s -o /dev/null -L"
context="${MCP_CONFORMANCE_CONTEXT:-{\}}"
field() { node -e 'const c = JSON.parse(process.argv[1]); const v = c[process.argv[2]]; if (v !== undefined) process.stdout.write(String(v))' "$context" "$1"; }
client_id="$(field client_id)"
client_secret="$(field client_secret)"
oauth="{"
[ -n "$client_id" ] && oauth+=" clientId: \"$client_id\","
if [ -n "$client_secret" ]; then
  export CONFORMANCE_CLIENT_SECRET="$client_secret"
  oauth+=" clientSecretEnv: CONFORMANCE_CLIENT_SECRET,"
fi
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  auth/client-credentials-*) oauth+=" grant: client_credentials," ;;
esac
oauth="${oauth%,} }"
cat > "$work/orch.yaml" <<YAML
mcpServers:
  conformance: { url: "$url", auth: oauth, oauth: $oauth }
departments: [{ id: d, keywords: [x], head: h }]
agents: [{ id: h, role: head, department: d, tools: [{ server: conformance }] }]
YAML
# Lists the tools, then runs a request on the built-in simulated provider, whose agent calls
# the server's first tool: the tool call is where a server may ask for more scope.
use_server() {
  "$orch" tools --config "$work" > /dev/null 2> "$work/stderr" || { cat "$work/stderr" >&2; return 1; }
  "$orch" run --config "$work" --format json "x" > /dev/null 2> "$work/stderr" || true
  cat "$work/stderr" >&2
  ! grep -q insufficient_scope "$work/stderr"
}
"$orch" mcp login conformance --config "$work"
if ! use_server; then
  grep -q insufficient_scope "$work/stderr" || exit 2
  "$orch" mcp login conformance --config "$work"
  use_server
fi
