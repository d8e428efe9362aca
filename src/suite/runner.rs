//! The runner of `orch test`: the chosen case runs, `--jobs` at a time, every call through
//! one gate; each finished run checked against its case's expectations and written as a
//! results line as it finishes (nothing kept but the record). A signal stops new runs; the
//! runs it cut short are dropped, left for `--resume`.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use futures::future::LocalBoxFuture;
use futures::StreamExt;
use tokio::sync::{watch, Semaphore};

use super::detail::Detail;
use super::judged::{self, Judged};
use super::results::{self, Line, Record};
use super::shard::Shard;
use super::tally::Tally;
use super::target::Target;
use super::{expect, Case, Suite};
use crate::config::Config;
use crate::plan::{self, Plan, PlanOptions, RouterStep, RoutingError};
use crate::report::{Report, RunStatus};

/// A finished run: its report and its answer as judged.
type Ran = (Report, Option<Judged>);
use crate::sink::LineFile;

/// A case's plan, or why routing found none ([`RoutingError::NoMatch`]: the run is then
/// `failed`, never orch).
pub type CasePlan = Result<Plan, RoutingError>;

/// A case that cannot be planned at all (an unknown department): it refuses the suite.
#[derive(Debug, thiserror::Error)]
#[error("case `{case}`: {routing}")]
pub struct Unplannable {
    /// The case's id.
    pub case: String,
    /// Why it has no plan.
    pub routing: RoutingError,
}

/// One run to make: a case of a suite, and which of its repeats.
pub struct Job<'a> {
    /// The suite of the case.
    pub suite: &'a Suite,
    /// The case (shared by its repeats).
    pub case: Arc<Case>,
    /// What it runs on.
    pub target: &'a Target,
    /// Its plan, or why routing found none (the run is then `failed`).
    pub plan: &'a CasePlan,
    /// Which run of the case, from 1.
    pub repeat: u32,
    /// The case's place among the chosen cases (the summary's order).
    pub order: usize,
}

/// One case run handed to the engine.
pub struct CaseRun<'a> {
    /// The config, schemas and providers it runs with.
    pub target: &'a Target,
    /// The request.
    pub prompt: &'a str,
    /// How it is planned.
    pub options: PlanOptions,
    /// The gate every case run's calls pass through.
    pub gate: Arc<Semaphore>,
    /// Resolves when the run must stop.
    pub interrupt: LocalBoxFuture<'static, ()>,
    /// The variants the case forces.
    pub variants: &'a std::collections::BTreeMap<String, String>,
    /// The case's `answers` to the run's questions, in order.
    pub answers: &'a [String],
}

/// One judging of a case run's answer handed to the engine.
pub struct JudgeRun<'a> {
    /// The config and providers the case ran on.
    pub target: &'a Target,
    /// The judge agent.
    pub judge: &'a str,
    /// The user text: the answer, the criteria, the reference.
    pub prompt: String,
    /// The verdicts' schema, sent as structured output.
    pub schema: Arc<serde_json::Value>,
    /// The gate every call passes through.
    pub gate: Arc<Semaphore>,
}

/// Each judging sample's reply text or why its call failed, and what the calls spent.
pub type JudgeReplies = (Vec<Result<String, String>>, crate::report::Usage);

/// Runs one case through the engine, as `orch run` would. The command layer implements it:
/// this layer sits beside `engine` and does not import it.
pub trait CaseEngine {
    /// The report of one case run.
    fn run<'a>(&'a self, run: CaseRun<'a>) -> LocalBoxFuture<'a, Report>;
    /// The judge's replies about a case run's answer (`grading.samples` calls).
    fn judge<'a>(&'a self, run: JudgeRun<'a>) -> LocalBoxFuture<'a, JudgeReplies>;
}

/// Where each case run is made: a batch suite drops a run stuck on parked calls, to be
/// made again at its next wave.
pub trait CaseScope {
    /// Makes `run` (a case run of repeat `repeat`); false when it was dropped unfinished.
    fn scoped<'f>(&'f self, repeat: u32, run: LocalBoxFuture<'f, ()>) -> LocalBoxFuture<'f, bool>;
}

/// How the case runs are made and where each finished one goes.
#[derive(Clone)]
pub struct Runner<'a> {
    /// Where each case run is made (`None`: as it is, to its end).
    pub scope: Option<&'a dyn CaseScope>,
    /// Makes each run.
    pub engine: &'a dyn CaseEngine,
    /// Case runs at once (`--jobs`).
    pub jobs: usize,
    /// The calls in flight of all runs together ([`gate`]).
    pub gate: Arc<Semaphore>,
    /// `--results`: one line per finished run.
    pub results: Option<&'a LineFile>,
    /// `--shard`, written on each results line.
    pub shard: Option<Shard>,
    /// Told of each finished run (a progress bar).
    pub finished: &'a dyn Fn(&Record),
    /// How much of each report its results line holds (`--results-detail`).
    pub detail: Detail,
}

/// The gate on calls in flight: the smallest `limits.maxConcurrency` of the targets (8
/// without any).
pub fn gate<'a>(targets: impl Iterator<Item = &'a Target>) -> Arc<Semaphore> {
    let least = targets.map(|t| t.config.settings.limits.max_concurrency as usize).min();
    Arc::new(Semaphore::new(least.unwrap_or(8).max(1)))
}

impl Runner<'_> {
    /// Makes every run, taking the jobs one at a time as a run finishes (`--jobs` in flight);
    /// `signal` resolving stops them. What is kept of each finished run is its case's counts
    /// in the [`Tally`] (its report is written and dropped), with the signal's value if it came.
    pub async fn run<'j, S>(
        &self,
        jobs: impl Iterator<Item = Job<'j>>,
        signal: impl Future<Output = S>,
    ) -> (Tally, Option<S>) {
        let (stop, stopped) = watch::channel(false);
        let runs = futures::stream::iter(jobs)
            .map(|job| self.run_scoped(job, stopped.clone()))
            .buffer_unordered(self.jobs)
            // A run cut short by a signal is not a result: it is left for `--resume` to make;
            // nor is one a batch suite dropped.
            .filter_map(|ran| std::future::ready(ran.filter(|(_, (report, _), _, _)| !report.metadata.interrupted)))
            .fold(Tally::default(), |mut tally, (record, report, order, case)| {
                let (report, judged) = report;
                self.write_line(&record, (&report, judged.as_ref()), &case);
                drop(report);
                (self.finished)(&record);
                tally.add_run(record, order);
                std::future::ready(tally)
            });
        tokio::pin!(runs);
        tokio::select! {
            tally = &mut runs => (tally, None),
            got = signal => {
                let _ = stop.send(true);
                (runs.await, Some(got))
            }
        }
    }

    /// One case run made alone and never stopped (`orch optimize`'s runs): its record and
    /// its report.
    pub async fn run_alone(&self, job: Job<'_>) -> (Record, Report) {
        // The sender is held to the end: dropped, it would read as a stop.
        let (_stop, stopped) = watch::channel(false);
        let (record, (report, _), _, _) = self.run_job(job, stopped).await;
        (record, report)
    }

    /// One case run made in the runner's scope: `None` when the scope dropped it.
    async fn run_scoped(
        &self,
        job: Job<'_>,
        stopped: watch::Receiver<bool>,
    ) -> Option<(Record, Ran, usize, Arc<Case>)> {
        let Some(scope) = self.scope else {
            return Some(self.run_job(job, stopped).await);
        };
        let mut out = None;
        let repeat = job.repeat;
        scope
            .scoped(
                repeat,
                Box::pin(async {
                    out = Some(self.run_job(job, stopped).await);
                }),
            )
            .await;
        out
    }

    /// One case run: the engine's report, checked against the case's expectations (and
    /// the case, for its expectations as written on its results line).
    async fn run_job(&self, job: Job<'_>, stopped: watch::Receiver<bool>) -> (Record, Ran, usize, Arc<Case>) {
        let started = Instant::now();
        let report = self.report_of(&job, stopped).await;
        let mut failures = expect::failures(&job.case.expect, &report);
        let judged = match report.metadata.interrupted {
            true => None,
            false => self.judged(&job, &report, &mut failures).await,
        };
        let record = Record {
            suite: job.suite.name.clone(),
            case_id: job.case.id.clone(),
            repeat: job.repeat,
            passed: failures.is_empty(),
            failures,
            duration_ms: started.elapsed().as_millis() as u64,
            error: None,
            ungraded: report.grading.partial(),
            judged: judged.as_ref().map(Judged::digest).unwrap_or_default(),
            cost_usd: report.usage.cost_usd,
        };
        let record = Record {
            cost_usd: record.cost_usd + record.judged.usage.cost_usd,
            ..record
        };
        (record, (report, judged), job.order, job.case)
    }

    /// The answer of a finished run judged against its case's `rubric` and `reference`
    /// (when it has them and the run ended `success` or `partial`), the failures added to
    /// `failures`; `answerSchema` checked on the answer.
    async fn judged(&self, job: &Job<'_>, report: &Report, failures: &mut Vec<String>) -> Option<Judged> {
        let expect = &job.case.expect;
        let answer = crate::report::answer(report).unwrap_or_default();
        failures.extend((expect.answer_schema.as_ref()).and_then(|s| judged::schema_failure(s, &answer)));
        if !expect.judged() {
            return None;
        }
        if !matches!(report.status, RunStatus::Success | RunStatus::Partial) {
            let status = report.status.to_string();
            failures.extend(judged::not_judged(
                !expect.rubric.is_empty(),
                expect.reference.is_some(),
                &status,
            ));
            return None;
        }
        let judge = job.case.judge.as_deref()?;
        let asked = judged::Asked {
            judge,
            rubric: &expect.rubric,
            reference: expect.reference.as_deref(),
            samples: job.target.config.settings.grading.samples.max(1),
        };
        let run = JudgeRun {
            target: job.target,
            judge,
            prompt: judged::prompt(answer.trim_end_matches('\n'), asked.rubric, asked.reference),
            schema: Arc::new(judged::schema()),
            gate: self.gate.clone(),
        };
        let (replies, usage) = self.engine.judge(run).await;
        let judged = judged::read(&asked, &replies, &usage);
        failures.extend(judged.failures());
        Some(judged)
    }

    /// The engine's report of one case run, or the failed one a signal or routing gives.
    async fn report_of(&self, job: &Job<'_>, mut stopped: watch::Receiver<bool>) -> Report {
        match job.plan {
            // After a signal no case starts, whatever its plan.
            _ if *stopped.borrow() => {
                let mut report = Report::master_failed(&job.case.prompt, "interrupted");
                report.metadata.interrupted = true;
                report
            }
            Ok(_) => {
                let interrupt = Box::pin(async move {
                    let _ = stopped.wait_for(|s| *s).await;
                });
                let run = CaseRun {
                    target: job.target,
                    prompt: &job.case.prompt,
                    options: options_of(&job.target.config, &job.case),
                    answers: &job.case.answers,
                    gate: self.gate.clone(),
                    interrupt,
                    variants: &job.case.variants,
                };
                self.engine.run(run).await
            }
            Err(why) => Report::master_failed(&job.case.prompt, &why.to_string()),
        }
    }

    /// Appends the run's line to `--results`, if given, with the report or its summary.
    fn write_line(&self, record: &Record, (report, judged): (&Report, Option<&Judged>), case: &Case) {
        let Some(out) = self.results else { return };
        let expect = case.expect.written();
        let case = (expect.as_ref(), case.departments.as_slice());
        let text = match self.detail {
            Detail::Full => results::line_text(self.line(record, (Some(report), judged), case)),
            Detail::Summary => {
                let summary = serde_json::to_value(report).map(super::detail::summary_of).ok();
                let judged = judged.map(Judged::without_reasons);
                results::line_text(self.line(record, (summary.as_ref(), judged.as_ref()), case))
            }
        };
        if let Some(text) = text {
            out.line(&text);
        }
    }

    /// The results line of a run, with `report`, the case's expectations as written and the
    /// departments it forces.
    fn line<'r, R: serde::Serialize>(
        &self,
        record: &'r Record,
        (report, judged): (Option<&'r R>, Option<&'r Judged>),
        (expect, forced): (Option<&'r serde_json::Value>, &'r [String]),
    ) -> Line<'r, R> {
        Line {
            suite: &record.suite,
            case_id: &record.case_id,
            repeat: record.repeat,
            shard: self.shard.map(|s| s.to_string()),
            passed: record.passed,
            failures: &record.failures,
            duration_ms: record.duration_ms,
            error: record.error.as_deref(),
            report,
            judged,
            expect,
            forced_departments: forced,
        }
    }
}

/// How a case is planned (its departments and specialists; the router not asked yet).
fn options_of(config: &Config, case: &Case) -> PlanOptions {
    PlanOptions {
        departments: case.departments.clone(),
        specialists: case.specialists,
        router: RouterStep::wanted(config, &case.departments),
        previous: None,
    }
}

/// The plan of a case; a routing failure is the run's (reported as `failed`), never orch's.
/// An unknown department is orch's: the message refuses the suite.
pub fn plan_of(config: &Config, case: &Case) -> Result<CasePlan, Unplannable> {
    let options = options_of(config, case);
    match plan::build(config, &case.prompt, &options) {
        Ok(plan) => Ok(Ok(plan)),
        // A case that may ask asks before it fails for want of a match.
        Err(RoutingError::NoMatch) if plan::may_ask(config, &options) => {
            Ok(plan::unmatched(config, &case.prompt, &options).map_err(|_| RoutingError::NoMatch))
        }
        Err(e @ RoutingError::NoMatch) => Ok(Err(e)),
        Err(routing) => Err(Unplannable {
            case: case.id.clone(),
            routing,
        }),
    }
}
