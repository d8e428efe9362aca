//! The engine without the clock: a scripted provider and tokio's paused time, so DAG order,
//! calls in flight, timeouts, budgets and interruption are exact on any machine.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::{run, Budget, Engine, EngineParts};

mod economy;
mod tool_host;
mod tool_loop;
mod tool_spans;
use crate::config::{load_str, Config};
use crate::plan::{self, PlanOptions};
use crate::provider::{BoxFuture, Completion, CompletionRequest, Outcome, Provider, Providers};
use crate::report::{NoObserver, Report};

/// One call the scripted provider saw.
#[derive(Clone, Debug)]
struct Call {
    agent: String,
    prompt: String,
    start: Instant,
    end: Instant,
}

/// Answers every call after the agent's delay (100 ms unless scripted), logging it.
#[derive(Default)]
struct Scripted {
    delays: HashMap<String, Duration>,
    calls: Mutex<Vec<Call>>,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

/// Counts a call out of flight even when the engine drops it at its deadline.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Scripted {
    fn with_delays(delays: &[(&str, u64)]) -> Arc<Self> {
        Arc::new(Scripted {
            delays: delays
                .iter()
                .map(|(a, ms)| (a.to_string(), Duration::from_millis(*ms)))
                .collect(),
            ..Default::default()
        })
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn of(&self, prefix: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.agent.starts_with(prefix))
            .collect()
    }
}

impl Provider for Scripted {
    fn complete<'a>(&'a self, req: &'a CompletionRequest) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let start = Instant::now();
            let n = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            let _guard = InFlight(&self.in_flight);
            self.peak.fetch_max(n, Ordering::SeqCst);
            let delay = self
                .delays
                .get(&req.agent_id)
                .copied()
                .unwrap_or(Duration::from_millis(100));
            tokio::time::sleep(delay).await;
            self.calls.lock().unwrap().push(Call {
                agent: req.agent_id.clone(),
                prompt: req.prompt.clone(),
                start,
                end: Instant::now(),
            });
            Outcome::once(Ok(Completion {
                text: format!(
                    "[[{}]] A complete, structured answer about the scene, Aladdin and the music.",
                    req.agent_id
                ),
                prompt_tokens: 10,
                completion_tokens: 5,
                finish_reason: Some("stop".into()),
                tool_calls: Vec::new(),
                ..Completion::default()
            }))
        })
    }
}

/// Story, audio and character (after story and audio), two specialists each; every
/// output passes (threshold 0), so only the schedule is under test.
const CHAIN: &str = r#"
defaults: { passingThreshold: 0 }
departments:
  - { id: story, keywords: [scene], head: story-head, priority: 1 }
  - { id: character, keywords: [aladdin], head: character-head, dependsOn: [story, audio] }
  - { id: audio, keywords: [music], head: audio-head }
agents:
  - { id: story-head, role: head, department: story }
  - { id: story-a, role: specialist, department: story }
  - { id: story-b, role: specialist, department: story }
  - { id: character-head, role: head, department: character }
  - { id: character-a, role: specialist, department: character }
  - { id: character-b, role: specialist, department: character }
  - { id: audio-head, role: head, department: audio }
  - { id: audio-a, role: specialist, department: audio }
  - { id: audio-b, role: specialist, department: audio }
"#;

const REQUEST: &str = "A scene with Aladdin and music. Then the chase";

fn config(extra: &str) -> Config {
    load_str(&format!("{extra}{CHAIN}"), false).unwrap()
}

/// Runs `request` on `config` with `provider` answering every agent; `interrupt` stops it.
async fn run_with(
    config: Config,
    provider: Arc<Scripted>,
    budget: Budget,
    interrupt: impl std::future::Future<Output = ()>,
) -> Report {
    let plan = plan::build(&config, REQUEST, &PlanOptions::default()).unwrap();
    let engine = engine(config, provider, budget);
    run(&engine, &plan, interrupt).await
}

/// An engine for `config` with `provider` answering every agent.
fn engine(config: Config, provider: Arc<Scripted>, budget: Budget) -> Engine {
    let providers = Providers::new(
        HashMap::from([("simulated".to_string(), provider as Arc<dyn Provider>)]),
        None,
        None,
    );
    Engine::new(EngineParts {
        run_id: "run-test".into(),
        config: Arc::new(config),
        schemas: Arc::default(),
        providers,
        budget,
        observer: Box::new(NoObserver),
        seed: 0,
        tools: None,
    })
}

async fn run_chain(provider: Arc<Scripted>, concurrency: usize) -> Report {
    run_with(
        config(""),
        provider,
        Budget::new(200, 0, concurrency),
        std::future::pending(),
    )
    .await
}

/// The report as JSON without its times and ids.
fn timeless(report: &Report) -> serde_json::Value {
    crate::report::timeless(serde_json::to_value(report).unwrap())
}

#[tokio::test(start_paused = true)]
async fn a_department_starts_when_its_dependencies_end_and_parallel_work_overlaps() {
    let provider = Scripted::with_delays(&[("audio-a", 300), ("audio-b", 300), ("audio-head", 300)]);
    let report = run_chain(provider.clone(), 8).await;
    assert_eq!(report.status.to_string(), "success");
    let t0 = provider.calls().iter().map(|c| c.start).min().unwrap();
    let story_end = provider.of("story").iter().map(|c| c.end).max().unwrap();
    let audio_end = provider.of("audio").iter().map(|c| c.end).max().unwrap();
    let character = provider.of("character");
    let character_start = character.iter().map(|c| c.start).min().unwrap();
    // Story and audio start together; story's specialists overlap exactly.
    for c in provider
        .of("story")
        .iter()
        .chain(provider.of("audio").iter())
        .filter(|c| !c.agent.ends_with("head"))
    {
        assert_eq!(c.start, t0, "{} waited for nothing", c.agent);
    }
    // Story: specialists 100 ms, synthesis 100 ms; audio 300 + 300.
    assert_eq!(story_end - t0, Duration::from_millis(200));
    assert_eq!(audio_end - t0, Duration::from_millis(600));
    // Character starts the moment its last dependency ends, not before.
    assert_eq!(character_start, audio_end);
    assert_eq!(provider.peak.load(Ordering::SeqCst), 4);
}

#[tokio::test(start_paused = true)]
async fn handoffs_follow_depends_on_whatever_finishes_first() {
    // Audio finishes first in one run, story in the other: the requests and the report agree.
    let audio_first = Scripted::with_delays(&[("story-a", 500), ("story-b", 500)]);
    let story_first = Scripted::with_delays(&[("audio-a", 500), ("audio-b", 500)]);
    let a = run_chain(audio_first.clone(), 8).await;
    let b = run_chain(story_first.clone(), 8).await;
    let prompt = |p: &Scripted| p.of("character-a")[0].prompt.clone();
    assert_eq!(prompt(&audio_first), prompt(&story_first));
    let p = prompt(&audio_first);
    let (story, audio) = (
        p.find("CONTEXT FROM STORY").unwrap(),
        p.find("CONTEXT FROM AUDIO").unwrap(),
    );
    assert!(story < audio, "handoffs in dependsOn order (story, audio): {p}");
    let character = a.departments.iter().find(|d| d.department_id == "character").unwrap();
    assert_eq!(character.metadata.dependencies_received, ["story", "audio"]);
    // Plan order: stage by stage, each stage by id.
    assert_eq!(
        a.metadata.completed_steps,
        [
            "routing",
            "audio/audio-a",
            "audio/audio-b",
            "audio/synthesis",
            "audio",
            "story/story-a",
            "story/story-b",
            "story/synthesis",
            "story",
            "character/character-a",
            "character/character-b",
            "character/synthesis",
            "character",
            "aggregation"
        ]
    );
    assert_eq!(timeless(&a), timeless(&b));
}

#[tokio::test(start_paused = true)]
async fn max_concurrency_is_the_peak_of_calls_in_flight() {
    for concurrency in [1, 2, 3] {
        let provider = Scripted::with_delays(&[]);
        let report = run_chain(provider.clone(), concurrency).await;
        assert_eq!(report.status.to_string(), "success");
        assert_eq!(provider.peak.load(Ordering::SeqCst), concurrency);
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_past_its_timeout_fails_at_the_deadline() {
    let provider = Scripted::with_delays(&[("story-a", 60_000)]);
    let config = load_str(
        &CHAIN.replace(
            "{ id: story-a, role: specialist, department: story }",
            "{ id: story-a, role: specialist, department: story, executionSettings: { timeout: 2, maxRetries: 0 } }",
        ),
        false,
    )
    .unwrap();
    let t0 = Instant::now();
    let report = run_with(config, provider.clone(), Budget::new(200, 0, 8), std::future::pending()).await;
    let story = report.departments.iter().find(|d| d.department_id == "story").unwrap();
    let a = story
        .specialist_results
        .iter()
        .find(|s| s.agent_id == "story-a")
        .unwrap();
    assert_eq!(a.attempts.len(), 1);
    assert_eq!(a.attempts[0].error.as_deref(), Some("timed out after 2 s"));
    assert_eq!(a.attempts[0].latency_ms, 2000);
    assert_eq!(
        story.status.to_string(),
        "success",
        "story-b passed, so the head synthesizes"
    );
    // The run went on at once: story ended at 2 s + its synthesis, not after 60 s.
    assert!(Instant::now() - t0 < Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn the_call_budget_is_never_exceeded() {
    let provider = Scripted::with_delays(&[]);
    let report = run_with(
        config(""),
        provider.clone(),
        Budget::new(3, 0, 8),
        std::future::pending(),
    )
    .await;
    assert_eq!(provider.calls().len(), 3);
    assert_eq!(report.usage.calls, 3);
    assert_ne!(report.status.to_string(), "success");
    assert!(report
        .departments
        .iter()
        .flat_map(|d| &d.specialist_results)
        .any(|s| s.error.as_deref() == Some("budget exhausted: limits.maxCalls (3) reached")));
}

#[tokio::test(start_paused = true)]
async fn the_token_budget_stops_new_calls() {
    // Each call spends 15 tokens; after 30 no call starts.
    let provider = Scripted::with_delays(&[]);
    let report = run_with(
        config(""),
        provider.clone(),
        Budget::new(200, 30, 1),
        std::future::pending(),
    )
    .await;
    assert_eq!(provider.calls().len(), 2);
    assert_eq!(report.usage.prompt_tokens + report.usage.completion_tokens, 30);
}

#[tokio::test(start_paused = true)]
async fn an_interrupted_run_reports_what_finished() {
    let provider = Scripted::with_delays(&[("audio-a", 10_000), ("audio-b", 10_000)]);
    let interrupt = tokio::time::sleep(Duration::from_secs(1));
    let report = run_with(config(""), provider.clone(), Budget::new(200, 0, 8), interrupt).await;
    assert!(report.metadata.interrupted);
    let status = |id: &str| {
        let d = report.departments.iter().find(|d| d.department_id == id).unwrap();
        (d.status.to_string(), d.error.clone())
    };
    assert_eq!(status("story"), ("success".into(), None));
    assert_eq!(status("audio"), ("failed".into(), Some("interrupted".into())));
    assert_eq!(status("character"), ("failed".into(), Some("interrupted".into())));
    assert_eq!(report.status.to_string(), "partial");
    // Every call sent counts: the 3 that finished and audio-a and audio-b, cut short.
    assert_eq!(provider.calls().len(), 3);
    assert_eq!(report.usage.calls, 5);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_abandons_the_calls_in_flight_and_reports_the_rest() {
    let provider = Scripted::with_delays(&[("audio-a", 10_000), ("audio-b", 10_000)]);
    let started = Instant::now();
    let report = run_with(
        config("limits: { deadline: 1.5 }\n"),
        provider.clone(),
        Budget::new(200, 0, 8),
        std::future::pending(),
    )
    .await;
    // Over at the deadline to the millisecond, not when the 10 s calls would end.
    assert_eq!(started.elapsed(), Duration::from_millis(1500));
    assert!(!report.metadata.interrupted);
    let status = |id: &str| {
        let d = report.departments.iter().find(|d| d.department_id == id).unwrap();
        (d.status.to_string(), d.error.clone())
    };
    assert_eq!(status("story"), ("success".into(), None));
    assert_eq!(status("audio"), ("failed".into(), Some("deadline exceeded".into())));
    assert_eq!(status("character"), ("failed".into(), Some("deadline exceeded".into())));
    assert_eq!(report.status.to_string(), "partial");
    assert_eq!(report.usage.calls, 5);
    // Audio, cut while it ran, keeps its work: each specialist's call, cut at the deadline.
    let audio = department(&report, "audio");
    assert_eq!(audio.usage.calls, 2);
    assert_eq!(cut_attempts(audio), [("audio-a", 1500), ("audio-b", 1500)]);
    // Character never started: nothing to keep.
    assert!(department(&report, "character").specialist_results.is_empty());
}

/// Department `id` of `report`.
fn department<'r>(report: &'r Report, id: &str) -> &'r crate::report::DepartmentResult {
    report.departments.iter().find(|d| d.department_id == id).unwrap()
}

/// A department's attempts the deadline cut: the specialist and when the attempt ended.
fn cut_attempts(d: &crate::report::DepartmentResult) -> Vec<(&str, u64)> {
    d.specialist_results
        .iter()
        .flat_map(|s| s.attempts.iter().map(move |a| (s, a)))
        .filter(|(_, a)| a.error.as_deref() == Some("deadline exceeded"))
        .map(|(s, a)| (s.agent_id.as_str(), a.finished_at))
        .collect()
}

/// Story and audio end at the very instant of the deadline: the stop wins over both every
/// time, and what they did is kept alike, whichever woke first.
#[tokio::test(start_paused = true)]
async fn departments_that_end_at_the_deadline_are_cut_every_time_alike() {
    let mut reports = Vec::new();
    for _ in 0..16 {
        // Specialists answer at 100 ms, the synthesis at 200 ms: the deadline.
        let report = run_with(
            config("limits: { deadline: 0.2 }\n"),
            Scripted::with_delays(&[]),
            Budget::new(200, 0, 8),
            std::future::pending(),
        )
        .await;
        for id in ["story", "audio", "character"] {
            let d = department(&report, id);
            assert_eq!(
                (d.status.to_string(), d.error.as_deref()),
                ("failed".into(), Some("deadline exceeded"))
            );
            assert_eq!(d.output, serde_json::Value::Null);
        }
        assert_eq!(department(&report, "story").specialist_results.len(), 2);
        assert_eq!(department(&report, "story").usage.calls, 3);
        assert_eq!(report.status.to_string(), "failed");
        reports.push(timeless(&report));
    }
    assert!(reports.iter().all(|r| *r == reports[0]));
}

/// A person who never answers.
struct Silent;

impl super::Approver for Silent {
    fn decide<'a>(&'a self, _: &'a crate::report::GateItem) -> futures::future::BoxFuture<'a, super::Verdict> {
        Box::pin(std::future::pending())
    }
}

/// A department whose output waits for a person's yes at the deadline is cut there, with
/// its work, like one whose calls the deadline ended.
#[tokio::test(start_paused = true)]
async fn the_deadline_ends_the_wait_for_a_departments_approval() {
    let config = load_str(
        &format!(
            "limits: {{ deadline: 1.5 }}\n{}",
            CHAIN.replace("priority: 1 }", "priority: 1, requireApproval: true }")
        ),
        false,
    )
    .unwrap();
    let plan = plan::build(&config, REQUEST, &PlanOptions::default()).unwrap();
    let engine = engine(config, Scripted::with_delays(&[]), Budget::new(200, 0, 8)).with_approver(Arc::new(Silent));
    let started = Instant::now();
    let report = run(&engine, &plan, std::future::pending()).await;
    assert_eq!(started.elapsed(), Duration::from_millis(1500));
    let story = department(&report, "story");
    assert_eq!(
        (story.status.to_string(), story.error.as_deref()),
        ("failed".into(), Some("deadline exceeded"))
    );
    // Its specialists and synthesis were done before it waited.
    assert_eq!(story.specialist_results.len(), 2);
    assert_eq!(story.usage.calls, 3);
    assert_eq!(story.approval, None);
    assert_eq!(department(&report, "audio").status.to_string(), "success");
}

#[tokio::test(start_paused = true)]
async fn a_deadline_that_nothing_reaches_changes_nothing() {
    let provider = Scripted::with_delays(&[]);
    let report = run_with(
        config("limits: { deadline: 3600 }\n"),
        provider,
        Budget::new(200, 0, 8),
        std::future::pending(),
    )
    .await;
    assert_eq!(report.status.to_string(), "success");
}

/// The master's summary ends at the very instant of the deadline: the stop wins, as it
/// does over a department (`run_departments`), so the report never depends on which of the
/// two woke first.
#[tokio::test(start_paused = true)]
async fn a_summary_that_ends_at_the_deadline_is_cut_every_time() {
    let yaml = r#"
limits: { deadline: 0.2 }
aggregation: { synthesize: true, masterAgent: m }
departments:
  - { id: story, keywords: [scene], head: story-head }
agents:
  - { id: story-head, role: head, department: story }
  - { id: m, role: master }
"#;
    for _ in 0..32 {
        // The head answers at 100 ms, the master's summary at 200 ms: the deadline.
        let config = load_str(yaml, false).unwrap();
        let report = run_with(
            config,
            Scripted::with_delays(&[]),
            Budget::new(200, 0, 8),
            std::future::pending(),
        )
        .await;
        assert_eq!(report.departments[0].status.to_string(), "success");
        assert_eq!(report.summary, None);
        assert_eq!(
            report.validation.issues,
            ["the master's summary was not written: deadline exceeded"]
        );
        assert_eq!(report.status.to_string(), "partial");
    }
}
