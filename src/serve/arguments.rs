//! The four tools, their arguments' JSON Schemas, and the arguments checked. A bad argument
//! is the tool's error result (the model can correct it), as a bad flag is a usage error.

use std::path::{Component, Path, PathBuf};

use rmcp::model::{JsonObject, Tool};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::plan::SpecialistMode;

/// What a `run` call asks for: `orch run PROMPT [--department ID]... [--specialists MODE]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCall {
    /// The request.
    pub prompt: String,
    /// `--department`: exactly these departments (empty: routed by relevance).
    pub departments: Vec<String>,
    /// `--specialists`.
    pub specialists: SpecialistMode,
    /// The key variants are assigned by (absent: the request).
    pub assign: Option<String>,
    /// The conversation this run is the next turn of, by name.
    pub session: Option<String>,
}

/// A checked call of one of the tools.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Call {
    /// `run`.
    Run(RunCall),
    /// `explain` of a prompt.
    Explain(String),
    /// `validate`.
    Validate,
    /// `test` of a suite file, as the client wrote its path, and which of its cases run.
    Test(String, TestPicking),
}

/// Which of a suite's cases the `test` tool runs, as `orch test`'s `--tag`, `--skip-tag`,
/// `--sample` and `--sample-seed` pick them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestPicking {
    /// Only the cases with any of these tags (none: every case).
    pub tags: Vec<String>,
    /// None of the cases with any of these tags.
    pub skip_tags: Vec<String>,
    /// Only this many cases, chosen by a hash of the seed and each case id (1 or more).
    pub sample: Option<u64>,
    /// The seed of the sample (`0` unless given).
    pub sample_seed: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunWire {
    prompt: String,
    #[serde(default)]
    departments: Vec<String>,
    #[serde(default)]
    specialists: Option<String>,
    #[serde(default)]
    assign: Option<String>,
    session: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExplainWire {
    prompt: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidateWire {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
struct TestWire {
    suite: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    skip_tags: Vec<String>,
    #[serde(default)]
    sample: Option<u64>,
    #[serde(default)]
    sample_seed: Option<String>,
}

/// The tools orch serves, in the order `tools/list` gives them.
pub(super) fn tools() -> Vec<Tool> {
    let prompt = json!({"type": "string", "description": "The request, as `orch run PROMPT` takes it."});
    let run = json!({
        "type": "object",
        "properties": {
            "prompt": prompt,
            "departments": {"type": "array", "items": {"type": "string"},
                            "description": "Run exactly these departments (like --department), skipping relevance scoring."},
            "specialists": {"type": "string", "enum": ["auto", "always", "never"],
                            "description": "Whether heads use specialists (like --specialists; default auto)."},
            "assign": {"type": "string", "description": "Assign variants by this key, a user or session id (like --assign; default the prompt)."},
            "session": {"type": "string",
                        "description": "A conversation's name: this run is its next turn, and a follow-up goes to the previous turn's departments (like orch run --session)."}
        },
        "required": ["prompt"],
        "additionalProperties": false
    });
    let explain = json!({"type": "object", "properties": {"prompt": prompt}, "required": ["prompt"], "additionalProperties": false});
    let validate = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let test = json!({
        "type": "object",
        "properties": {
            "suite": {"type": "string", "description": "A suite file (YAML or TOML), relative to the config root or absolute; it must lie under the root."},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Run only the cases with any of these tags (like --tag)."},
            "skipTags": {"type": "array", "items": {"type": "string"}, "description": "Leave out the cases with any of these tags (like --skip-tag)."},
            "sample": {"type": "integer", "minimum": 1, "description": "Run only this many of the picked cases, the same ones every time (like --sample)."},
            "sampleSeed": {"type": "string", "description": "The seed that chooses the sample (like --sample-seed; default 0)."}
        },
        "required": ["suite"],
        "additionalProperties": false
    });
    vec![
        tool("run", "Run a request through the hierarchy (orch run): the report as JSON.", run),
        tool("explain", "The plan of a request without any LLM call (orch explain): routing, departments, specialists, call bounds.", explain),
        tool("validate", "Check the config (orch validate): every problem at file:line:column.", validate),
        tool("test", "Run a suite of cases with expectations (orch test): the summary as JSON.", test),
    ]
}

fn tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!("a tool's schema is an object")
    };
    Tool::new(name, description, schema)
}

/// The call of tool `name` with `arguments` (absent = `{}`); `None` for a tool orch does not
/// serve; `Err` says what is wrong with the arguments.
pub(super) fn parse(name: &str, arguments: Option<JsonObject>) -> Option<Result<Call, String>> {
    let value = Value::Object(arguments.unwrap_or_default());
    let why = |e: serde_json::Error| format!("invalid arguments for `{name}`: {e}");
    let call = match name {
        "run" => serde_json::from_value::<RunWire>(value).map_err(why).and_then(run_call),
        "explain" => serde_json::from_value::<ExplainWire>(value)
            .map(|w| Call::Explain(w.prompt))
            .map_err(why),
        "validate" => serde_json::from_value::<ValidateWire>(value)
            .map(|_| Call::Validate)
            .map_err(why),
        "test" => serde_json::from_value::<TestWire>(value)
            .map_err(why)
            .and_then(test_call),
        _ => return None,
    };
    Some(call)
}

/// A `test` call: its suite and which of its cases run (a sample of none is refused).
fn test_call(wire: TestWire) -> Result<Call, String> {
    if wire.sample == Some(0) {
        return Err("invalid arguments for `test`: `sample` must be 1 or more".into());
    }
    let picking = TestPicking {
        tags: wire.tags,
        skip_tags: wire.skip_tags,
        sample: wire.sample,
        sample_seed: wire.sample_seed,
    };
    Ok(Call::Test(wire.suite, picking))
}

fn run_call(wire: RunWire) -> Result<Call, String> {
    let specialists = match wire.specialists.as_deref() {
        None => SpecialistMode::Auto,
        Some(mode) => mode.parse().map_err(|_| {
            format!("invalid arguments for `run`: `specialists` is `{mode}`, not one of auto, always, never")
        })?,
    };
    if let Some(name) = wire.session.as_deref().filter(|n| n.trim().is_empty() || n.len() > 200) {
        return Err(format!(
            "invalid arguments for `run`: `session` must be a name of 1 to 200 bytes, not `{}`",
            crate::text::excerpt(name, 40)
        ));
    }
    Ok(Call::Run(RunCall {
        prompt: wire.prompt,
        departments: wire.departments,
        specialists,
        assign: wire.assign,
        session: wire.session,
    }))
}

/// The suite file `suite` names, under config root `root`: relative paths are taken from the
/// root; a path that leaves it (`..`, an absolute path elsewhere, a symlink out) is refused,
/// so a client cannot make orch read files the config does not hold. The file must exist.
pub(super) fn suite_under(root: &Path, suite: &str) -> Result<PathBuf, String> {
    let refuse = || format!("the suite `{suite}` is not under the config root {}", root.display());
    let base = if root.is_file() {
        root.parent().unwrap_or(Path::new("."))
    } else {
        root
    };
    let path = Path::new(suite);
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(refuse());
    }
    let joined = base.join(path);
    let real_base = base
        .canonicalize()
        .map_err(|e| format!("cannot read the config root: {e}"))?;
    let real = joined
        .canonicalize()
        .map_err(|e| format!("cannot read the suite `{suite}`: {e}"))?;
    if !real.starts_with(&real_base) {
        return Err(refuse());
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Option<JsonObject> {
        value.as_object().cloned()
    }

    #[test]
    fn run_arguments_default_like_the_flags() {
        let call = parse("run", args(json!({"prompt": "a scene"}))).unwrap().unwrap();
        assert_eq!(
            call,
            Call::Run(RunCall {
                prompt: "a scene".into(),
                departments: vec![],
                specialists: SpecialistMode::Auto,
                assign: None,
                session: None,
            })
        );
        let call = parse(
            "run",
            args(json!({"prompt": "p", "departments": ["story"], "specialists": "never"})),
        );
        let Some(Ok(Call::Run(run))) = call else {
            panic!("{call:?}")
        };
        assert_eq!(
            (run.departments, run.specialists),
            (vec!["story".to_string()], SpecialistMode::Never)
        );
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        assert_eq!(
            parse("explain", None),
            Some(Err("invalid arguments for `explain`: missing field `prompt`".into()))
        );
        assert_eq!(
            parse("run", args(json!({"prompt": "p", "specialists": "often"}))),
            Some(Err(
                "invalid arguments for `run`: `specialists` is `often`, not one of auto, always, never".into()
            ))
        );
        let unknown = parse("validate", args(json!({"strict": true}))).unwrap().unwrap_err();
        assert!(
            unknown.starts_with("invalid arguments for `validate`: unknown field `strict`"),
            "{unknown}"
        );
        assert_eq!(parse("deploy", None), None);
    }

    #[test]
    fn every_tool_has_an_object_schema() {
        let names: Vec<_> = tools().iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, ["run", "explain", "validate", "test"]);
        for t in tools() {
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
        }
    }

    #[test]
    fn suites_must_lie_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("team");
        std::fs::create_dir_all(root.join("suites")).unwrap();
        std::fs::write(root.join("suites/a.yaml"), "cases: []\n").unwrap();
        std::fs::write(dir.path().join("outside.yaml"), "cases: []\n").unwrap();
        let inside = suite_under(&root, "suites/a.yaml").unwrap();
        assert_eq!(inside, root.join("suites/a.yaml").canonicalize().unwrap());
        let absolute = root.join("suites/a.yaml").display().to_string();
        assert_eq!(suite_under(&root, &absolute).unwrap(), inside);
        let refused = format!(
            "the suite `../outside.yaml` is not under the config root {}",
            root.display()
        );
        assert_eq!(suite_under(&root, "../outside.yaml"), Err(refused));
        let elsewhere = dir.path().join("outside.yaml").display().to_string();
        assert!(suite_under(&root, &elsewhere)
            .unwrap_err()
            .contains("is not under the config root"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("outside.yaml"), root.join("link.yaml")).unwrap();
            assert!(suite_under(&root, "link.yaml")
                .unwrap_err()
                .contains("is not under the config root"));
        }
        assert!(suite_under(&root, "missing.yaml")
            .unwrap_err()
            .starts_with("cannot read the suite `missing.yaml`"));
    }
}
