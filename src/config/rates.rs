//! Learned success rates: the file `orch stats --success-rates` writes and `run`,
//! `explain` and `test` read (`--success-rates FILE`, else `routing.successRates`). One type
//! for both sides, so the writer and the reader cannot disagree on the format.
//!
//! A specialist named in the file ranks by its learned rate instead of its configured
//! `successRate`. Ids the config lacks, and agents that are not specialists, are
//! ignored: one file learned from many suites serves every config that shares some agents.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::diagnostic::Diagnostic;
use super::model::Config;
use super::node::At;
use super::types::{Role, SuccessRateSource};
use crate::read::{io_reason, read_bounded, Unread};

/// The largest success-rates file read (a line per agent: millions of agents fit).
const MAX_RATES_BYTES: u64 = 256 << 20;

/// Why a success-rates file cannot be used (`--success-rates`, `routing.successRates`).
#[derive(Debug, thiserror::Error)]
pub enum RatesError {
    /// Nothing at the path.
    #[error("cannot read success rates {shown}: no such file or directory")]
    Missing {
        /// The path as messages name it.
        shown: String,
    },
    /// Something other than a regular file at the path.
    #[error("success rates {shown} is {what}, not a file")]
    NotFile {
        /// The path as messages name it.
        shown: String,
        /// What is there instead.
        what: &'static str,
    },
    /// A file over the cap.
    #[error("success rates {shown} is larger than {} MiB", MAX_RATES_BYTES >> 20)]
    TooLarge {
        /// The path as messages name it.
        shown: String,
    },
    /// The file could not be read.
    #[error("cannot read success rates {shown}: {}", io_reason(.io))]
    Unreadable {
        /// The path as messages name it.
        shown: String,
        /// Why.
        io: std::io::Error,
    },
    /// The file is not UTF-8.
    #[error("success rates {shown} is not UTF-8 text")]
    NotUtf8 {
        /// The path as messages name it.
        shown: String,
    },
    /// The text is not a success-rates file: where, and why.
    #[error(
        "{shown}:{}:{}: not a success-rates file (`orch stats --success-rates`): {}",
        .json.line(),
        .json.column().max(1),
        crate::text::json_error_words(.json)
    )]
    Malformed {
        /// The file as messages name it.
        shown: String,
        /// Why it does not decode.
        json: serde_json::Error,
    },
    /// A rate outside 0..1.
    #[error("{shown}: the successRate of `{id}` is {rate}; a rate is between 0 and 1")]
    OutOfRange {
        /// The file as messages name it.
        shown: String,
        /// The agent.
        id: String,
        /// Its rate.
        rate: f64,
    },
}

/// A success-rates file: `{"agents": {ID: {"successRate", "runs"}}}`, ids in sorted order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuccessRates {
    /// Each specialist's learned rate, by agent id.
    pub agents: BTreeMap<String, LearnedRate>,
}

/// One specialist's learned rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LearnedRate {
    /// (passes + 1) / (runs + 2): Laplace's rule, so one lucky run is not 100%.
    pub success_rate: f64,
    /// The final results it was learned from.
    pub runs: u64,
    /// Its variants against control, control included; absent without any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variants: BTreeMap<String, super::variants::VariantRate>,
}

impl LearnedRate {
    /// The Laplace-smoothed rate of `passes` passing final results out of `runs`.
    pub fn of(passes: u64, runs: u64) -> Self {
        LearnedRate {
            success_rate: (passes as f64 + 1.0) / (runs as f64 + 2.0),
            runs,
            variants: BTreeMap::new(),
        }
    }
}

impl SuccessRates {
    /// Parses a success-rates file's text; `shown` names it in errors, which say where.
    pub fn parse(text: &str, shown: &str) -> Result<Self, RatesError> {
        let rates: SuccessRates = serde_json::from_str(text).map_err(|json| RatesError::Malformed {
            shown: shown.to_string(),
            json,
        })?;
        for (id, rate) in &rates.agents {
            if !(0.0..=1.0).contains(&rate.success_rate) {
                return Err(RatesError::OutOfRange {
                    shown: shown.to_string(),
                    id: id.clone(),
                    rate: rate.success_rate,
                });
            }
        }
        Ok(rates)
    }

    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<Self, RatesError> {
        let shown = crate::read::display(path);
        let bytes = read_bounded(path, MAX_RATES_BYTES).map_err(|e| {
            let shown = shown.clone();
            match e {
                Unread::Missing => RatesError::Missing { shown },
                Unread::NotFile(what) => RatesError::NotFile { shown, what },
                Unread::TooLarge(_) => RatesError::TooLarge { shown },
                Unread::Io(io) => RatesError::Unreadable { shown, io },
            }
        })?;
        let text = String::from_utf8(bytes).map_err(|_| RatesError::NotUtf8 { shown: shown.clone() })?;
        SuccessRates::parse(&text, &shown)
    }
}

/// The success-rates file a command uses: `flag` (`--success-rates`, relative to the current
/// directory) wins over `routing.successRates` (relative to the config root); none: `None`.
pub fn success_rates_file(config: &Config, flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(flag) = flag {
        return Some(flag.to_path_buf());
    }
    let written = &config.settings.routing.success_rates;
    if written.is_empty() {
        return None;
    }
    let dir = match config.root.is_dir() {
        true => config.root.as_path(),
        false => config.root.parent().unwrap_or(Path::new("")),
    };
    Some(dir.join(written))
}

/// Reads the success-rates file of [`success_rates_file`], when there is one, and ranks each
/// specialist it names by its learned rate. A missing or malformed file is an error (the
/// command then exits 2, nothing called).
pub fn learn_success_rates(config: &mut Config, flag: Option<&Path>) -> Result<(), RatesError> {
    let Some(path) = success_rates_file(config, flag) else {
        return Ok(());
    };
    let rates = SuccessRates::read(&path)?;
    apply(config, &rates);
    Ok(())
}

/// `orch validate`'s look at `routing.successRates` (`written`, in the settings file `file`):
/// a warning at the key when the file is missing or malformed. A warning, not an error: a
/// command given `--success-rates` never reads it (run, explain and test refuse to start
/// without it otherwise, and `--strict` makes it an error).
pub fn check(file: &str, written: &At<String>) -> Option<Diagnostic> {
    if written.value.is_empty() {
        return None;
    }
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    let problem = SuccessRates::read(&dir.join(&written.value)).err()?;
    Some(Diagnostic::warning(
        file,
        written.pos,
        "success-rates",
        format!("{problem}; `run`, `explain` and `test` will refuse to start without --success-rates"),
    ))
}

/// Replaces the configured rate of every specialist the file names.
fn apply(config: &mut Config, rates: &SuccessRates) {
    disable(config, rates);
    for agent in config.agents.iter_mut().filter(|a| a.role == Role::Specialist) {
        if let Some(learned) = rates.agents.get(&agent.id) {
            agent.success_rate = learned.success_rate;
            agent.success_rate_source = SuccessRateSource::Learned;
        }
    }
}

/// Marks disabled every variant a success-rates file disables.
fn disable(config: &mut Config, rates: &SuccessRates) {
    for agent in &mut config.agents {
        let Some(learned) = rates.agents.get(&agent.id) else {
            continue;
        };
        for v in &mut agent.variants {
            v.disabled = learned.variants.get(&v.name).is_some_and(|r| r.disabled);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laplace_keeps_one_run_from_being_certain() {
        assert_eq!(LearnedRate::of(0, 0).success_rate, 0.5);
        assert_eq!(LearnedRate::of(1, 1).success_rate, 2.0 / 3.0);
        assert_eq!(LearnedRate::of(3, 4).success_rate, 4.0 / 6.0);
        assert_eq!(LearnedRate::of(0, 8).success_rate, 0.1);
    }

    #[test]
    fn a_malformed_file_says_where() {
        let err = SuccessRates::parse("{\"agents\": {\n  \"a\": {\"successRate\": \"high\"}}}", "r.json")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("r.json:2:29: not a success-rates file (`orch stats --success-rates`): invalid type: string \"high\", expected f64"),
            "{err}"
        );
        let err = SuccessRates::parse("{\"runs\": 3, \"agents\": {}}", "r.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `runs`"), "{err}");
        assert_eq!(
            SuccessRates::parse("{\"agents\": {\"a\": {\"successRate\": 1.5, \"runs\": 2}}}", "r.json")
                .unwrap_err()
                .to_string(),
            "r.json: the successRate of `a` is 1.5; a rate is between 0 and 1"
        );
    }

    #[test]
    fn only_specialists_the_file_names_learn() {
        let mut config = crate::config::load_str(
            "departments:\n  - { id: d, keywords: [x], head: h }\nagents:\n  - { id: h, role: head, department: d }\n  - { id: s1, role: specialist, department: d, successRate: 0.9 }\n  - { id: s2, role: specialist, department: d, successRate: 0.2 }\n",
            false,
        )
        .unwrap();
        let text = "{\"agents\": {\"s2\": {\"successRate\": 0.75, \"runs\": 2}, \"h\": {\"successRate\": 0.1, \"runs\": 8}, \"gone\": {\"successRate\": 0.1, \"runs\": 8}}}";
        apply(&mut config, &SuccessRates::parse(text, "r.json").unwrap());
        let rate = |id: &str| {
            let a = config.agent(id).unwrap();
            (a.success_rate, a.success_rate_source)
        };
        assert_eq!(rate("s1"), (0.9, SuccessRateSource::Config));
        assert_eq!(rate("s2"), (0.75, SuccessRateSource::Learned));
        assert_eq!(rate("h"), (0.5, SuccessRateSource::Config));
    }
}
