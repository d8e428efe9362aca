//! A suite file as written and as used: cases with prompts and expectations, declared one
//! line per key like the config, decoded with the same located diagnostics, and checked
//! against the config it runs on (department ids, regexes, duplicate case ids).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::Regex;
use strum::{EnumString, VariantNames};

use super::dataset::Datasets;
use super::judged::AnswerSchema;
use super::judged_wire::Rubric;
use super::tool_expect::ToolExpect;
use crate::config::{
    parse_document, section, At, Config, Decoder, Diagnostic, FromNode, KeySpec, Node, Resolve, Rule, SchemaSource,
};
use crate::plan::SpecialistMode;

/// The status a case expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, EnumString, VariantNames, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum Status {
    /// Every department succeeded.
    Success,
    /// Some failed or were skipped.
    Partial,
    /// None succeeded.
    Failed,
    /// Items wait for a decision.
    Paused,
    /// The run asked before it guessed.
    #[strum(serialize = "needs-input")]
    NeedsInput,
}

impl FromNode for SpecialistMode {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.choice(node, key, what)
    }
}

impl FromNode for Status {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.choice(node, key, what)
    }
}

impl Resolve for SpecialistMode {
    type To = SpecialistMode;
    fn resolve(self) -> SpecialistMode {
        self
    }
}

section! {
    /// A suite's `defaults` as written.
    DefaultsWire => /// What every case gets unless it says otherwise.
    Defaults, "`defaults`" {
        /// Whether heads use specialists: `auto`, `always` or `never`.
        specialists "specialists": At<SpecialistMode> => SpecialistMode = SpecialistMode::Auto,
            Rule::Choice(SpecialistMode::VARIANTS);
        /// Runs of each case (`--repeat` overrides it).
        repeat "repeat": u32 => u32 = 1, Rule::count(1, 1000);
        /// The agent (role `judge`) that judges `rubric` and `reference` (else `grading.judge`).
        judge "judge": At<String> => String, Rule::Reference;
    }
}

section! {
    /// A case's `expect` as written: every key optional, all must hold.
    ExpectWire, "`expect`" {
        /// The run's status: `success`, `partial` or `failed`.
        status "status": At<Status>, Rule::Choice(Status::VARIANTS);
        /// The primary department.
        primary "primary": At<String>, Rule::Reference;
        /// Exactly these departments ran.
        departments "departments": Vec<At<String>>, Rule::Strings;
        /// At least these departments ran.
        include "include": Vec<At<String>>, Rule::Strings;
        /// None of these departments ran.
        exclude "exclude": Vec<At<String>>, Rule::Strings;
        /// `overallQuality` is at least this.
        min_quality "minQuality": f64, Rule::between(0.0, 100.0);
        /// true: every department that ran was graded (none stands on its head's fixed score).
        graded "graded": bool, Rule::Bool;
        /// `usage.calls` is at most this.
        max_calls "maxCalls": u64, Rule::count(0, i64::MAX);
        /// `usage.costUsd` is at most this.
        max_cost_usd "maxCostUsd": f64, Rule::between_noted(0.0, 1e9, " (USD)");
        /// Each of these tools ran at least once, ok or not (`tool` or `server.tool`).
        tools_called "toolsCalled": Vec<At<String>>, Rule::Strings;
        /// None of these tools ran (`tool` or `server.tool`).
        tools_not_called "toolsNotCalled": Vec<At<String>>, Rule::Strings;
        /// `usage.toolCalls` is at most this.
        max_tool_calls "maxToolCalls": u64, Rule::count(0, i64::MAX);
        /// Each appears in the output (case-insensitive).
        contains "contains": Vec<String>, Rule::Strings;
        /// None of these appears in the output (case-insensitive, as `contains` matches).
        not_contains "notContains": Vec<String>, Rule::Strings;
        /// Each regex matches the output (case-sensitive unless it says `(?i)`).
        matches "matches": Vec<At<String>>, Rule::Strings;
        /// `usage.escalations` is at most this (attempts that climbed a rung of a model ladder).
        max_escalations "maxEscalations": u64, Rule::count(0, i64::MAX);
        /// Whether the run went into economy (`limits.economyAt`).
        economy "economy": bool, Rule::Bool;
        /// Whether the run stopped for input at least once.
        asks "asks": bool, Rule::Bool;
        /// The run's urgency is within `min` and `max`.
        urgency "urgency": UrgencyWire, Rule::Section(UrgencyWire::KEYS);
        /// Criteria the judge passes or fails on the answer: one, or a list of 1 to 20.
        rubric "rubric": At<Rubric>, Rule::Chain;
        /// What the answer must agree with, as the judge reads it (at most 10,000 characters).
        reference "reference": At<String>, Rule::Text;
        /// A JSON Schema the answer's first JSON value must match (inline, or a file relative
        /// to the suite file); checked without a call.
        answer_schema "answerSchema": At<SchemaSource>, Rule::Schema;
    }
}

section! {
    /// An `expect.urgency` as written.
    UrgencyWire, "`urgency`" {
        /// The urgency is at least this.
        min "min": f64, Rule::between(0.0, 1.0);
        /// The urgency is at most this.
        max "max": f64, Rule::between(0.0, 1.0);
    }
}

section! {
    /// One case as written.
    CaseWire, "a case" {
        /// Unique in the suite: letters, digits, `_`, `.` and `-`.
        id "id": At<String>, Rule::Text;
        /// The request.
        prompt "prompt": At<String>, Rule::Text;
        /// Run exactly these departments (like `--department`).
        departments "departments": Vec<At<String>>, Rule::Strings;
        /// Whether heads use specialists (like `--specialists`).
        specialists "specialists": At<SpecialistMode>, Rule::Choice(SpecialistMode::VARIANTS);
        /// What the run must show.
        expect "expect": ExpectWire, Rule::Section(ExpectWire::KEYS);
        /// Variants forced for this case: agent to variant name (`--variant` wins).
        variants "variants": crate::config::Pairs, Rule::Assignments;
        /// Answers to the run's questions, in order.
        answers "answers": Vec<String>, Rule::Strings;
        /// The agent (role `judge`) that judges `rubric` and `reference` (else the suite's
        /// `defaults.judge`, else `grading.judge`).
        judge "judge": At<String>, Rule::Reference;
        /// Labels `--tag` and `--skip-tag` pick cases by.
        tags "tags": Vec<String>, Rule::Strings;
    }
}

impl FromNode for Vec<CaseWire> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.list(node, "`cases`", "a list", |d, item| {
            CaseWire::from_node(d, item, key, what)
        })
    }
}

section! {
    /// A suite file as written.
    SuiteWire, "the suite file" {
        /// The config it runs on, relative to the suite file (`--config` wins).
        config "config": String, Rule::Text;
        /// What every case gets unless it says otherwise.
        defaults "defaults": DefaultsWire, Rule::Section(DefaultsWire::KEYS);
        /// The cases.
        cases "cases": Vec<CaseWire>, Rule::Definitions(CaseWire::KEYS);
        /// More cases, from files beside the suite (`.jsonl`: a JSON object a line; `.csv`: a header
        /// row, then a case a row, `expect.KEY` columns for `expect`): each row takes the keys of a case.
        dataset "dataset": Datasets, Rule::Chain;
    }
}

/// A suite's dataset rows, checked once (their count kept, not their cases) and read again a
/// row at a time each time the suite's cases are walked.
#[derive(Clone, Debug)]
pub struct DatasetCases {
    /// The suite file (datasets are relative to it).
    pub(super) path: PathBuf,
    /// The suite file as messages name it.
    pub(super) shown: String,
    /// The dataset files.
    pub(super) files: Datasets,
    /// The suite's `defaults`.
    pub(super) defaults: Defaults,
    /// The config the cases run on.
    pub(super) config: Arc<Config>,
    /// The rows the check found to be cases.
    pub rows: usize,
}

/// A suite, read and checked.
#[derive(Clone, Debug)]
pub struct Suite {
    /// The file's name without its extension (the JUnit `testsuite` and `classname`).
    pub name: String,
    /// The inline cases, in file order ([`Suite::each`] walks them and the dataset rows).
    pub cases: Vec<Arc<Case>>,
    /// Its datasets' rows, read again a row at a time whenever the cases are walked.
    pub dataset: Option<DatasetCases>,
}

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    /// Unique in the suite.
    pub id: String,
    /// The request.
    pub prompt: String,
    /// `--department` for this case (empty: routing decides).
    pub departments: Vec<String>,
    /// `--specialists` for this case.
    pub specialists: SpecialistMode,
    /// Runs (`defaults.repeat`, unless `--repeat`).
    pub repeat: u32,
    /// What the run must show.
    pub expect: Expect,
    /// The variants it forces, by agent.
    pub variants: std::collections::BTreeMap<String, String>,
    /// Answers to the run's questions, in order.
    pub answers: Vec<String>,
    /// The judge of its `rubric` and `reference`: its own, the suite's, or `grading.judge`.
    pub judge: Option<String>,
    /// Its labels, which `--tag` and `--skip-tag` pick by.
    pub tags: Vec<String>,
}

/// What a run must show; every part optional.
#[derive(Clone, Debug, Default)]
pub struct Expect {
    /// The run's status.
    pub status: Option<Status>,
    /// The primary department.
    pub primary: Option<String>,
    /// Exactly these ran.
    pub departments: Option<Vec<String>>,
    /// At least these ran.
    pub include: Vec<String>,
    /// None of these ran.
    pub exclude: Vec<String>,
    /// `overallQuality` at least.
    pub min_quality: Option<f64>,
    /// Every department that ran was graded (true), or some was not (false).
    pub graded: Option<bool>,
    /// `usage.calls` at most.
    pub max_calls: Option<u64>,
    /// `usage.costUsd` at most.
    pub max_cost_usd: Option<f64>,
    /// `toolsCalled`, `toolsNotCalled` and `maxToolCalls`.
    pub tools: ToolExpect,
    /// Substrings of the output, any case.
    pub contains: Vec<String>,
    /// Substrings the output must not hold, any case.
    pub not_contains: Vec<String>,
    /// Regexes over the output.
    pub matches: Vec<Regex>,
    /// `usage.escalations` at most.
    pub max_escalations: Option<u64>,
    /// Whether the run went into economy.
    pub economy: Option<bool>,
    /// Whether the run stopped for input.
    pub asks: Option<bool>,
    /// The urgency's bounds, `min` and `max`.
    pub urgency: (Option<f64>, Option<f64>),
    /// Criteria the judge passes or fails on the answer.
    pub rubric: Vec<String>,
    /// What the answer must agree with.
    pub reference: Option<String>,
    /// The schema the answer's JSON must match.
    pub answer_schema: Option<AnswerSchema>,
}

impl Expect {
    /// Whether a judge is asked about the answer (a `rubric` or a `reference`).
    pub fn judged(&self) -> bool {
        !self.rubric.is_empty() || self.reference.is_some()
    }
}

/// A suite file decoded, not yet checked against the config it runs on.
pub struct Unchecked {
    pub(super) path: PathBuf,
    pub(super) shown: String,
    pub(super) wire: SuiteWire,
    /// What decoding found; `check` returns its errors with its own.
    pub(super) diags: Vec<Diagnostic>,
}

impl Unchecked {
    /// Reads the suite at `path` as written, or every problem of a file that does not decode.
    pub fn read(path: &Path) -> Result<Self, Vec<Diagnostic>> {
        match read_wire(path) {
            (Some(wire), diags, shown) => Ok(Unchecked {
                path: path.to_path_buf(),
                shown,
                wire,
                diags,
            }),
            (None, diags, _) => Err(diags),
        }
    }

    /// The config the suite names, if it names one: its `config`, relative to the suite file.
    pub fn config(&self) -> Option<PathBuf> {
        let rel = self.wire.config.as_ref().filter(|c| !c.is_empty())?;
        Some(self.path.parent().unwrap_or(Path::new("")).join(rel))
    }
}

/// The suite at `path` as written, or every problem of the file (syntax and keys).
fn read_wire(path: &Path) -> (Option<SuiteWire>, Vec<Diagnostic>, String) {
    let shown = crate::read::display(path);
    let mut diags = Vec::new();
    let Some(node) = parse_document(path, &shown, &mut diags) else {
        return (None, diags, shown);
    };
    let key = KeySpec {
        name: "",
        doc: "",
        rule: Rule::Section(SuiteWire::KEYS),
    };
    let wire = SuiteWire::from_node(&mut Decoder::new(&shown, &mut diags), &node, &key, "");
    (wire, diags, shown)
}

/// A dataset row decoded as a case, by the decoder of inline cases.
pub(super) fn decode_row(d: &mut Decoder, node: &Node) -> Option<CaseWire> {
    let key = KeySpec {
        name: "",
        doc: "",
        rule: Rule::Definitions(CaseWire::KEYS),
    };
    CaseWire::from_node(d, node, &key, "")
}

/// What a case expects, from its `expect` as written, its compiled `matches` and its judged
/// parts checked.
pub(super) fn expect_of(e: ExpectWire, matches: Vec<Regex>, judged: JudgedParts) -> Expect {
    Expect {
        status: e.status.map(|s| s.value),
        primary: e.primary.map(|p| p.value),
        departments: e.departments.map(Resolve::resolve),
        include: e.include.map(Resolve::resolve).unwrap_or_default(),
        exclude: e.exclude.map(Resolve::resolve).unwrap_or_default(),
        min_quality: e.min_quality,
        graded: e.graded,
        max_calls: e.max_calls,
        max_cost_usd: e.max_cost_usd,
        tools: ToolExpect {
            called: e.tools_called.map(Resolve::resolve).unwrap_or_default(),
            not_called: e.tools_not_called.map(Resolve::resolve).unwrap_or_default(),
            max_calls: e.max_tool_calls,
        },
        contains: e.contains.unwrap_or_default(),
        not_contains: e.not_contains.unwrap_or_default(),
        matches,
        max_escalations: e.max_escalations,
        economy: e.economy,
        asks: e.asks,
        urgency: e.urgency.map_or((None, None), |u| (u.min, u.max)),
        rubric: judged.0,
        reference: judged.1,
        answer_schema: judged.2,
    }
}

/// A case's `rubric`, `reference` and `answerSchema`, checked.
pub(super) type JudgedParts = (Vec<String>, Option<String>, Option<AnswerSchema>);

/// A suite's name: its file's name without the extension.
pub fn name_of(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "suite".into(), |s| s.to_string_lossy().into_owned())
}
