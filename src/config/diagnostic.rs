//! One problem found in a config, with the file, line and column it points at.

use serde::Serialize;

use super::node::Pos;
use crate::text::printable;

/// How bad a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The config cannot be used.
    Error,
    /// The config works but probably not as meant; `--strict` makes it an error.
    Warning,
}

/// One problem in a config: `file:line:column: severity: message`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file, as the user would type it.
    pub file: String,
    /// 1-based line (1 when the problem is about the file as a whole).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// Error or warning.
    pub severity: Severity,
    /// A stable kebab-case code, e.g. `unknown-key`, for scripts.
    pub code: &'static str,
    /// What is wrong and, where possible, how to fix it.
    pub message: String,
}

impl Diagnostic {
    /// True when there is no config to check at all (no root, or nothing orch reads in
    /// it): not a place in a file, so commands say it as one `error:` line.
    pub fn is_missing_config(&self) -> bool {
        self.code == "no-config" || self.code == "no-root"
    }

    /// An error at a position.
    pub fn error(file: &str, pos: Pos, code: &'static str, message: impl Into<String>) -> Self {
        Self::new(file, pos, Severity::Error, code, message)
    }

    /// A warning at a position.
    pub fn warning(file: &str, pos: Pos, code: &'static str, message: impl Into<String>) -> Self {
        Self::new(file, pos, Severity::Warning, code, message)
    }

    fn new(file: &str, pos: Pos, severity: Severity, code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.to_string(),
            line: pos.line.max(1),
            column: pos.column.max(1),
            severity,
            code,
            message: message.into(),
        }
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Shown on one line whatever the file name or message holds (control characters escaped).
impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{}:{}:{}: {}: {}",
            printable(&self.file),
            self.line,
            self.column,
            sev,
            printable(&self.message)
        )
    }
}

/// Names longer than this (in characters) get no suggestion, nor are suggested: no one
/// mistypes a name that long, and comparing costs the product of the two lengths.
const SUGGESTED_CHARS: usize = 256;

/// Whether `a` and `b` are near enough in length to be a typo of each other: each at most
/// three times the other and a few more, and neither past [`SUGGESTED_CHARS`].
fn comparable(a: usize, b: usize) -> bool {
    let (short, long) = (a.min(b), a.max(b));
    long <= SUGGESTED_CHARS && long <= 3 * short + 3
}

/// The closest of `candidates` to `word`, when it is close enough to be a likely typo.
/// Only candidates of a [`comparable`] length are compared, so the work stays small.
fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let length = word.chars().take(SUGGESTED_CHARS + 1).count();
    if length > SUGGESTED_CHARS {
        return None;
    }
    let word = word.to_lowercase();
    candidates
        .into_iter()
        .filter(|c| comparable(length, c.chars().take(SUGGESTED_CHARS + 1).count()))
        .map(|c| {
            let c_lower = c.to_lowercase();
            // A word one typo away counts as close however short it is (`rn` for `run`).
            let typo = word.chars().count() > 1 && strsim::osa_distance(&word, &c_lower) == 1;
            let score = strsim::jaro_winkler(&word, &c_lower);
            (if typo { score.max(0.9) } else { score }, c)
        })
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// ` (did you mean `x`?)` or nothing.
pub fn suggestion<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(word, candidates)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("charactr", ["story", "character"]), Some("character"));
        assert_eq!(
            did_you_mean("passingTreshold", ["passingThreshold", "priority"]),
            Some("passingThreshold")
        );
        assert_eq!(did_you_mean("zzz", ["story", "character"]), None);
        // One typo away from a short name.
        assert_eq!(did_you_mean("rn", ["run", "init"]), Some("run"));
        assert_eq!(did_you_mean("tset", ["test", "stats"]), Some("test"));
        assert_eq!(did_you_mean("x", ["a"]), None);
        let long = "files".repeat(60);
        assert_eq!(did_you_mean(&format!("{long}x"), [long.as_str()]), None);
        assert_eq!(did_you_mean("fil", ["files_of_the_whole_team"]), None);
    }

    #[test]
    fn renders_as_file_line_column() {
        let d = Diagnostic::error("a.yaml", Pos { line: 3, column: 7 }, "x", "bad");
        assert_eq!(d.to_string(), "a.yaml:3:7: error: bad");
    }
}
