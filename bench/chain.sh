#!/usr/bin/env bash
# Loading a long `dependsOn` chain, measured from outside: N departments (default 8,000),
# each depending on the one before, every third with a `when` naming the first (seen through
# the whole chain), in one orch.yaml on the simulated provider. Prints the median wall time of
# 5 runs of `validate` and of `explain` of one department. Nothing is asserted: these are
# figures, not tests. Loading stays linear in the chain's length: each department's reach is
# computed once, from its dependencies'.
#
#   bench/chain.sh [DEPARTMENTS] [ORCH]     # defaults: 8000, target/release/orch
set -euo pipefail
n="${1:-8000}"
orch="$(realpath "${2:-target/release/orch}")"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
python3 - "$n" <<'PY'
import sys
n = int(sys.argv[1])
lines = ["defaults: { provider: simulated }", "departments:"]
for d in range(n):
    dep = f", dependsOn: [d{d - 1}]" if d else ""
    when = ', when: "departments.d0.quality > 1.0"' if d and d % 3 == 0 else ""
    lines.append(f"  - {{ id: d{d}, keywords: [k{d}], head: h{d}{dep}{when} }}")
lines.append("agents:")
lines += [f"  - {{ id: h{d}, role: head, department: d{d} }}" for d in range(n)]
open("orch.yaml", "w").write("\n".join(lines) + "\n")
PY
median() { # COMMAND...: the median wall time of 5 runs, in ms
    for _ in 1 2 3 4 5; do
        local t0 t1
        t0=$(date +%s%N)
        "$@" > /dev/null 2>&1 || true
        t1=$(date +%s%N)
        echo $(( (t1 - t0) / 1000000 ))
    done | sort -n | sed -n 3p
}
echo "| a chain of $n departments | median of 5 |"
echo "| --- | ---: |"
echo "| orch validate | $(median "$orch" validate) ms |"
echo "| orch explain --department d$((n - 1)) | $(median "$orch" explain --format json --department "d$((n - 1))" x) ms |"
