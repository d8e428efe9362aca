//! The options of a journaled run, as its `run` line keeps them, read back into the
//! options of the run it began (what `orch resume` runs again), each checked by the rule
//! the command line checks its flag by.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::options::{self, ReplyOptions, RequestOptions, RunOptions, VariantOptions};
use crate::plan::SpecialistMode;

/// Every option of `run` that shapes what the run does, as the `run` line keeps it; paths
/// absolute, so a resume from another directory reads the same files. Output options
/// (format, events, recording, traces, quiet) and approvals are the resume's own.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JournaledRun {
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

/// An option of a `run` line that the command line would refuse as a flag, in the words
/// the command line refuses it in.
#[derive(Debug, thiserror::Error)]
#[error("invalid value '{value}' for '--{flag}'{why}")]
pub struct RefusedOption {
    value: String,
    flag: &'static str,
    why: String,
}

/// A path made absolute against the current directory (as it is, when that fails).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `value` checked by `rule`, refused as the flag `flag` would be.
fn checked<T, V: ToString>(
    value: Option<V>,
    flag: &'static str,
    rule: impl Fn(&V) -> Result<T, String>,
) -> Result<Option<T>, RefusedOption> {
    let Some(value) = value else { return Ok(None) };
    rule(&value).map(Some).map_err(|why| RefusedOption {
        value: value.to_string(),
        flag,
        why: format!(": {why}"),
    })
}

impl JournaledRun {
    /// The options of `run` to keep.
    pub fn of(run: &RunOptions) -> Self {
        let (plan, replies) = (&run.plan, &run.replies);
        JournaledRun {
            departments: plan.departments.clone(),
            specialists: plan.specialists.to_string(),
            success_rates: plan.success_rates.as_deref().map(absolute),
            provider: replies.provider.clone(),
            model: replies.model.clone(),
            replay: replies.replay.as_deref().map(absolute),
            cache: replies.cache.as_deref().map(absolute),
            seed: replies.seed,
            min_quality: run.min_quality,
            max_calls: run.max_calls,
            deadline: run.deadline,
            concurrency: run.concurrency,
            assign: plan.variants.assign.clone(),
            variants: plan.variants.forced.clone(),
            session: run.session.as_deref().map(absolute),
        }
    }

    /// The options of the run that wrote these, on the config at `root`, writing its journal
    /// to `journal`; no output option is set (the resume sets its own). Each option is
    /// checked as the command line checks its flag, and refused in its words.
    pub fn into_options(self, request: String, root: PathBuf, journal: PathBuf) -> Result<RunOptions, RefusedOption> {
        let specialists = self.specialists()?;
        let min_quality = checked(self.min_quality, "min-quality <N>", |q| {
            options::quality(&q.to_string())
        })?;
        let max_calls = checked(self.max_calls.map(i64::from), "max-calls <N>", |n| {
            options::within(*n, &options::MAX_CALLS)
        })?;
        let deadline = checked(self.deadline, "deadline <SECONDS>", |d| {
            options::deadline(&d.to_string())
        })?;
        let concurrency = checked(self.concurrency.map(i64::from), "concurrency <N>", |n| {
            options::within(*n, &options::CONCURRENCY)
        })?;
        Ok(RunOptions {
            replies: ReplyOptions {
                provider: self.provider,
                model: self.model,
                replay: self.replay,
                cache: self.cache,
                seed: self.seed,
                ..ReplyOptions::default()
            },
            plan: RequestOptions {
                prompt: request,
                config: Some(root),
                departments: self.departments,
                specialists,
                success_rates: self.success_rates,
                variants: VariantOptions {
                    assign: self.assign,
                    forced: self.variants,
                },
                previous: None,
            },
            min_quality,
            max_calls,
            deadline,
            concurrency,
            journal: Some(journal),
            session: self.session,
            ..RunOptions::default()
        })
    }

    /// The specialist mode kept (empty: the default), or the command line's refusal of it.
    fn specialists(&self) -> Result<SpecialistMode, RefusedOption> {
        if self.specialists.is_empty() {
            return Ok(SpecialistMode::default());
        }
        self.specialists.parse().map_err(|_| RefusedOption {
            value: self.specialists.clone(),
            flag: "specialists <SPECIALISTS>",
            why: "; [possible values: auto, always, never]".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> RunOptions {
        RunOptions {
            replies: ReplyOptions {
                provider: Some("mock".into()),
                model: Some("m".into()),
                cache: Some("c.jsonl".into()),
                seed: 7,
                ..ReplyOptions::default()
            },
            plan: RequestOptions {
                prompt: "Aladdin".into(),
                departments: vec!["story".into()],
                specialists: SpecialistMode::Always,
                ..RequestOptions::default()
            },
            min_quality: Some(50.0),
            max_calls: Some(9),
            deadline: Some(30.0),
            concurrency: Some(2),
            session: Some("talk.jsonl".into()),
            ..RunOptions::default()
        }
    }

    #[test]
    fn the_options_of_a_run_come_back_from_its_run_line() {
        let kept = JournaledRun::of(&options());
        assert!(kept
            .cache
            .as_ref()
            .is_some_and(|c| c.is_absolute() && c.ends_with("c.jsonl")));
        assert!(kept
            .session
            .as_ref()
            .is_some_and(|s| s.is_absolute() && s.ends_with("talk.jsonl")));
        let written = serde_json::to_value(&kept).unwrap();
        assert_eq!(written["specialists"], "always");
        assert_eq!(written["maxCalls"], 9);
        let read: JournaledRun = serde_json::from_value(written).unwrap();
        assert_eq!(read, kept);
        let back = read.into_options("Aladdin".into(), "/c".into(), "j".into()).unwrap();
        assert_eq!(JournaledRun::of(&back), kept);
        assert_eq!(back.plan.config.as_deref(), Some(Path::new("/c")));
        assert_eq!(back.journal.as_deref(), Some(Path::new("j")));
    }

    #[test]
    fn a_kept_option_out_of_bounds_is_refused_in_the_flags_words() {
        let mut kept = JournaledRun::of(&options());
        kept.concurrency = Some(2000);
        let e = kept.into_options("A".into(), "/c".into(), "j".into()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value '2000' for '--concurrency <N>': 2000 is not in 1..=1024"
        );
    }
}
