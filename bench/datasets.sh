#!/usr/bin/env bash
# Suites at scale, measured from outside: N one-department cases from a generated
# JSON lines dataset, checked (`orch validate --suite`), run on the simulated provider with
# full and summary results; then `--merge`, `orch compare` and `orch stats` of the results.
# Prints time, peak RSS (GNU time) and results bytes per case. Nothing is asserted: these are
# figures, not tests. The results files are those the runs wrote (no generated stand-ins); at a
# million cases the full file is about 3.9 GB, in a temporary directory removed at the end.
#
#   bench/datasets.sh [N] [ORCH]     # defaults: 100000, target/release/orch
#   JUDGED=1 bench/datasets.sh ...   # each case also has a two-item rubric and a reference,
#                                    # judged by the config's judge (one more call a case)
set -euo pipefail
n="${1:-100000}"
orch="$(realpath "${2:-target/release/orch}")"
root="$(realpath "$(dirname "$0")/..")"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
python3 - "$n" "${JUDGED:-}" <<'PY'
import json, sys
with open("rows.jsonl", "w") as f:
    for i in range(int(sys.argv[1])):
        row = {"id": f"c{i}", "prompt": f"Design the costume of hero {i}",
               "departments": ["character"], "expect": {"status": "success"}}
        if sys.argv[2]:
            row["expect"]["rubric"] = ["Names the costume", f"Speaks of hero {i}"]
            row["expect"]["reference"] = f"A costume for hero {i}."
        f.write(json.dumps(row) + "\n")
PY
printf 'config: %s\ndefaults: {specialists: never}\ndataset: rows.jsonl\n' "$root" > suite.yaml
measure() { # LABEL COMMAND...: one line of figures
    local label="$1"; shift
    /usr/bin/time -f "%e %M %U %S" -o time.txt "$@" > /dev/null 2>err.txt || true
    read -r secs kb user sys < time.txt
    printf '| %s | %s s | %s s | %.1f MB |\n' "$label" "$secs" "$(printf %.2f "$(echo "$user + $sys" | bc -l)")" "$(echo "$kb / 1024" | bc -l)"
}
bytes() { printf '| %s results | %d bytes a case |\n' "$1" "$(( $(stat -c %s "$2") / n ))"; }
echo "| $n cases | time | CPU | peak RSS |"
echo "| --- | ---: | ---: | ---: |"
measure "orch validate --suite" "$orch" validate --suite suite.yaml
measure "orch test, --results-detail full" "$orch" test suite.yaml --format json --quiet --results full.jsonl
measure "orch test, --results-detail summary" "$orch" test suite.yaml --format json --quiet --results-detail summary --results summary.jsonl
measure "orch test --merge (full)" "$orch" test --merge full.jsonl --format json
measure "orch test --merge (summary)" "$orch" test --merge summary.jsonl --format json
measure "orch compare full summary" "$orch" compare full.jsonl summary.jsonl --format json
measure "orch compare summary summary" "$orch" compare summary.jsonl summary.jsonl --format json
measure "orch stats (full)" "$orch" stats full.jsonl --format json
measure "orch stats (summary)" "$orch" stats summary.jsonl --format json
bytes full full.jsonl
bytes summary summary.jsonl
# The shipped studio's suite with summary results: each case's line, in bytes (the goal is
# under 1 KB a case).
"$orch" test "$root/tests/suites/studio.yaml" --format json --quiet --results-detail summary --results studio.jsonl > /dev/null 2>&1 || true
python3 - studio.jsonl <<'PY'
import json, sys
sizes = sorted((len(line.rstrip("\n").encode()), json.loads(line)["caseId"]) for line in open(sys.argv[1]))
print("| studio case, summary line | %d bytes median, %d under 1 KB of %d, largest %d (%s) |"
      % (sizes[len(sizes) // 2][0], sum(s < 1024 for s, _ in sizes), len(sizes), sizes[-1][0], sizes[-1][1]))
PY
