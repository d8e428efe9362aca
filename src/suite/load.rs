//! The suites of one `orch test`, read and checked against the config each runs on; every
//! problem of every suite is gathered before anything runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::file::Unchecked;
use super::outputs::{self, FileClash};
use super::Suite;
use crate::config::{self, locate_root, Config, ConfigError, Diagnostic, RatesError};

/// The suites, the config root of each, and each root's config, loaded once.
pub struct Loaded {
    /// The checked suites, in the order they were named.
    pub suites: Vec<Suite>,
    /// The config root of each suite (same index).
    pub roots: Vec<PathBuf>,
    /// Each root's config.
    pub configs: HashMap<PathBuf, Arc<Config>>,
}

/// Why the suites cannot run: the errors found so far (to print first), then the one message.
pub struct Refused {
    /// Every error of every suite read before the refusal.
    pub problems: Vec<Diagnostic>,
    /// The `error:` line.
    pub message: LoadError,
}

/// Why suites cannot be loaded: the `error:` line after their problems.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Two suite files of one name.
    #[error(transparent)]
    Clash(#[from] FileClash),
    /// A config a suite runs on does not load.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Its success-rates file cannot be used.
    #[error(transparent)]
    Rates(#[from] RatesError),
    /// The suites have errors (printed before).
    #[error("the suite has {} (nothing ran)", crate::text::count(*.errors, "error"))]
    Problems {
        /// How many.
        errors: usize,
    },
}

/// Reads every suite and the config each runs on (`config`: the `--config` flag;
/// `success_rates`: the `--success-rates` flag, over each config's `routing.successRates`). A
/// config that does not load stops at once; a suite's own errors are gathered and refuse them all.
pub fn load(paths: &[PathBuf], config: Option<&Path>, success_rates: Option<&Path>) -> Result<Loaded, Refused> {
    let refuse = |problems, message| Refused { problems, message };
    let names = outputs::distinct_names(paths).map_err(|m| refuse(Vec::new(), m.into()))?;
    let mut loaded = Loaded {
        suites: Vec::new(),
        roots: Vec::new(),
        configs: HashMap::new(),
    };
    let mut problems = Vec::new();
    for path in &names {
        // A file that does not decode is said first: it needs no config to be wrong.
        let unchecked = match Unchecked::read(path) {
            Ok(unchecked) => unchecked,
            Err(diags) => {
                problems.extend(diags.into_iter().filter(Diagnostic::is_error));
                continue;
            }
        };
        let root = root_of(Some(&unchecked), config);
        let config = match config_of(&mut loaded.configs, &root, success_rates) {
            Ok(config) => config,
            Err(message) => return Err(refuse(problems, message)),
        };
        match unchecked.check(&config) {
            Ok(suite) => {
                loaded.suites.push(suite);
                loaded.roots.push(root);
            }
            Err(diags) => problems.extend(diags.into_iter().filter(Diagnostic::is_error)),
        }
    }
    if !problems.is_empty() {
        let message = LoadError::Problems { errors: problems.len() };
        return Err(refuse(problems, message));
    }
    Ok(loaded)
}

/// The config at `root`, loaded the first time a suite names it, its specialists ranked by
/// learned rates when there are some.
fn config_of(
    configs: &mut HashMap<PathBuf, Arc<Config>>,
    root: &Path,
    success_rates: Option<&Path>,
) -> Result<Arc<Config>, LoadError> {
    if let Some(config) = configs.get(root) {
        return Ok(config.clone());
    }
    let (mut config, _) = config::load(root)?;
    config::learn_success_rates(&mut config, success_rates)?;
    Ok(configs.entry(root.to_path_buf()).or_insert(Arc::new(config)).clone())
}

/// The config root of a suite: `--config`, else the suite's own `config`, else
/// `ORCH_CONFIG` or the current directory.
pub fn root_of(suite: Option<&Unchecked>, flag: Option<&Path>) -> PathBuf {
    if flag.is_some() {
        return locate_root(flag);
    }
    suite.and_then(Unchecked::config).unwrap_or_else(|| locate_root(None))
}
