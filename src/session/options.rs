//! The typed options a session takes: what the command line's flags (or a served tool's
//! arguments, or a journal's `run` line) mean, made once and checked once. The flags are
//! parsed elsewhere; nothing here knows a command line. The bounds of each number live here,
//! so the flags and a journal read back are refused by the same rule in the same words.

use std::ops::RangeInclusive;
use std::path::PathBuf;

use crate::plan::SpecialistMode;

/// Where replies come from and go, and traces.
#[derive(Clone, Debug, Default)]
pub struct ReplyOptions {
    /// One provider for every agent (a key of `[providers]` or a built-in).
    pub provider: Option<String>,
    /// One model for every agent.
    pub model: Option<String>,
    /// The cassette every exchange is recorded to.
    pub record: Option<PathBuf>,
    /// The cassette every call is answered from, with no network.
    pub replay: Option<PathBuf>,
    /// The cassette that answers what it holds and records what it lacks.
    pub cache: Option<PathBuf>,
    /// The OTLP/HTTP endpoint traces are exported to.
    pub otlp: Option<String>,
    /// Whether prompts and outputs go into span attributes too.
    pub otlp_content: bool,
    /// The simulated provider's seed.
    pub seed: u64,
}

/// How variants are assigned.
#[derive(Clone, Debug, Default)]
pub struct VariantOptions {
    /// The key variants are assigned by, instead of the request.
    pub assign: Option<String>,
    /// Agents given a named variant (`control`: the agent as written).
    pub forced: Vec<(String, String)>,
}

/// The request and how to plan it.
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    /// The request (`-`: read from standard input).
    pub prompt: String,
    /// The config root or file.
    pub config: Option<PathBuf>,
    /// Exactly these departments, skipping relevance scoring.
    pub departments: Vec<String>,
    /// Whether heads use specialists.
    pub specialists: SpecialistMode,
    /// The learned rates specialists are ranked by.
    pub success_rates: Option<PathBuf>,
    /// How variants are assigned.
    pub variants: VariantOptions,
    /// The previous turn of the conversation the run continues.
    pub previous: Option<crate::plan::PreviousTurn>,
}

/// Everything one run is asked to do, but how its report is printed.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Providers, cassettes, traces.
    pub replies: ReplyOptions,
    /// The request and how to plan it.
    pub plan: RequestOptions,
    /// The quality below which the run exits 3.
    pub min_quality: Option<f64>,
    /// The cap on LLM calls, over the config's.
    pub max_calls: Option<u32>,
    /// Seconds the whole run may take, over the config's (0: none).
    pub deadline: Option<f64>,
    /// LLM calls in flight at once, over the config's.
    pub concurrency: Option<u32>,
    /// The file the run's events are written to.
    pub events: Option<PathBuf>,
    /// How steps that wait for a person are decided (`None`: by the terminal).
    pub approvals: Option<ApprovalMode>,
    /// The journal the run writes.
    pub journal: Option<PathBuf>,
    /// No progress on stderr.
    pub quiet: bool,
    /// The conversation this run is the next turn of.
    pub session: Option<PathBuf>,
    /// Answers to the run's questions, in order.
    pub answers: Vec<String>,
    /// The answer printed on stdout as it is written.
    pub stream: bool,
    /// Progress as JSON lines on stderr instead of bars.
    pub progress: Option<ProgressFormat>,
}

/// Everything a suite run is asked to do, but how its outcome is printed.
#[derive(Clone, Debug, Default)]
pub struct TestOptions {
    /// Providers, cassettes, traces.
    pub replies: ReplyOptions,
    /// The suite files.
    pub suites: Vec<PathBuf>,
    /// The config root, over each suite's own.
    pub config: Option<PathBuf>,
    /// Only the cases of this shard.
    pub shard: Option<crate::suite::Shard>,
    /// Cases run at once.
    pub jobs: u32,
    /// Runs of each case, over the suite's.
    pub repeat: Option<u32>,
    /// The share of a case's runs that must pass.
    pub pass_rate: f64,
    /// Only cases whose id matches this regex.
    pub filter: Option<String>,
    /// Only cases with one of these tags.
    pub tags: Vec<String>,
    /// Not the cases with one of these tags.
    pub skip_tags: Vec<String>,
    /// Only this many of the selected cases, chosen by `sample_seed`.
    pub sample: Option<u64>,
    /// The seed that chooses the sample.
    pub sample_seed: String,
    /// Only the cases with a failed or errored run in this results file.
    pub rerun_failed: Option<PathBuf>,
    /// Count the calls and worst-case cost; run nothing.
    pub estimate: bool,
    /// The results file each case run is appended to.
    pub results: Option<PathBuf>,
    /// The results file whose runs are skipped and appended to.
    pub resume: Option<PathBuf>,
    /// Results files summarised without running anything.
    pub merge: Vec<PathBuf>,
    /// The JUnit file written.
    pub junit: Option<PathBuf>,
    /// How steps that wait for a person are decided.
    pub approvals: Approvals,
    /// The learned rates specialists are ranked by.
    pub success_rates: Option<PathBuf>,
    /// How variants are assigned.
    pub variants: VariantOptions,
    /// No progress bar.
    pub quiet: bool,
    /// Progress as JSON lines on stderr instead of the bar.
    pub progress: Option<ProgressFormat>,
    /// The state file of a batch suite: its calls sent as batches, over several invocations.
    pub batch: Option<PathBuf>,
    /// Seconds this invocation waits for pending batches (none: it exits at once).
    pub batch_wait: Option<u64>,
    /// The time between polls of pending batches.
    pub batch_poll: std::time::Duration,
    /// How much of each run's report a results line holds.
    pub results_detail: crate::suite::ResultsDetail,
}

/// What `orch optimize` is asked to do with the suites it loaded, but how its outcome is
/// printed and where it is written.
#[derive(Clone, Debug, Default)]
pub struct OptimizeOptions {
    /// The agents whose instructions are learned.
    pub agents: Vec<String>,
    /// The agent of the config that writes the candidates.
    pub reflector: Option<String>,
    /// Or a provider that does, with `reflector_model`.
    pub reflector_provider: Option<String>,
    /// The model of `reflector_provider`.
    pub reflector_model: Option<String>,
    /// Candidates asked for each round.
    pub candidates: u32,
    /// Rounds at most.
    pub rounds: u32,
    /// The share of cases held out for validation.
    pub validation_split: f64,
    /// The seed of the split.
    pub seed: String,
    /// Calls at most, over everything.
    pub max_calls: Option<u64>,
    /// USD at most, over everything.
    pub max_cost_usd: Option<f64>,
    /// The cassette every call is answered from.
    pub replay: Option<PathBuf>,
    /// The cassette that answers what it holds and records what it lacks.
    pub cache: Option<PathBuf>,
    /// Only cases whose id matches this regex.
    pub filter: Option<String>,
    /// Only cases with one of these tags.
    pub tags: Vec<String>,
    /// Not the cases with one of these tags.
    pub skip_tags: Vec<String>,
    /// `--write`: where the copy goes; each target's definition is checked editable in
    /// place there before any call.
    pub write: Option<PathBuf>,
}

/// How progress is written on stderr, beside the bars drawn on a terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressFormat {
    /// One JSON object a line, one line per change (for CI logs).
    Jsonl,
}

/// How a run decides the steps that wait for a person's yes (docs/approvals.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum ApprovalMode {
    /// Ask on the terminal, one item at a time.
    Prompt,
    /// Every item is approved.
    Allow,
    /// Every item is denied.
    Deny,
    /// Every item waits: the run pauses once nothing else can run (needs a journal).
    Defer,
}

/// How a suite decides such steps: nobody is at a terminal to ask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum Approvals {
    /// Every item is approved.
    Allow,
    /// Every item is denied.
    #[default]
    Deny,
}

/// How `orch mcp` decides them: by the flag, or by asking the client's user.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum McpApprovals {
    /// Every item is approved.
    Allow,
    /// Every item is denied.
    Deny,
    /// Each item asked through MCP elicitation when the client declares it.
    Prompt,
}

impl McpApprovals {
    /// What decides what nobody is asked about (a served suite's items): `prompt` denies.
    pub fn flag(self) -> Approvals {
        match self {
            McpApprovals::Allow => Approvals::Allow,
            McpApprovals::Deny | McpApprovals::Prompt => Approvals::Deny,
        }
    }
}

/// The bounds of a run's call cap.
pub const MAX_CALLS: RangeInclusive<u32> = 1..=u32::MAX;
/// The bounds of a run's calls in flight.
pub const CONCURRENCY: RangeInclusive<u32> = 1..=1024;

/// A quality bar: a number from 0 to 100 (NaN, infinities and anything outside are refused).
pub fn quality(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(q) if (0.0..=100.0).contains(&q) => Ok(q),
        _ => Err(format!("`{s}` is not a quality between 0 and 100")),
    }
}

/// Seconds for a whole run: 0 to a day (NaN and infinities are refused).
pub fn deadline(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(d) if (0.0..=86_400.0).contains(&d) => Ok(d),
        _ => Err(format!("`{s}` is not a number of seconds between 0 and 86400")),
    }
}

/// A count within `bounds`, in the words the command line uses for one outside them.
pub fn within(n: i64, bounds: &RangeInclusive<u32>) -> Result<u32, String> {
    match u32::try_from(n) {
        Ok(k) if bounds.contains(&k) => Ok(k),
        _ => Err(format!("{n} is not in {}..={}", bounds.start(), bounds.end())),
    }
}

/// A count within `bounds`, as written: a whole number, then [`within`].
pub fn count(s: &str, bounds: &RangeInclusive<u32>) -> Result<u32, String> {
    within(s.parse::<i64>().map_err(|e| e.to_string())?, bounds)
}
