//! Progress bars on stderr while a run is under way (indicatif), fed by engine events, and
//! the one bar of `orch test`, fed by finished case runs. A server's words and every id are
//! shown escaped ([`printable`]), as on every human output.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::report::{Event, Observer};
use crate::suite::Record;
use crate::text::printable;

/// One bar per department, counting specialist attempts as they happen.
pub struct Progress {
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl Progress {
    /// Bars drawn on stderr.
    pub fn stderr() -> Self {
        Progress {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            bars: Mutex::new(HashMap::new()),
        }
    }

    /// A department's bar, from its start.
    fn start(&self, department: &str, specialists: usize) {
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix:.bold} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_prefix(printable(department).into_owned());
        bar.set_message(if specialists == 0 {
            "head answering".to_string()
        } else {
            format!("{specialists} specialists")
        });
        bar.enable_steady_tick(Duration::from_millis(100));
        if let Ok(mut bars) = self.bars.lock() {
            bars.insert(department.to_string(), bar);
        }
    }

    /// Leaves nothing behind at the run's end: the report follows on stdout.
    fn clear(&self) {
        if let Ok(mut bars) = self.bars.lock() {
            for (_, bar) in bars.drain() {
                bar.finish_and_clear();
            }
        }
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
            Event::DepartmentStart {
                department,
                specialists,
            } => self.start(department, *specialists),
            Event::DelegationStart {
                department,
                agent_id,
                attempt,
                ..
            } => self.with_bar(department, |b| {
                b.set_message(format!("{} attempt {attempt}", printable(agent_id)))
            }),
            Event::DelegationComplete {
                department,
                agent_id,
                attempt,
                score,
                passed,
                ..
            } => self.with_bar(department, |b| {
                b.set_message(format!(
                    "{} attempt {attempt}: {} {}",
                    printable(agent_id),
                    crate::text::fmt_score(*score),
                    if *passed { "passed" } else { "below threshold" }
                ))
            }),
            Event::Synthesis {
                department, attempt, ..
            } => self.with_bar(department, |b| b.set_message(format!("synthesis attempt {attempt}"))),
            Event::ToolCall {
                department,
                agent_id,
                tool,
                ..
            } => self.with_bar(department, |b| {
                b.set_message(format!("{} called {}", printable(agent_id), printable(tool)))
            }),
            Event::DepartmentComplete {
                department,
                status,
                quality_score,
                ..
            } => self.with_bar(department, |b| {
                b.finish_with_message(format!("{status} · quality {}", crate::text::fmt_score(*quality_score)))
            }),
            Event::RunComplete { .. } => self.clear(),
            _ => {}
        }
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

/// The bar of `orch test`: case runs made of those to make, drawn on a terminal unless
/// `--quiet`.
pub struct CaseRuns(Option<ProgressBar>);

impl CaseRuns {
    /// A bar of `len` case runs, or none when stderr is not a terminal or `quiet`.
    pub fn new(len: usize, quiet: bool) -> Self {
        CaseRuns((std::io::stderr().is_terminal() && !quiet).then(|| {
            let bar = ProgressBar::new(len as u64);
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} case runs {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        }))
    }

    /// Counts a finished run, marked `(some failed)` when it failed.
    pub fn finished(&self, record: &Record) {
        if let Some(bar) = &self.0 {
            bar.inc(1);
            bar.set_message(if record.passed { "" } else { "(some failed)" });
        }
    }

    /// Clears the bar before the summary is printed.
    pub fn clear(self) {
        if let Some(bar) = self.0 {
            bar.finish_and_clear();
        }
    }
}
