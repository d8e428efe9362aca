#!/usr/bin/env bash
# scripts/browser-check.sh REPORT.json [OUT.png]
# The browser check of `orch report` (issue #14), by hand, not in CI: docs/report.png was
# made this way from a run of the studio against a mock server with latency
# (`WINDOW=1200,1420`), and looked at.
# Renders an `orch run --format json` report to HTML with `orch report`, then
# screenshots it with headless Chromium (Debian package `chromium`).
# Exits non-zero if rendering fails or the PNG is missing or empty.
set -euo pipefail

report=${1:?usage: browser-check.sh REPORT.json [OUT.png]}
png=${2:-${report%.json}.png}
html=${png%.png}.html
# The orch binary to use; defaults to the release build of this repository.
ORCH=${ORCH:-$(dirname "$0")/../target/release/orch}
# Browser: Debian's `chromium` (or `chromium-headless-shell`).
CHROME=${CHROME:-$(command -v chromium || command -v chromium-headless-shell || true)}
[ -n "$CHROME" ] || { echo "no chromium found (apt-get install -y chromium)" >&2; exit 2; }

# 1. Render the report to a self-contained HTML page.
"$ORCH" report "$report" --html "$html"

# 2. Screenshot it. --no-sandbox is needed as root; --headless (new mode is the
#    default in current Chromium). Console/log output goes to a .log file.
rm -f "$png"
"$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size="${WINDOW:-1200,1000}" --enable-logging=stderr --v=0 \
  --screenshot="$png" "file://$(realpath "$html")" >"${png%.png}.chrome.log" 2>&1 || true

# 3. The check: the PNG must exist and be non-empty.
if [ ! -s "$png" ]; then
  echo "FAIL: screenshot $png missing or empty (see ${png%.png}.chrome.log)" >&2
  exit 1
fi
# Report page-level console errors, if any (dbus noise is ignored).
grep -i 'CONSOLE' "${png%.png}.chrome.log" | grep -v dbus >&2 || true
echo "OK: $png ($(stat -c %s "$png") bytes) from $html"
