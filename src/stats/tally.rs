//! The counts `orch stats` keeps while it reads: one entry per department, agent, primary,
//! method, level and provider, none per run, so memory follows the size of the config and not
//! the number of runs (10,000 runs or 10 million, the same few kilobytes).

use std::collections::{BTreeMap, HashMap};

use super::graders::GraderTally;
use super::input::Kind;
use super::judges::JudgeTally;
use super::latency::Latencies;
use super::priced::Priced;
use super::rungs::RungTally;
use super::summary::{AgentStats, DepartmentStats, RoutingStats, Stats, LEVELS, METHODS, STATUSES};
use crate::config::{LearnedRate, SuccessRates};
use crate::report::{RunStatus, Saved, SavedDepartment, SavedSpecialist};
use crate::statistics::PassHatK;
use crate::text::{Mean, UsdSum};

/// Everything counted so far.
#[derive(Debug, Default)]
pub struct Tally {
    runs: u64,
    unreported: u64,
    /// Runs by status name (`paused` only once one is seen).
    by_status: BTreeMap<String, u64>,
    primary: BTreeMap<String, u64>,
    methods: BTreeMap<String, u64>,
    fallbacks: u64,
    router_errors: u64,
    complexity: BTreeMap<String, u64>,
    departments: HashMap<String, DepartmentTally>,
    agents: HashMap<String, AgentTally>,
    head_direct: u64,
    partial_synthesis: u64,
    transport_retries: u64,
    circuits: BTreeMap<String, u64>,
    /// Runs that went into economy.
    economy_runs: u64,
    /// Conflicts and resolutions per department pair.
    reviews: super::review::ReviewTally,
    /// Per case of a results line, by a 64-bit hash of (suite, id) (16 bytes a
    /// case, not its names): its passed runs and its runs, for pass^k.
    cases: HashMap<u64, (u32, u32)>,
    /// The scores each LLM judge gave.
    judges: JudgeTally,
    /// Runs that stopped for input at least once.
    asked: u64,
}

/// One department's counts.
#[derive(Debug, Default)]
struct DepartmentTally {
    runs: u64,
    successes: u64,
    /// Quality of its successful runs.
    quality: Mean,
    /// Runs that say whether they were graded, and of them the graded ones.
    told: u64,
    graded: u64,
    /// Quality of its successful graded runs.
    graded_quality: Mean,
    calls: u64,
    cost: UsdSum,
    priced: Priced,
}

/// One specialist's counts over its final results.
#[derive(Debug, Default)]
struct AgentTally {
    department: String,
    results: u64,
    attempts: u64,
    /// Results with a first attempt (one cut before any has none to judge).
    first_attempts: u64,
    first_passes: u64,
    passes: u64,
    retries: u64,
    score: Mean,
    latencies: Latencies,
    tool_calls: u64,
    /// Input tokens sent, and of them those read from a prompt cache.
    prompt_tokens: u64,
    cache_read_tokens: u64,
    cost: UsdSum,
    /// Attempts that climbed a rung.
    escalations: u64,
    /// Its attempts by rung and model.
    rungs: RungTally,
    /// Its results by variant.
    variants: super::variants::VariantTally,
    /// Its attempts by grader.
    graders: GraderTally,
    priced: Priced,
}

impl Tally {
    /// Counts one value of an input file.
    pub fn add(&mut self, kind: Kind) {
        match kind {
            Kind::Run(run) => self.run(&run),
            Kind::Unreported => self.unreported += 1,
        }
    }

    fn run(&mut self, run: &Saved) {
        self.runs += 1;
        self.economy_runs += u64::from(run.economy.is_some());
        self.reviews.run(run);
        if let Some(id) = &run.case_id {
            let case = self.cases.entry(crate::suite::case_hash(&run.suite, id)).or_default();
            *case = (case.0 + u32::from(run.passed), case.1 + 1);
        }
        self.asked += u64::from(run.asks);
        let status = run.status.unwrap_or(RunStatus::Failed).to_string();
        *self.by_status.entry(status).or_default() += 1;
        if let Some(r) = &run.routing {
            if !r.primary.is_empty() {
                *self.primary.entry(r.primary.clone()).or_default() += 1;
            }
            *self.methods.entry(r.method.clone()).or_default() += 1;
            self.fallbacks += u64::from(r.fallback);
            self.router_errors += u64::from(r.router_error.is_some());
        }
        // One level a run: the request's, which every department of the run shares.
        let level = run.departments.iter().find_map(|d| d.metadata.complexity.clone());
        if let Some(level) = level {
            *self.complexity.entry(level).or_default() += 1;
        }
        for d in &run.departments {
            self.department(d);
        }
        self.transport_retries = self.transport_retries.saturating_add(run.usage.transport_retries);
        for provider in &run.metadata.circuits_opened {
            *self.circuits.entry(provider.clone()).or_default() += 1;
        }
    }

    /// Counts a department of a run. The counts a file states (calls, retries, tool calls)
    /// saturate: a crafted number never overflows. Scores and costs are summed in integers,
    /// so the same runs read in any order give the same bits.
    fn department(&mut self, d: &SavedDepartment) {
        let t = self.departments.entry(d.department_id.clone()).or_default();
        t.runs += 1;
        if d.succeeded() {
            t.successes += 1;
            t.quality.add(d.quality_score);
        }
        // A report of an older orch says nothing: counted neither graded nor not.
        if let Some(graded) = d.graded {
            t.told += 1;
            t.graded += u64::from(graded);
            if graded && d.succeeded() {
                t.graded_quality.add(d.quality_score);
            }
        }
        t.calls = t.calls.saturating_add(d.usage.calls);
        t.cost.add(d.usage.cost_usd);
        t.priced.add(&d.usage);
        self.head_direct += u64::from(d.fallback.as_deref() == Some("head-direct"));
        self.partial_synthesis += u64::from(d.partial_synthesis_failure);
        for s in &d.specialist_results {
            self.specialist(&d.department_id, s);
        }
    }

    fn specialist(&mut self, department: &str, s: &SavedSpecialist) {
        let t = self.agents.entry(s.agent_id.clone()).or_default();
        if t.department.is_empty() {
            t.department = department.to_string();
        }
        t.results += 1;
        t.attempts += s.attempts.len() as u64;
        // The rule `orch compare` follows: a result with no attempt is in neither count.
        if let Some(accepted) = s.first_accepted() {
            t.first_attempts += 1;
            t.first_passes += u64::from(accepted);
        }
        t.passes += u64::from(s.passed());
        t.retries += s.attempts.len().saturating_sub(1) as u64;
        t.score.add(s.quality_score);
        for a in &s.attempts {
            if let Some(judge) = &a.judge {
                self.judges.add(judge, a.score);
                // Sampled more than once: its spread says whether the samples could differ.
                if let (Some(scores), Some(spread)) = (&a.judge_scores, a.judge_spread) {
                    if scores.len() > 1 {
                        self.judges.add_spread(judge, spread);
                    }
                }
            }
            t.latencies.record(a.latency_ms);
            t.rungs.add(a);
            t.graders.add(a);
        }
        t.escalations = t.escalations.saturating_add(s.usage.escalations);
        t.tool_calls = t.tool_calls.saturating_add(s.usage.tool_calls);
        t.prompt_tokens = t.prompt_tokens.saturating_add(s.usage.prompt_tokens);
        t.cache_read_tokens = t.cache_read_tokens.saturating_add(s.usage.cache_read_tokens);
        t.cost.add(s.usage.cost_usd);
        t.priced.add(&s.usage);
        t.variants.add(s);
    }

    /// Each specialist's Laplace-smoothed success rate over its final results.
    pub fn success_rates(&self) -> SuccessRates {
        SuccessRates {
            agents: self
                .agents
                .iter()
                .map(|(id, t)| {
                    let mut rate = LearnedRate::of(t.passes, t.results);
                    rate.variants = t.variants.rates();
                    (id.clone(), rate)
                })
                .collect(),
        }
    }

    /// The analytics, ids sorted: the same runs give the same figures in any order.
    pub fn finish(&self) -> Stats {
        let runs = self.runs;
        let mut departments: Vec<DepartmentStats> = self
            .departments
            .iter()
            .map(|(id, t)| DepartmentStats {
                department: id.clone(),
                runs: t.runs,
                success_rate: ratio(t.successes, t.runs),
                graded_rate: ratio(t.graded, t.told),
                mean_quality: t.graded_quality.value(),
                mean_quality_all: t.quality.value(),
                mean_calls: mean(t.calls as f64, t.runs),
                cost_usd: t.cost.value(),
                priced: t.priced,
            })
            .collect();
        departments.sort_by(|a, b| a.department.cmp(&b.department));
        let mut agents: Vec<AgentStats> = self.agents.iter().map(|(id, t)| t.stats(id)).collect();
        agents.sort_by(|a, b| a.agent_id.cmp(&b.agent_id));
        Stats {
            runs,
            unreported: self.unreported,
            by_status: seeded(&STATUSES, &self.by_status),
            routing: RoutingStats {
                primary: self.primary.clone(),
                methods: seeded(&METHODS, &self.methods),
                fallback_rate: ratio(self.fallbacks, runs),
                router_error_rate: ratio(self.router_errors, runs),
            },
            complexity: seeded(&LEVELS, &self.complexity),
            departments,
            agents,
            head_direct_fallbacks: self.head_direct,
            partial_synthesis_failures: self.partial_synthesis,
            transport_retries: self.transport_retries,
            circuits_opened: self.circuits.clone(),
            economy_runs: self.economy_runs,
            files: 0,
            reviews: self.reviews.finish(),
            judges: self.judges.stats(),
            pass_hat_k: PassHatK::of(&self.case_counts()),
            clarification_rate: ratio(self.asked, runs),
        }
    }
}

impl Tally {
    /// Each case's passed runs and runs, in one order whatever the files' (sorted).
    fn case_counts(&self) -> Vec<(u64, u64)> {
        let mut counts: Vec<(u64, u64)> = (self.cases.values()).map(|&(p, n)| (p.into(), n.into())).collect();
        counts.sort_unstable();
        counts
    }
}

impl AgentTally {
    fn stats(&self, id: &str) -> AgentStats {
        AgentStats {
            agent_id: id.to_string(),
            department: self.department.clone(),
            runs: self.results,
            attempts: self.attempts,
            first_attempt_pass_rate: ratio(self.first_passes, self.first_attempts),
            pass_rate: ratio(self.passes, self.results),
            mean_retries: mean(self.retries as f64, self.results),
            mean_score: self.score.value(),
            latency_ms_p50: self.latencies.percentile(50.0),
            latency_ms_p95: self.latencies.percentile(95.0),
            tool_calls: self.tool_calls,
            cache_read_tokens: self.cache_read_tokens,
            // A report may claim more cached tokens than sent: the rate stays a share.
            cache_hit_rate: ratio(self.cache_read_tokens.min(self.prompt_tokens), self.prompt_tokens),
            cost_usd: self.cost.value(),
            escalations: self.escalations,
            by_rung: self.rungs.stats(),
            variants: self.variants.stats(),
            by_grader: self.graders.stats(),
            priced: self.priced,
        }
    }
}

/// `part / whole`, None when `whole` is 0.
fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// `sum / n`, None when `n` is 0.
fn mean(sum: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| sum / n as f64)
}

/// The counts with every name of `known` present (0 when unseen), and any other name seen.
fn seeded(known: &[&str], seen: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = known.iter().map(|k| (k.to_string(), 0)).collect();
    out.extend(seen.iter().map(|(k, v)| (k.clone(), *v)));
    out
}
