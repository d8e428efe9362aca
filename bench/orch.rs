//! `cargo bench`: orch measured from outside, as users run it, in six tables (bench/README.md
//! says how to read them). Each figure is the median (and min..max) of fresh processes of the
//! release binary; CPU comes from the kernel's accounting (`wait4`), peak memory from GNU time. Nothing here is asserted: timings on a
//! busy machine are noisy, so they live here and not in `cargo test`, which only builds this.
//!
//! 1. overhead against the floor: a bare client in a process of its own making the same
//!    calls, in the same dependency pattern, on the same mock server (fixed latency per
//!    call), in turns with orch; and against the same client inside the mock's process;
//! 2. CPU and memory per call; 3. scale in agents; 4. start-up; 5. suites; 6. `orch compare`
//!    of two results files of 10,000 case runs each; 7. `orch stats`; 8. tool calls over MCP;
//! 9. a model ladder against the large model alone (pass rate and cost, not time); 10. a
//!    condition (CEL) compiled and evaluated in process; 11. prompt caching, billed like each
//!    provider (tokens and cost, not time); 12. `orch optimize` finding a known instruction
//!    line (pass rates and calls, not time).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::{join_all, FutureExt, Shared};
use serde_json::{json, Value};
use wiremock::{Mock, MockServer, ResponseTemplate};

mod cache;
mod conditions;
mod ladder;
mod optimize;
mod stats;
mod tools;

/// Latency of every mock call.
const LATENCY: Duration = Duration::from_millis(50);
/// Fresh processes per figure.
const RUNS: usize = 5;
/// Runs of orch and of the bare client each, in turns, in tables 1-2.
const PAIRED_RUNS: usize = 9;

/// Median, min and max of some measurements, and the peak memory seen.
#[derive(Clone, Debug, Default)]
struct Stats {
    wall_ms: Vec<f64>,
    cpu_ms: Vec<f64>,
    rss_kb: u64,
}

impl Stats {
    fn median(v: &[f64]) -> f64 {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s.get(s.len() / 2).copied().unwrap_or(0.0)
    }
    fn wall(&self) -> f64 {
        Stats::median(&self.wall_ms)
    }
    fn cpu(&self) -> f64 {
        Stats::median(&self.cpu_ms)
    }
    fn range(&self) -> String {
        let min = self.wall_ms.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.wall_ms.iter().copied().fold(0.0, f64::max);
        format!("{min:.1}..{max:.1}")
    }
    fn json(&self) -> Value {
        json!({"medianMs": self.wall(), "range": self.range(), "cpuMs": self.cpu(), "peakRssKb": self.rss_kb})
    }
}

/// The binary `cargo bench` built beside this harness (release profile).
fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_orch"))
}

/// Runs the binary `RUNS` times: wall, user+sys and peak RSS ([`run_timed`]).
fn measure(cwd: &Path, args: &[&str]) -> Stats {
    measure_program(&bin(), cwd, args)
}

/// Runs `program` `RUNS` times, as [`measure`] does the binary.
fn measure_program(program: &Path, cwd: &Path, args: &[&str]) -> Stats {
    let mut stats = Stats::default();
    for _ in 0..RUNS {
        run_timed(program, cwd, args, &mut stats);
    }
    stats
}

/// Runs orch (`args`) and the bare client (`bare`) in turns, `PAIRED_RUNS` times each, so
/// that whatever else the machine does falls on both alike.
fn measure_paired(cwd: &Path, args: &[&str], bare: &[&str]) -> (Stats, Stats) {
    let me = std::env::current_exe().unwrap();
    let (mut orch, mut client) = (Stats::default(), Stats::default());
    for _ in 0..PAIRED_RUNS {
        run_timed(&bin(), cwd, args, &mut orch);
        run_timed(&me, cwd, bare, &mut client);
    }
    (orch, client)
}

/// One run of `program` under GNU time: its wall (measured here), its user+sys CPU from the
/// kernel's accounting (`wait4` of GNU time, which counts the program it waited for, to the
/// microsecond: GNU time prints CPU to 10 ms, too coarse for 700 calls of a tenth of a
/// millisecond), and its peak RSS as GNU time saw it (a child's own `ru_maxrss` starts at
/// its parent's, this harness's, at exec).
#[allow(clippy::zombie_processes)] // reaped by `wait4`, which std's `wait` cannot replace
fn run_timed(program: &Path, cwd: &Path, args: &[&str], stats: &mut Stats) {
    let out = std::env::temp_dir().join(format!("orch-bench-time-{}", std::process::id()));
    let t = Instant::now();
    let child = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&out)
        .arg(program)
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("GNU time runs the binary");
    let mut status = 0;
    // SAFETY: `usage` is a plain C struct the kernel fills; the pid is our own child's,
    // waited for once here (`child` is never waited for again).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 reaps GNU time");
    stats.wall_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    stats.cpu_ms.push(ms(usage.ru_utime) + ms(usage.ru_stime));
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    if let Some(rss) = text.split_whitespace().last().and_then(|x| x.parse::<u64>().ok()) {
        stats.rss_kb = stats.rss_kb.max(rss);
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A mock chat server: every call answers a passing grade (a valid reply for every agent)
/// after `LATENCY`.
async fn mock() -> MockServer {
    let server = MockServer::start().await;
    let grade = json!({"quality": 0.95, "relevance": 0.95, "consistency": 0.95, "feedback": "ok"}).to_string();
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({
                    "choices": [{"message": {"role": "assistant", "content": grade}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10}
                }))
                .set_delay(LATENCY),
        )
        .mount(&server)
        .await;
    server
}

/// The shipped studio on the mock, graded by the judge, with the master's summary.
fn studio(dir: &Path, uri: &str) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["agents", "departments"] {
        for e in std::fs::read_dir(repo.join(sub)).unwrap().flatten() {
            write(
                dir,
                &format!("{sub}/{}", e.file_name().to_string_lossy()),
                &std::fs::read_to_string(e.path()).unwrap(),
            );
        }
    }
    write(
        dir,
        "orch.toml",
        &format!(
            "[defaults]\nprovider = \"mock\"\n[providers.mock]\nkind = \"openai\"\nbaseUrl = \"{uri}\"\n[http]\ncircuitFailures = 0\n\
             [grading]\nmethod = \"llm\"\njudge = \"studio-judge\"\n[limits]\nmaxConcurrency = 64\nmaxCalls = 10000\n\
             [aggregation]\nsynthesize = true\nmasterAgent = \"studio-master\"\n"
        ),
    );
}

/// `departments` departments of one head and `per` specialists, all matching `all`, on the
/// mock at `uri` (graded by a judge) or, without one, on the simulated provider.
fn wide(dir: &Path, uri: Option<&str>, departments: usize, per: usize, extra: &str) {
    let provider = if uri.is_some() { "mock" } else { "simulated" };
    let mut settings = format!("[defaults]\nprovider = \"{provider}\"\n[limits]\nmaxCalls = 100000000\n{extra}");
    if let Some(uri) = uri {
        settings.push_str(&format!(
            "[grading]\nmethod = \"llm\"\njudge = \"judge\"\n[http]\ncircuitFailures = 0\n[providers.mock]\nkind = \"openai\"\nbaseUrl = \"{uri}\"\n"
        ));
    }
    write(dir, "orch.toml", &settings);
    let mut files = 0;
    let mut depts = String::from("departments:\n");
    let mut agents = String::from("agents:\n  - { id: judge, role: judge }\n");
    for d in 0..departments {
        depts.push_str(&format!("  - {{ id: d{d}, keywords: [all], head: h{d} }}\n"));
        agents.push_str(&format!("  - {{ id: h{d}, role: head, department: d{d} }}\n"));
        for s in 0..per {
            agents.push_str(&format!("  - {{ id: s{d}-{s}, role: specialist, department: d{d} }}\n"));
        }
        if (d + 1) % 100 == 0 || d + 1 == departments {
            write(dir, &format!("departments/part{files}.yaml"), &depts);
            write(dir, &format!("agents/part{files}.yaml"), &agents);
            files += 1;
            depts = String::from("departments:\n");
            agents = String::from("agents:\n");
        }
    }
}

/// The floor: a bare client making exactly the calls of `plan` (`orch explain --format
/// json`) on `uri`, each department when its dependencies are done, its specialists in
/// parallel (each call then its judge's), then the synthesis, then the summary.
async fn floor(uri: &str, plan: &Value, concurrency: usize) -> Duration {
    type Done = Shared<Pin<Box<dyn Future<Output = ()> + Send>>>;
    // orch's reqwest has no crypto provider of its own (orch hands each client its TLS,
    // src/tls.rs): a bare client needs a process-wide one, though it speaks plain HTTP.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let url = format!("{uri}/chat/completions");
    let gate = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let call = {
        let (client, url, gate) = (client.clone(), url.clone(), gate.clone());
        move || {
            let (client, url, gate) = (client.clone(), url.clone(), gate.clone());
            async move {
                let _slot = gate.acquire().await.unwrap();
                let body = json!({"messages": [{"role": "user", "content": "x"}]});
                let r = client.post(&url).json(&body).send().await.unwrap();
                let _: Value = r.json().await.unwrap();
            }
        }
    };
    let llm = plan["llmGrading"] == true;
    let t = Instant::now();
    let mut done: std::collections::HashMap<String, Done> = std::collections::HashMap::new();
    for d in plan["departments"].as_array().unwrap() {
        let deps: Vec<Done> = d["dependsOn"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| done.get(x.as_str().unwrap()).cloned())
            .collect();
        let specialists = d["specialists"].as_array().unwrap().len();
        let call = call.clone();
        let fut: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(async move {
            join_all(deps).await;
            join_all((0..specialists).map(|_| {
                let call = call.clone();
                async move {
                    call().await;
                    if llm {
                        call().await;
                    }
                }
            }))
            .await;
            call().await;
        });
        done.insert(d["departmentId"].as_str().unwrap().to_string(), fut.shared());
    }
    join_all(done.into_values()).await;
    if plan["summary"] == true {
        call().await;
    }
    t.elapsed()
}

fn explain(dir: &Path, request: &str) -> Value {
    let out = Command::new(bin())
        .args(["explain", "--format", "json", request])
        .current_dir(dir)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn row(label: &str, s: &Stats, extra: &str) {
    println!(
        "  {label:<34} {:>9.1} ms  ({:>15})  cpu {:>8.1} ms  rss {:>7.1} MB  {extra}",
        s.wall(),
        s.range(),
        s.cpu(),
        s.rss_kb as f64 / 1024.0
    );
}

/// `floor-client URI PLAN CONCURRENCY`: the floor's calls made by a process of its own (a
/// bare client on its own multi-threaded runtime), so that its CPU can be measured beside
/// orch's on the same mock.
fn floor_process(args: &[String]) {
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(&args[1]).unwrap()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(floor(&args[0], &plan, args[2].parse().unwrap()));
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if let Some(i) = argv.iter().position(|a| a == "floor-client") {
        return floor_process(&argv[i + 1..]);
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(mock());
    let uri = server.uri();
    if argv.iter().any(|a| a == "serve") {
        // `cargo bench -- serve`: the mock alone, for profiling orch against it by hand.
        println!("{uri}");
        loop {
            std::thread::park();
        }
    }
    let mut results = serde_json::Map::new();
    let tmp = tempfile::tempdir().unwrap();
    let quick = "Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops";
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // `cargo bench -- 1 4` runs tables 1-2 and 4 only (`cargo bench` passes `--bench`).
    let picked: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let wanted = |table: &str| picked.is_empty() || picked.iter().any(|p| p == table);

    if wanted("1") {
        println!(
            "1-2. overhead against the floor ({} ms per call), CPU and memory per call",
            LATENCY.as_millis()
        );
        type Make<'a> = Box<dyn Fn(&Path) + 'a>;
        let shapes: [(&str, Make, &str, usize); 3] = [
            (
                "studio (4 departments, judge)",
                Box::new(|d: &Path| studio(d, &uri)),
                quick,
                64,
            ),
            (
                "wide 100 x 3",
                Box::new(|d: &Path| wide(d, Some(&uri), 100, 3, "maxConcurrency = 1000\n")),
                "comprehensive all",
                1000,
            ),
            (
                "wide 100 x 3, maxConcurrency 8",
                Box::new(|d: &Path| wide(d, Some(&uri), 100, 3, "maxConcurrency = 8\n")),
                "comprehensive all",
                8,
            ),
        ];
        let mut overhead = Vec::new();
        for (name, make, request, concurrency) in &shapes {
            let dir = tmp
                .path()
                .join(name.split_whitespace().next().unwrap())
                .join(concurrency.to_string());
            make(&dir);
            let plan = explain(&dir, request);
            let calls = plan["maxCalls"]
                .as_u64()
                .unwrap_or(0)
                .min(plan["minCalls"].as_u64().unwrap_or(0));
            // The same calls by a bare client in a process of its own, in turns with orch:
            // the floor a user sees (a process against the mock), and its CPU per call.
            let plan_file = dir.join("plan.json");
            std::fs::write(&plan_file, plan.to_string()).unwrap();
            let conc = concurrency.to_string();
            let (orch, bare) = measure_paired(
                &dir,
                &["run", "--format", "json", "--quiet", request],
                &["floor-client", &uri, plan_file.to_str().unwrap(), &conc],
            );
            // The same calls from inside the mock's own process and runtime: a lower floor,
            // with no second process to schedule.
            let mut floor_ms = Vec::new();
            for _ in 0..RUNS {
                floor_ms.push(rt.block_on(floor(&uri, &plan, *concurrency)).as_secs_f64() * 1000.0);
            }
            let floor_median = Stats::median(&floor_ms);
            let per_call = orch.cpu() / calls.max(1) as f64;
            let bare_per_call = bare.cpu() / calls.max(1) as f64;
            row(
                name,
                &orch,
                &format!(
                    "bare client {:.1} ms (+{:.1} ms, x{:.3}) · in-process floor {floor_median:.1} ms (x{:.3}) · {calls} calls · {per_call:.3} ms cpu/call (bare client {bare_per_call:.3})",
                    bare.wall(),
                    orch.wall() - bare.wall(),
                    orch.wall() / bare.wall(),
                    orch.wall() / floor_median,
                ),
            );
            overhead.push(json!({"shape": name, "orch": orch.json(), "floorMs": floor_median, "calls": calls, "cpuMsPerCall": per_call, "bareClient": bare.json(), "bareCpuMsPerCall": bare_per_call}));
        }
        results.insert("overhead".into(), Value::Array(overhead));
    }

    if wanted("3") {
        println!("3. scale (simulated provider, a request that selects every department; 10 agents each)");
        let mut scale = Vec::new();
        let mut previous: Option<(usize, [f64; 3])> = None;
        for agents in [100usize, 1_000, 10_000, 100_000] {
            let dir = tmp.path().join(format!("scale-{agents}"));
            wide(&dir, None, agents / 10, 9, "");
            let v = measure(&dir, &["validate"]);
            let e = measure(&dir, &["explain", "--format", "json", "all"]);
            let r = measure(&dir, &["run", "--format", "json", "--quiet", "all"]);
            let now = [v.wall(), e.wall(), r.wall()];
            let ratio = previous.map_or(String::new(), |(n, p)| {
                format!(
                    "x{} agents: validate x{:.1}, explain x{:.1}, run x{:.1}",
                    agents / n,
                    now[0] / p[0],
                    now[1] / p[1],
                    now[2] / p[2]
                )
            });
            row(&format!("{agents} agents validate"), &v, "");
            row(&format!("{agents} agents explain"), &e, "");
            row(&format!("{agents} agents run"), &r, &ratio);
            scale.push(json!({"agents": agents, "validate": v.json(), "explain": e.json(), "run": r.json()}));
            previous = Some((agents, now));
        }
        results.insert("scale".into(), Value::Array(scale));
    }

    if wanted("4") {
        println!("4. start-up on the shipped config");
        let v = measure(repo, &["validate"]);
        let e = measure(repo, &["explain", "--format", "json", quick]);
        row("validate", &v, "");
        row("explain", &e, "");
        // Traces to a collector that refuses, and to one that accepts and never answers: the
        // export may cost about a second at exit, never more.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let silent_url = format!("http://{}", silent.local_addr().unwrap());
        let traced_to = |collector: &str| {
            measure(
                repo,
                &[
                    "run",
                    "--format",
                    "json",
                    "--quiet",
                    "--otlp",
                    collector,
                    "Aladdin character",
                ],
            )
        };
        let refused = traced_to("http://127.0.0.1:9");
        let hung = traced_to(&silent_url);
        drop(silent);
        row("run, collector refuses", &refused, "");
        row("run, collector never answers", &hung, "");
        results.insert(
        "startup".into(),
        json!({"validate": v.json(), "explain": e.json(), "otlpRefused": refused.json(), "otlpSilent": hung.json()}),
    );
    }

    if wanted("5") {
        println!("5. suites on the simulated provider");
        let mut suites = Vec::new();
        for cases in [100usize, 1_000] {
            let dir = tmp.path().join(format!("suite-{cases}"));
            let mut suite = format!("config: {}\ncases:\n", repo.display());
            for i in 0..cases {
                suite.push_str(&format!("  - id: case-{i}\n    prompt: \"Design the costume of Aladdin #{i}\"\n    expect: {{ minQuality: 50 }}\n"));
            }
            write(&dir, "suite.yaml", &suite);
            let s = measure(
                &dir,
                &[
                    "test",
                    "suite.yaml",
                    "--format",
                    "json",
                    "--quiet",
                    "--results",
                    "r.jsonl",
                ],
            );
            row(&format!("{cases} cases"), &s, "");
            // The results file of the last of those runs, as one HTML page.
            let html = measure(&dir, &["report", "r.jsonl", "--html", "r.html"]);
            let bytes = std::fs::metadata(dir.join("r.html")).map_or(0, |m| m.len());
            row(
                &format!("{cases} cases: report --html"),
                &html,
                &format!("{:.0} KB", bytes as f64 / 1024.0),
            );
            let _ = std::fs::remove_file(dir.join("r.jsonl"));
            suites.push(json!({"cases": cases, "test": s.json(), "reportHtml": html.json(), "htmlBytes": bytes}));
        }
        results.insert("suites".into(), Value::Array(suites));
    }

    if wanted("6") {
        println!("6. orch compare of two results files (10,000 case runs each)");
        results.insert("compare".into(), Value::Array(compare_table(tmp.path(), repo)));
    }

    if wanted("7") {
        let dir = tmp.path().join("stats");
        results.insert("stats".into(), stats::table(&dir, repo));
    }

    if wanted("8") {
        let dir = tmp.path().join("tools");
        results.insert("tools".into(), tools::table(&rt, &dir, repo));
    }

    if wanted("9") {
        let dir = tmp.path().join("ladder");
        results.insert("ladder".into(), ladder::table(&rt, &dir));
    }
    if wanted("10") {
        results.insert("conditions".into(), conditions::table());
    }
    if wanted("11") {
        let dir = tmp.path().join("cache");
        results.insert("cache".into(), cache::table(&rt, &dir, repo));
    }
    if wanted("12") {
        let dir = tmp.path().join("optimize");
        results.insert("optimize".into(), optimize::table(&rt, &dir));
    }

    // The tables run replace theirs; the others keep their last figures.
    let out = repo.join("bench/results.json");
    let mut all = std::fs::read_to_string(&out)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Map<String, Value>>(&t).ok())
        .unwrap_or_default();
    all.extend(results);
    std::fs::write(&out, serde_json::to_string_pretty(&Value::Object(all)).unwrap() + "\n").unwrap();
    println!("written: {}", out.display());
}

/// Writes a results file of `cases` × `repeats` case runs, each carrying `report` (JSON text,
/// or `null`); a run passes unless a hash of its case, repeat and `side` falls under
/// `fail_percent`, so the two sides differ the way two configs' runs do.
fn results_file(path: &Path, report: &str, cases: usize, repeats: u32, side: &str, fail_percent: u64) -> u64 {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 0..cases {
        for r in 1..=repeats {
            let mut h: u64 = 14695981039346656037;
            for b in format!("{side}/{i}/{r}").bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(1099511628211);
            }
            let passed = h % 100 >= fail_percent;
            let failures = if passed {
                "[]"
            } else {
                r#"["minQuality: overallQuality 62 is below 80"]"#
            };
            writeln!(
                out,
                r#"{{"suite":"bench","caseId":"case-{i}","repeat":{r},"shard":null,"passed":{passed},"failures":{failures},"durationMs":{},"report":{report}}}"#,
                h % 5000
            )
            .unwrap();
        }
    }
    out.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Table 6: `orch compare` of two files of 10,000 case runs, with small reports, large ones
/// and none (memory must follow the cases, not the reports), and of 100,000 runs.
fn compare_table(tmp: &Path, repo: &Path) -> Vec<Value> {
    let report_of = |request: &str| {
        let out = Command::new(bin())
            .args(["run", "--format", "json", "--quiet", request])
            .current_dir(repo)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report.to_string()
    };
    let small = report_of("Design the costume of Aladdin");
    let large =
        report_of("Create a dramatic opening scene with Aladdin stealing bread, then his escape across the rooftops");
    let shapes: [(&str, &str, usize, u32); 4] = [
        ("2,000 cases x 5, 3.4 KB reports", &small, 2_000, 5),
        ("2,000 cases x 5, 25 KB reports", &large, 2_000, 5),
        ("2,000 cases x 5, no reports", "null", 2_000, 5),
        ("20,000 cases x 5, 3.4 KB reports", &small, 20_000, 5),
    ];
    let dir = tmp.join("compare");
    std::fs::create_dir_all(&dir).unwrap();
    let mut rows = Vec::new();
    for (name, report, cases, repeats) in shapes {
        let bytes = results_file(&dir.join("base.jsonl"), report, cases, repeats, "base", 10)
            + results_file(&dir.join("candidate.jsonl"), report, cases, repeats, "candidate", 15);
        let s = measure(
            &dir,
            &[
                "compare",
                "base.jsonl",
                "candidate.jsonl",
                "--format",
                "json",
                "--fail-on",
                "never",
            ],
        );
        let mb = bytes as f64 / 1e6;
        row(name, &s, &format!("{mb:.0} MB read"));
        rows.push(
            json!({"shape": name, "runsPerFile": cases * repeats as usize, "bytesRead": bytes, "compare": s.json()}),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    rows
}
