#!/usr/bin/env bash
# Loading a large config, measured from outside against `cat` of the same files: 10,000
# agents (1,000 departments of a head and 9 specialists) in 11,001 files (a file a department
# and a file an agent, and orch.yaml), on the simulated provider, a request that selects every
# department. Prints the median wall time of 5 runs of each and its ratio to `cat`'s. Nothing
# is asserted: these are figures, not tests.
#
#   bench/loading.sh [DEPARTMENTS] [ORCH]     # defaults: 1000, target/release/orch
set -euo pipefail
n="${1:-1000}"
orch="$(realpath "${2:-target/release/orch}")"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
python3 - "$n" <<'PY'
import os, sys
n = int(sys.argv[1])
os.makedirs("departments"); os.makedirs("agents")
open("orch.yaml", "w").write("limits:\n  maxCalls: 100000000\n")
for d in range(n):
    open(f"departments/d{d}.yaml", "w").write(f"id: d{d}\nkeywords: [all]\nhead: h{d}\n")
    open(f"agents/h{d}.yaml", "w").write(f"id: h{d}\nrole: head\ndepartment: d{d}\n")
    for s in range(9):
        open(f"agents/s{d}-{s}.yaml", "w").write(f"id: s{d}-{s}\nrole: specialist\ndepartment: d{d}\n")
PY
files=$(find . -type f | sort)
median() { # COMMAND...: the median wall time of 5 runs, in ms
    for _ in 1 2 3 4 5; do
        local t0 t1
        t0=$(date +%s%N)
        "$@" > /dev/null 2>&1 || true
        t1=$(date +%s%N)
        echo $(( (t1 - t0) / 1000000 ))
    done | sort -n | sed -n 3p
}
# shellcheck disable=SC2086
cat_s=$(median cat $files)
echo "| $((n * 10)) agents, $(echo "$files" | wc -l) files | median of 5 | against \`cat\` |"
echo "| --- | ---: | ---: |"
echo "| cat | ${cat_s} ms | ×1.00 |"
for cmd in "validate" "explain --format json all" "run --format json --quiet all"; do
    # shellcheck disable=SC2086
    s=$(median "$orch" $cmd)
    printf '| orch %s | %s ms | ×%.2f |\n' "${cmd%% *}" "$s" "$(echo "$s / $cat_s" | bc -l)"
done
