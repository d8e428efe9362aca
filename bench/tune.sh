#!/usr/bin/env bash
# `orch tune` at scale (issue 39), measured from outside: a generated results file
# of N case runs (each with its case's `expect`, a routing of six departments' relevances and
# two departments of two specialists, two graded attempts each), and a labels file of 1,000
# verdicts; then `orch tune` with and without `--labels`. Prints time and peak RSS (GNU
# time). Nothing is asserted: these are figures, not tests.
#
#   bench/tune.sh [N] [ORCH]     # defaults: 100000, target/release/orch
set -euo pipefail
n="${1:-100000}"
orch="$(realpath "${2:-target/release/orch}")"
root="$(realpath "$(dirname "$0")/..")"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
python3 - "$n" <<'PY'
import json, random, sys
random.seed(39)
depts = ["story", "character", "visual", "audio", "production", "image-quality"]
heads = {"story": ["story-writer-specialist", "story-structure-specialist"],
         "character": ["character-appearance-specialist", "character-personality-specialist"],
         "visual": ["visual-composition-specialist", "visual-color-specialist"],
         "audio": ["audio-music-specialist", "audio-sfx-specialist"],
         "production": ["production-schedule-specialist", "production-budget-specialist"],
         "image-quality": ["image-quality-sharpness-specialist", "image-quality-noise-specialist"]}
labels = []
with open("results.jsonl", "w") as f:
    for i in range(int(sys.argv[1])):
        rel = {d: round(random.random() * 0.7, 2) for d in depts}
        primary = max(rel, key=rel.get)
        support = [d for d in depts if d != primary and rel[d] > 0.3]
        want = [primary] + [d for d in support if random.random() < 0.8]
        run = f"run-{i}"
        departments = []
        for d in [primary] + support[:1]:
            sps = []
            for agent in heads[d]:
                attempts = [{"attempt": a, "score": round(random.uniform(30, 95), 1),
                             "decision": "pass", "latencyMs": 40} for a in (1, 2)]
                sps.append({"agentId": agent, "qualityScore": attempts[-1]["score"], "attempts": attempts})
                if len(labels) < 1000 and random.random() < 0.01:
                    labels.append({"runId": run, "agentId": agent, "attempt": 1,
                                   "pass": attempts[0]["score"] + random.uniform(-15, 15) >= 60})
            departments.append({"departmentId": d, "status": "success", "qualityScore": 80,
                                "specialistResults": sps})
        report = {"version": 1, "runId": run, "status": "success", "overallQuality": 80,
                  "routing": {"primary": primary, "supporting": support, "executionMode": "parallel",
                              "method": "keywords",
                              "scores": [{"department": d, "relevance": rel[d]} for d in depts if rel[d] > 0]},
                  "departments": departments, "usage": {"calls": 9, "costUsd": 0.0}}
        line = {"suite": "studio", "caseId": f"c{i}", "repeat": 1, "shard": None, "passed": True,
                "failures": [], "durationMs": 12, "report": report,
                "expect": {"primary": primary, "departments": want}}
        f.write(json.dumps(line) + "\n")
with open("labels.jsonl", "w") as f:
    for l in labels:
        f.write(json.dumps(l) + "\n")
PY
measure() { # LABEL COMMAND...: one line of figures
    local label="$1"; shift
    /usr/bin/time -f "%e %U %S %M" -o time.txt "$@" > /dev/null 2>err.txt || { cat err.txt; exit 1; }
    read -r secs user sys kb < time.txt
    printf '| %s | %s s | %.2f s | %.1f MB |\n' "$label" "$secs" "$(echo "$user + $sys" | bc -l)" "$(echo "$kb / 1024" | bc -l)"
}
mb="$(( $(stat -c %s results.jsonl) / 1000000 ))"
echo "| orch tune, $n case runs ($mb MB), $(wc -l < labels.jsonl) labels | time | CPU | peak RSS |"
echo "| --- | ---: | ---: | ---: |"
measure "routing only" "$orch" tune results.jsonl --config "$root" --format json
measure "with --labels" "$orch" tune results.jsonl --config "$root" --labels labels.jsonl --format json
head -c "$(( $(stat -c %s results.jsonl) / 10 ))" results.jsonl | sed '$d' > tenth.jsonl
measure "a tenth of the runs, with --labels" "$orch" tune tenth.jsonl --config "$root" --labels labels.jsonl --format json
