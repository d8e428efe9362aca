//! Progress bars on stderr while a run is under way (indicatif), fed by engine events, and
//! the one bar of `orch test`, fed by finished case runs. A server's words and every id are
//! shown escaped ([`printable`]), as on every human output.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::options::ProgressFormat;
use super::progress_lines::ProgressLines;
use crate::report::{DepartmentStatus, Event, Observer};
use crate::suite::Record;
use crate::text::printable;

/// One bar per department (its state, and the attempt and rung of its running
/// specialists), and a run line below them: calls made, tokens, cost so far against
/// `maxCostUsd`, and elapsed time against the deadline. Drawn at most 10 times a second.
pub struct Progress {
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
    run: ProgressBar,
    spent: Mutex<Spent>,
    /// `limits.maxCostUsd` (0: none).
    max_cost_usd: f64,
}

/// What the run's calls spent so far.
#[derive(Default)]
struct Spent {
    calls: u64,
    tokens: u64,
    cost_usd: f64,
}

impl Progress {
    /// Bars drawn on stderr, the run line bounded by `max_cost_usd` and `deadline`
    /// seconds (0: none).
    pub fn stderr(max_cost_usd: f64, deadline: f64) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10));
        let run = multi.add(ProgressBar::new_spinner());
        let limit = match deadline > 0.0 {
            true => format!(" of {}s", crate::text::fmt_score(deadline)),
            false => String::new(),
        };
        let template = format!("{{spinner}} {{prefix:.bold}} {{msg}} · {{elapsed}}{limit}");
        run.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_spinner()));
        run.set_prefix("run");
        run.enable_steady_tick(Duration::from_millis(100));
        let progress = Progress {
            multi,
            bars: Mutex::new(HashMap::new()),
            run,
            spent: Mutex::new(Spent::default()),
            max_cost_usd,
        };
        progress.run.set_message(progress.run_line(&Spent::default()));
        progress
    }

    /// A department's bar, made when the run is routed (waiting) or when it starts.
    fn bar(&self, department: &str) -> ProgressBar {
        let Ok(mut bars) = self.bars.lock() else {
            return ProgressBar::hidden();
        };
        bars.entry(department.to_string())
            .or_insert_with(|| {
                let bar = self.multi.insert_before(&self.run, ProgressBar::new_spinner());
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {prefix:.bold} {wide_msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar.set_prefix(printable(department).into_owned());
                bar.set_message("waiting");
                bar
            })
            .clone()
    }

    /// A department's bar, from its start.
    fn start(&self, department: &str, specialists: usize) {
        let bar = self.bar(department);
        bar.set_message(if specialists == 0 {
            "running · head answering".to_string()
        } else {
            format!("running · {specialists} specialists")
        });
        bar.enable_steady_tick(Duration::from_millis(100));
    }

    /// Counts a call into the run line.
    fn call(&self, tokens: u64, cost_usd: f64) {
        let Ok(mut spent) = self.spent.lock() else { return };
        spent.calls += 1;
        spent.tokens = spent.tokens.saturating_add(tokens);
        spent.cost_usd += cost_usd;
        self.run.set_message(self.run_line(&spent));
    }

    /// `3 calls · 1234 tokens · $0.0123 of $0.5000`.
    fn run_line(&self, spent: &Spent) -> String {
        let cap = match self.max_cost_usd > 0.0 {
            true => format!(" of {}", crate::text::fmt_usd(self.max_cost_usd)),
            false => String::new(),
        };
        format!(
            "{} · {} tokens · {}{cap}",
            crate::text::count(spent.calls as usize, "call"),
            spent.tokens,
            crate::text::fmt_usd(spent.cost_usd)
        )
    }

    /// Leaves nothing behind at the run's end: the report follows on stdout.
    fn clear(&self) {
        if let Ok(mut bars) = self.bars.lock() {
            for (_, bar) in bars.drain() {
                bar.finish_and_clear();
            }
        }
        self.run.finish_and_clear();
        let _ = self.multi.clear();
        self.multi.set_draw_target(ProgressDrawTarget::hidden());
    }

    /// Clears the bars for good: the answer is being printed on the terminal.
    pub fn make_way(&self) {
        self.clear();
    }

    fn with_bar(&self, department: &str, f: impl FnOnce(&ProgressBar)) {
        if let Ok(bars) = self.bars.lock() {
            if let Some(bar) = bars.get(department) {
                f(bar);
            }
        }
    }
}

impl Observer for Progress {
    fn event(&self, event: &Event) {
        if let Some(line) = notice(event) {
            let _ = self.multi.println(line);
            return;
        }
        match event {
            Event::Routing { stages, .. } => stages.iter().flatten().for_each(|d| drop(self.bar(d))),
            Event::DepartmentStart {
                department,
                specialists,
            } => self.start(department, *specialists),
            Event::Call {
                prompt_tokens,
                completion_tokens,
                cost_usd,
                ..
            } => self.call(prompt_tokens.saturating_add(*completion_tokens), *cost_usd),
            Event::DepartmentComplete {
                department,
                status,
                quality_score,
                ..
            } => self.with_bar(department, |b| b.finish_with_message(finished(*status, *quality_score))),
            Event::RunComplete { .. } => self.clear(),
            _ => {
                if let Some((department, message)) = running(event) {
                    self.with_bar(department, |b| b.set_message(message));
                }
            }
        }
    }
}

/// A finished department's words: `✓ success · quality 85`, `✗ failed`, `skipped`.
fn finished(status: DepartmentStatus, quality: f64) -> String {
    match status {
        DepartmentStatus::Success => format!("✓ success · quality {}", crate::text::fmt_score(quality)),
        DepartmentStatus::Failed => "✗ failed".to_string(),
        DepartmentStatus::Skipped => "skipped".to_string(),
        DepartmentStatus::Paused => "waiting for a decision".to_string(),
    }
}

/// What a running department's bar says after an event of its work.
fn running(event: &Event) -> Option<(&str, String)> {
    let rung = |rung: usize| match rung {
        0 => String::new(),
        r => format!(" (rung {r})"),
    };
    match event {
        Event::DelegationStart {
            department,
            agent_id,
            attempt,
            rung: r,
            ..
        } => Some((
            department,
            format!("running · {} attempt {attempt}{}", printable(agent_id), rung(*r)),
        )),
        Event::DelegationComplete {
            department,
            agent_id,
            attempt,
            rung: r,
            score,
            passed,
            ..
        } => Some((
            department,
            format!(
                "running · {} attempt {attempt}{}: {} {}",
                printable(agent_id),
                rung(*r),
                crate::text::fmt_score(*score),
                if *passed { "passed" } else { "below threshold" }
            ),
        )),
        Event::Synthesis {
            department, attempt, ..
        } => Some((department, format!("running · synthesis attempt {attempt}"))),
        Event::ToolCall {
            department,
            agent_id,
            tool,
            ..
        } => Some((
            department,
            format!("running · {} called {}", printable(agent_id), printable(tool)),
        )),
        _ => None,
    }
}

impl Observer for std::sync::Arc<Progress> {
    fn event(&self, event: &Event) {
        <Progress as Observer>::event(self, event);
    }
}

/// The line an event prints above the bars (a router's failure, a decision, a circuit, economy).
fn notice(event: &Event) -> Option<String> {
    match event {
        Event::Router { error: Some(why), .. } => {
            Some(format!("router failed, routing by keywords: {}", printable(why)))
        }
        Event::Approval {
            id, decision, reason, ..
        } => {
            let why = reason
                .as_deref()
                .map(|r| format!(": {}", printable(r)))
                .unwrap_or_default();
            Some(format!("approval {id}: {decision}{why}"))
        }
        Event::CircuitOpen { provider } => Some(format!(
            "circuit open: {} is skipped until its cooldown passes",
            printable(provider)
        )),
        Event::Economy { reason, .. } => Some(printable(reason).to_string()),
        Event::CircuitClosed { provider } => Some(format!("circuit closed: {} answers again", printable(provider))),
        _ => None,
    }
}

/// The progress of `orch test`: a bar of case runs with passed and failed so far, cost so
/// far and an ETA (runs left × the mean duration of finished runs ÷ `--jobs`), drawn on a
/// terminal; or one `case` line per finished run with `--progress jsonl`; nothing with
/// `--quiet`.
pub struct CaseRuns {
    bar: Option<ProgressBar>,
    lines: Option<ProgressLines>,
    jobs: u32,
    tally: Mutex<Tally>,
}

/// What the finished runs of a suite came to.
#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
    cost_usd: f64,
    duration_ms: u64,
}

impl CaseRuns {
    /// The progress of `len` case runs made `jobs` at a time, written as `progress` asks
    /// (bars on a terminal by default), or none when `quiet`.
    pub fn new(len: usize, quiet: bool, jobs: u32, progress: Option<ProgressFormat>) -> Self {
        let lines = (progress == Some(ProgressFormat::Jsonl) && !quiet).then(ProgressLines::new);
        let bar = (lines.is_none() && std::io::stderr().is_terminal() && !quiet).then(|| {
            let bar = ProgressBar::new(len as u64);
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} case runs {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        CaseRuns {
            bar,
            lines,
            jobs: jobs.max(1),
            tally: Mutex::new(Tally::default()),
        }
    }

    /// Counts a finished run.
    pub fn finished(&self, record: &Record) {
        if let Some(lines) = &self.lines {
            lines.case(record);
        }
        let Some(bar) = &self.bar else { return };
        let mut tally = self.tally.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match record.passed {
            true => tally.passed += 1,
            false => tally.failed += 1,
        }
        tally.cost_usd += record.cost_usd;
        tally.duration_ms += record.duration_ms;
        bar.inc(1);
        let left = bar.length().unwrap_or(0).saturating_sub(bar.position());
        bar.set_message(case_line(&tally, left, self.jobs));
    }

    /// Clears the bar before the summary is printed.
    pub fn clear(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `· 3 passed · 1 failed · $0.0123 · ETA 12s`: the words after a suite's bar.
fn case_line(tally: &Tally, left: u64, jobs: u32) -> String {
    let done = tally.passed + tally.failed;
    let eta_ms = match done {
        0 => 0,
        _ => left.saturating_mul(tally.duration_ms / done) / u64::from(jobs),
    };
    format!(
        "· {} passed · {} failed · {} · ETA {}",
        tally.passed,
        tally.failed,
        crate::text::fmt_usd(tally.cost_usd),
        seconds(eta_ms)
    )
}

/// Milliseconds as a person reads a wait: `12s`, `3m05s`.
fn seconds(ms: u64) -> String {
    let s = ms.div_ceil(1000);
    match s {
        0..=59 => format!("{s}s"),
        _ => format!("{}m{:02}s", s / 60, s % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suites_line_counts_cost_and_the_time_left() {
        let tally = Tally {
            passed: 3,
            failed: 1,
            cost_usd: 0.0123,
            duration_ms: 8_000,
        };
        // 6 runs left at 2 s each, 2 at a time: 6 s.
        assert_eq!(case_line(&tally, 6, 2), "· 3 passed · 1 failed · $0.0123 · ETA 6s");
        assert_eq!(
            case_line(&Tally::default(), 4, 1),
            "· 0 passed · 0 failed · $0.00 · ETA 0s"
        );
        assert_eq!(seconds(185_000), "3m05s");
    }

    #[test]
    fn a_departments_bar_says_its_state_attempt_and_rung() {
        assert_eq!(finished(DepartmentStatus::Success, 85.0), "✓ success · quality 85");
        assert_eq!(finished(DepartmentStatus::Failed, 0.0), "✗ failed");
        assert_eq!(finished(DepartmentStatus::Skipped, 0.0), "skipped");
        let start = Event::DelegationStart {
            department: "d".into(),
            agent_id: "writer".into(),
            attempt: 2,
            task_index: 0,
            total_tasks: 1,
            variant: None,
            rung: 1,
        };
        assert_eq!(
            running(&start),
            Some(("d", "running · writer attempt 2 (rung 1)".to_string()))
        );
    }

    #[test]
    fn the_run_line_counts_calls_tokens_and_cost_against_the_cap() {
        let progress = Progress::stderr(0.5, 60.0);
        progress.call(1_200, 0.0123);
        progress.call(34, 0.0);
        assert_eq!(progress.run.message(), "2 calls · 1234 tokens · $0.0123 of $0.5000");
        let uncapped = Progress::stderr(0.0, 0.0);
        assert_eq!(uncapped.run.message(), "0 calls · 0 tokens · $0.00");
    }
}
