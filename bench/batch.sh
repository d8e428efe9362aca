#!/usr/bin/env bash
# A batch suite at scale, measured from outside: N judged one-department cases sent as
# batches (`orch test --batch STATE`) to a loopback mock of OpenAI's Batch API (Python's
# standard library; every batch ends at its first poll, its output file in reverse order).
# Each invocation is one line: its exit code, time, CPU, peak RSS (GNU time), the batches it
# submitted and their requests, and the state file's size. Nothing is asserted: these are
# figures, not tests.
#
#   bench/batch.sh [N] [ORCH]     # defaults: 10000, target/release/orch
set -euo pipefail
n="${1:-10000}"
orch="$(realpath "${2:-target/release/orch}")"
dir="$(mktemp -d)"
trap 'kill "$mock" 2>/dev/null || true; rm -rf "$dir"' EXIT
cd "$dir"
cat > mock.py <<'PY'
import json, sys
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
files, batches, log = {}, {}, open(sys.argv[1], "a")
def reply(body):
    user = body["messages"][1]["content"]
    text = (json.dumps({"verdicts": [{"criterion": 1, "pass": True, "reason": "named"}]})
            if user.startswith("ANSWER:\n") else json.dumps({"hero": user, "friend": "Abu"}))
    return {"id": "c", "object": "chat.completion", "usage": {"prompt_tokens": 100, "completion_tokens": 10},
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, code, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code); self.send_header("content-length", str(len(data))); self.end_headers()
        self.wfile.write(data)
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path == "/v1/files":
            fid = "file-%d" % (len(files) + 1)
            files[fid] = [json.loads(l) for l in raw.decode().split("\n") if l.startswith("{") and '"custom_id"' in l]
            return self.send(200, {"id": fid})
        if self.path == "/v1/batches":
            bid = "batch_%d" % (len(batches) + 1)
            batches[bid] = files[json.loads(raw)["input_file_id"]]
            log.write("%d\n" % len(batches[bid])); log.flush()
            return self.send(200, {"id": bid, "status": "validating"})
        self.send(404, {})
    def do_GET(self):
        parts = self.path.split("/")
        if self.path.startswith("/v1/batches/"):
            k = len(batches[parts[3]])
            return self.send(200, {"id": parts[3], "status": "completed", "output_file_id": parts[3] + "-out",
                                   "request_counts": {"total": k, "completed": k, "failed": 0}})
        if self.path.startswith("/v1/files/"):
            lines = (json.dumps({"custom_id": r["custom_id"], "response": {"status_code": 200, "body": reply(r["body"])},
                                 "error": None}) for r in reversed(batches[parts[3][:-4]]))
            return self.send(200, ("\n".join(lines) + "\n").encode())
        self.send(404, {})
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
open("port", "w").write(str(srv.server_address[1]))
srv.serve_forever()
PY
python3 mock.py batches.log & mock=$!
while [ ! -s port ]; do sleep 0.1; done
port="$(cat port)"
cat > orch.yaml <<YAML
defaults: { provider: mock, model: m }
providers:
  mock: { kind: openai, baseUrl: "http://127.0.0.1:$port/v1", apiKeyEnv: BENCH_KEY }
pricing:
  m: { input: 1, output: 4 }
departments:
  - { id: d, keywords: [aladdin], head: h }
agents:
  - { id: h, role: head, department: d }
  - { id: critic, role: judge, instructions: Judge the answer. }
YAML
python3 - "$n" <<'PY'
import json, sys
with open("rows.jsonl", "w") as f:
    for i in range(int(sys.argv[1])):
        f.write(json.dumps({"id": "c%d" % i, "prompt": "Aladdin %d" % i, "specialists": "never",
                            "judge": "critic", "expect": {"rubric": ["Names Abu"]}}) + "\n")
PY
printf 'dataset: rows.jsonl\n' > suite.yaml
echo "| invocation ($n cases) | exit | time | CPU | peak RSS | batches (requests) | state |"
echo "| --- | ---: | ---: | ---: | ---: | --- | ---: |"
for i in 1 2 3 4 5; do
    before="$(wc -l < batches.log 2>/dev/null || echo 0)"
    set +e
    BENCH_KEY=k /usr/bin/time -f "%e %M %U %S" -o time.txt "$orch" test suite.yaml --batch st --quiet \
        --format json --results-detail summary --results r.jsonl > summary.json 2> err.txt
    code=$?
    set -e
    read -r secs kb user sys < <(tail -n 1 time.txt)
    sizes="$(tail -n +"$((before + 1))" batches.log | paste -sd, -)"
    printf '| %d | %d | %s s | %.2f s | %.1f MB | %s | %d KB |\n' "$i" "$code" "$secs" \
        "$(echo "$user + $sys" | bc -l)" "$(echo "$kb / 1024" | bc -l)" "${sizes:-none}" "$(( $(stat -c %s st) / 1024 ))"
    [ "$code" -eq 75 ] || break
done
python3 -c 'import json; s = json.load(open("summary.json")); print("summary:", s["passed"], "passed;", "batch", json.dumps(s["batch"]))'
