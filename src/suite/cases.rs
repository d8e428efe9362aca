//! A suite's cases one at a time: a decoded suite checked against its
//! config (inline cases kept, dataset rows only counted); a case as written made into a case,
//! its problems told; ids kept unique by a 64-bit hash each (the one thing a suite's check
//! keeps per case); and a dataset's rows read again a row at a time when they run, none kept.

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use regex::Regex;

use super::dataset::Rows;
use super::file::{
    decode_row, expect_of, name_of, CaseWire, DatasetCases, Defaults, ExpectWire, JudgedParts, SuiteWire, Unchecked,
};
use super::judged_wire;
use super::tool_expect::check_names;
use super::{Case, Suite};
use crate::config::{suggestion, At, Config, Diagnostic, Pos, Resolve};

/// Where a problem is and what it is: the code and its words.
pub type Error<'e> = dyn FnMut(Pos, &'static str, String) + 'e;

/// The ids met so far, each as a hash, with the file (an index into `files`) and place it was
/// first met at.
#[derive(Default)]
pub struct Ids {
    first_at: HashMap<u64, (u32, Pos)>,
    files: Vec<Rc<str>>,
}

/// The 64-bit hash of an id, the same in every run.
fn hash_of(id: &str) -> u64 {
    super::case_index::stable_hash(id)
}

impl Ids {
    /// The id of case `c` (in file `shown`) when it has a usable one (present and not taken);
    /// its problems go to `error`. A duplicate names the first's place.
    pub fn check(&mut self, c: &CaseWire, shown: &Rc<str>, error: &mut Error) -> Option<At<String>> {
        let Some(id) = &c.id else {
            error(c.pos, "missing-key", "a case has no `id`".into());
            return None;
        };
        let valid = !id.value.is_empty()
            && (id.value.chars()).all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '-'));
        if !valid {
            let message = format!("case id `{}` must be letters, digits, `_`, `.` and `-`", id.value);
            error(id.pos, "invalid-id", message);
        }
        let hash = hash_of(&id.value);
        if let Some((file, pos)) = self.first_at.get(&hash) {
            let file = &self.files[*file as usize];
            let message = format!(
                "duplicate case id `{}` (first at {file}:{}:{})",
                id.value, pos.line, pos.column
            );
            error(id.pos, "duplicate-id", message);
            return None;
        }
        if self.files.last() != Some(shown) {
            self.files.push(shown.clone());
        }
        self.first_at.insert(hash, (self.files.len() as u32 - 1, id.pos));
        Some(id.clone())
    }
}

/// Case `c` made into a case run on `config`, when it has an `id`: its prompt, departments,
/// regexes and variants checked, each problem told to `error`.
pub fn made(c: &CaseWire, id: Option<At<String>>, on: On, error: &mut Error) -> Option<Case> {
    let On { defaults, config, .. } = on;
    let prompt = c.prompt.as_ref().map(|p| p.value.clone()).unwrap_or_default();
    if prompt.trim().is_empty() {
        let message = match &id {
            Some(id) => format!("case `{}` has no `prompt`", id.value),
            None => "a case has no `prompt`".into(),
        };
        error(c.pos, "missing-key", message);
    }
    let e = c.expect.clone().unwrap_or_default();
    let lists = [&c.departments, &e.departments, &e.include, &e.exclude];
    for d in lists.into_iter().flatten().flatten().chain(e.primary.as_ref()) {
        if config.department(&d.value).is_none() {
            let hint = suggestion(&d.value, config.departments.iter().map(|x| x.id.as_str()));
            let message = format!("unknown department `{}`{hint}", d.value);
            error(d.pos, "missing-reference", message);
        }
    }
    if e.not_contains.iter().flatten().any(String::is_empty) {
        let message = "`notContains` holds an empty string, which every output contains: the case could never pass";
        error(c.pos, "invalid-value", message.into());
    }
    if c.tags.iter().flatten().any(|t| t.trim().is_empty()) {
        let message = "`tags` holds an empty tag, which no `--tag` could pick";
        error(c.pos, "invalid-value", message.into());
    }
    let matches = compile_matches(e.matches.iter().flatten(), error);
    let (judge, judged) = judged_parts(c, &e, on, error);
    let id = id?;
    Some(Case {
        id: id.value,
        prompt,
        departments: c.departments.clone().map(Resolve::resolve).unwrap_or_default(),
        specialists: c.specialists.clone().map_or(defaults.specialists, |s| s.value),
        repeat: defaults.repeat,
        expect: expect_of(e, matches, judged),
        variants: super::variants::forced(c.variants.as_ref(), config, &mut |p, code, m| error(p, code, m)),
        answers: c.answers.clone().unwrap_or_default(),
        judge,
        tags: c.tags.clone().unwrap_or_default(),
    })
}

/// What a case is made against: its suite's defaults and file, and the config it runs on.
#[derive(Clone, Copy)]
pub struct On<'a> {
    /// The suite's `defaults`.
    pub defaults: &'a Defaults,
    /// The config the case runs on.
    pub config: &'a Config,
    /// The suite file (an `answerSchema` file is relative to it).
    pub suite: &'a Path,
}

/// A case's judge and its `rubric`, `reference` and `answerSchema`, checked: a case that
/// asks a judge and has none is an error at its `rubric` (or `reference`).
fn judged_parts(c: &CaseWire, e: &ExpectWire, on: On, error: &mut Error) -> (Option<String>, JudgedParts) {
    let judge = match &c.judge {
        Some(named) => judged_wire::judge(Some(named), on.config, error),
        None => (on.defaults.judge.clone()).or_else(|| on.config.settings.grading.judge.clone()),
    };
    let rubric = judged_wire::rubric_items(e.rubric.as_ref(), error);
    let reference = judged_wire::reference(e.reference.as_ref(), error);
    let asks = e
        .rubric
        .as_ref()
        .map(|r| (r.pos, "rubric"))
        .or(e.reference.as_ref().map(|r| (r.pos, "reference")));
    if let (Some((pos, key)), None) = (asks, &judge) {
        let message =
            format!("`{key}` needs a judge: set the case's `judge`, the suite's `defaults.judge` or `grading.judge`");
        error(pos, "missing-reference", message);
    }
    let schema = judged_wire::answer_schema(e.answer_schema.as_ref(), on.suite, error);
    (judge, (rubric, reference, schema))
}

/// The regexes of `matches`, each that does not compile an error at its place.
fn compile_matches<'m>(matches: impl Iterator<Item = &'m At<String>>, error: &mut Error) -> Vec<Regex> {
    let mut out = Vec::new();
    for m in matches {
        match Regex::new(&m.value) {
            Ok(r) => out.push(r),
            Err(err) => {
                let text = err.to_string();
                let why = text.lines().last().unwrap_or("").trim_start_matches("error: ");
                let message = format!("`{}` is not a regular expression: {why}", m.value);
                error(m.pos, "invalid-value", message);
            }
        }
    }
    out
}

impl DatasetCases {
    /// The rows as cases, read again one at a time. The check passed over every row before:
    /// a row that no longer makes a case (its file changed since) is left out.
    pub fn cases(&self) -> impl Iterator<Item = Arc<Case>> + '_ {
        let rows = Rows::new(&self.path, &self.shown, &self.files, decode_row);
        rows.filter_map(|(_, c)| {
            let on = On {
                defaults: &self.defaults,
                config: &self.config,
                suite: &self.path,
            };
            let case = made(&c, c.id.clone(), on, &mut |_, _, _| {});
            case.map(Arc::new)
        })
    }
}

impl Unchecked {
    /// Checks the suite against `config`: the suite, or every problem.
    pub fn check(self, config: &Arc<Config>) -> Result<Suite, Vec<Diagnostic>> {
        let Unchecked {
            path,
            shown,
            wire,
            mut diags,
        } = self;
        let suite = check(&path, &shown, wire, config, &mut diags);
        if diags.iter().any(Diagnostic::is_error) {
            Err(diags)
        } else {
            Ok(suite)
        }
    }
}

/// The meaning of a decoded suite: ids, prompts, department ids, regexes. Inline cases are
/// kept; dataset rows are checked a row at a time and only counted.
fn check(path: &Path, shown: &str, wire: SuiteWire, config: &Arc<Config>, diags: &mut Vec<Diagnostic>) -> Suite {
    let defaults = wire.defaults.clone().unwrap_or_default().resolve();
    let mut problems: Vec<(Rc<str>, Pos, &'static str, String)> = Vec::new();
    let suite_shown: Rc<str> = shown.into();
    // The suite's own judge, checked once where it is written.
    let default_judge = wire.defaults.as_ref().and_then(|d| d.judge.as_ref());
    judged_wire::judge(default_judge, config, &mut |pos, code, m| {
        problems.push((suite_shown.clone(), pos, code, m))
    });
    let mut ids = Ids::default();
    let (mut cases, mut rows_count) = (Vec::new(), 0);
    let mut tool_names = Vec::new();
    let datasets = wire.dataset.clone().unwrap_or_default();
    // Inline cases first, then each dataset's rows, one at a time: one check for both.
    let mut rows = Rows::new(path, shown, &datasets, decode_row);
    let inline = wire
        .cases
        .iter()
        .flatten()
        .map(|c| (suite_shown.clone(), c.clone(), true));
    for (shown, c, is_inline) in inline.chain(rows.by_ref().map(|(s, c)| (s, c, false))) {
        let mut error = |pos, code, message: String| problems.push((shown.clone(), pos, code, message));
        // A case whose id is missing or taken is still checked whole: every problem at once.
        let id = ids.check(&c, &shown, &mut error);
        let e = c.expect.as_ref();
        tool_names.extend(
            e.map(|e| check_names(&e.tools_called, &e.tools_not_called, config, &shown))
                .unwrap_or_default(),
        );
        let on = On {
            defaults: &defaults,
            config,
            suite: path,
        };
        match made(&c, id, on, &mut error) {
            Some(case) if is_inline => cases.push(case),
            Some(_) => rows_count += 1,
            None => {}
        }
    }
    drop(ids);
    diags.extend(rows.diags);
    diags.extend(
        problems
            .into_iter()
            .map(|(file, pos, code, message)| Diagnostic::error(&file, pos, code, message)),
    );
    diags.extend(tool_names);
    if cases.is_empty() && rows_count == 0 && !diags.iter().any(Diagnostic::is_error) {
        diags.push(Diagnostic::error(
            shown,
            Pos { line: 1, column: 1 },
            "no-cases",
            "the suite has no cases (add a `cases:` list)",
        ));
    }
    let dataset = (!datasets.0.is_empty()).then(|| DatasetCases {
        path: path.to_path_buf(),
        shown: shown.to_string(),
        files: datasets,
        defaults,
        config: config.clone(),
        rows: rows_count,
    });
    Suite {
        name: name_of(path),
        cases: cases.into_iter().map(Arc::new).collect(),
        dataset,
    }
}

impl Suite {
    /// Every case in file order: the inline ones, then each dataset's rows, read again a row
    /// at a time (none is kept).
    pub fn each(&self) -> impl Iterator<Item = Arc<Case>> + '_ {
        let rows = self.dataset.iter().flat_map(|d| d.cases());
        self.cases.iter().cloned().chain(rows)
    }

    /// How many cases it has, inline and rows.
    pub fn case_count(&self) -> usize {
        self.cases.len() + self.dataset.as_ref().map_or(0, |d| d.rows)
    }
}
