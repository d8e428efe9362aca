//! The options of a journaled run, as its `run` line keeps them, read back into
//! the flags of the run it began (what `orch resume` runs again).

use std::path::{Path, PathBuf};

use clap::Parser;
use serde::{Deserialize, Serialize};

use crate::cli::{PlanArgs, ReplyArgs, RunArgs};

/// Every option of `run` that shapes what the run does, as the `run` line keeps it; paths
/// absolute, so a resume from another directory reads the same files. Output flags
/// (`--format`, `--events`, `--record`, `--otlp`, `--quiet`) and `--approvals` are the
/// resume's own.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RunOptions {
    departments: Vec<String>,
    specialists: String,
    success_rates: Option<PathBuf>,
    provider: Option<String>,
    model: Option<String>,
    replay: Option<PathBuf>,
    cache: Option<PathBuf>,
    seed: u64,
    min_quality: Option<f64>,
    max_calls: Option<u32>,
    deadline: Option<f64>,
    concurrency: Option<u32>,
    assign: Option<String>,
    variants: Vec<(String, String)>,
    /// `--session`: the conversation a resume continues.
    session: Option<PathBuf>,
}

/// An option of a `run` line that the command line would refuse as a flag: the parser's
/// words for it, in one line.
#[derive(Debug, thiserror::Error)]
#[error("{}", parser_words(.0))]
pub struct RefusedOption(clap::Error);

/// A path made absolute against the current directory (as it is, when that fails).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

impl RunOptions {
    /// The options of `args`.
    pub fn of(args: &RunArgs) -> Self {
        let (plan, replies) = (&args.plan, &args.replies);
        RunOptions {
            departments: plan.departments.clone(),
            specialists: plan.specialists.to_string(),
            success_rates: plan.success_rates.as_deref().map(absolute),
            provider: replies.provider.clone(),
            model: replies.model.clone(),
            replay: replies.replay.as_deref().map(absolute),
            cache: replies.cache.as_deref().map(absolute),
            seed: replies.seed,
            min_quality: args.min_quality,
            max_calls: args.max_calls,
            deadline: args.deadline,
            concurrency: args.concurrency,
            assign: plan.variants.assign.clone(),
            variants: plan.variants.forced.clone(),
            session: args.session.as_deref().map(absolute),
        }
    }

    /// The flags of the run that wrote these options, on the config at `root`, writing its
    /// journal to `journal`; no output flag is set (the resume sets its own). Each option
    /// is checked as the command line checks its flag, and refused in its words.
    pub fn into_args(self, request: String, root: PathBuf, journal: PathBuf) -> Result<RunArgs, RefusedOption> {
        let checked = self.checked()?;
        Ok(RunArgs {
            replies: ReplyArgs {
                provider: self.provider,
                model: self.model,
                record: None,
                replay: self.replay,
                cache: self.cache,
                otlp: None,
                otlp_content: false,
                seed: self.seed,
            },
            plan: PlanArgs {
                prompt: request,
                config: Some(root),
                departments: self.departments,
                specialists: checked.plan.specialists,
                success_rates: self.success_rates,
                variants: crate::cli::VariantArgs {
                    assign: self.assign,
                    forced: self.variants,
                },
                previous: None,
            },
            format: None,
            min_quality: checked.min_quality,
            max_calls: checked.max_calls,
            deadline: checked.deadline,
            concurrency: checked.concurrency,
            events: None,
            approvals: None,
            journal: Some(journal),
            quiet: false,
            session: self.session,
            answers: Vec::new(),
            stream: false,
            progress: None,
        })
    }

    /// The options the command line checks, given to its parser as `orch run` flags: the
    /// flags they make, or the parser's words for the first it refuses.
    fn checked(&self) -> Result<RunArgs, RefusedOption> {
        let mut line = vec!["orch".to_string(), "run".into(), "x".into()];
        let mut flag = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                line.push(format!("--{name}={value}"));
            }
        };
        flag("specialists", Some(self.specialists.clone()).filter(|s| !s.is_empty()));
        flag("min-quality", self.min_quality.map(|q| q.to_string()));
        flag("max-calls", self.max_calls.map(|n| n.to_string()));
        flag("deadline", self.deadline.map(|d| d.to_string()));
        flag("concurrency", self.concurrency.map(|n| n.to_string()));
        match crate::cli::Cli::try_parse_from(line) {
            Ok(crate::cli::Cli {
                command: crate::cli::Command::Run(args),
                ..
            }) => Ok(*args),
            Ok(_) => unreachable!("`orch run` parses as run"),
            Err(e) => Err(RefusedOption(e)),
        }
    }
}

/// A parser's error in one line, as the command line shows it (without its help pointer).
fn parser_words(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn run_args(line: &[&str]) -> RunArgs {
        match crate::cli::Cli::parse_from(line).command {
            crate::cli::Command::Run(args) => *args,
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_options_of_a_run_come_back_as_its_flags() {
        let args = run_args(&[
            "orch",
            "run",
            "Aladdin",
            "--department",
            "story",
            "--specialists",
            "always",
            "--provider",
            "mock",
            "--model",
            "m",
            "--seed",
            "7",
            "--min-quality",
            "50",
            "--max-calls",
            "9",
            "--deadline",
            "30",
            "--concurrency",
            "2",
            "--cache",
            "c.jsonl",
            "--session",
            "talk.jsonl",
        ]);
        let options = RunOptions::of(&args);
        assert!(options
            .cache
            .as_ref()
            .is_some_and(|c| c.is_absolute() && c.ends_with("c.jsonl")));
        let written = serde_json::to_value(&options).unwrap();
        assert_eq!(written["specialists"], "always");
        assert_eq!(written["maxCalls"], 9);
        assert!(options
            .session
            .as_ref()
            .is_some_and(|s| s.is_absolute() && s.ends_with("talk.jsonl")));
        let read: RunOptions = serde_json::from_value(written).unwrap();
        assert_eq!(read, options);
        let back = read.into_args("Aladdin".into(), "/c".into(), "j".into()).unwrap();
        assert_eq!(RunOptions::of(&back), options);
        assert_eq!(back.plan.config.as_deref(), Some(Path::new("/c")));
        assert_eq!(back.journal.as_deref(), Some(Path::new("j")));
    }
}
