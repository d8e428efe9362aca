//! What `orch approve FILE` shows of a journal's pending items: without ids
//! or `--all` it lists them and decides nothing; a line per item, or the items as JSON.

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Value};

use crate::cli::{ApproveArgs, ApproveFormat};
use crate::exit::{CommandError, Exit};
use crate::record::Journal;
use crate::report::{GateItem, GateKind};
use crate::text::{excerpt, printable};

/// How much of a tool call's arguments or a department's output a line shows.
const SHOWN: usize = 120;

/// Lists the pending items no decision answers yet, on stdout; decides nothing. `--deny`
/// and `--reason` here are a usage error: they would decide nothing either.
pub fn list(args: &ApproveArgs, journal: &Journal) -> Result<Exit> {
    if args.deny || args.reason.is_some() {
        return Err(CommandError::usage(
            "--deny and --reason decide the items named: give their ids, or --all (without them, `orch approve FILE` lists what is pending)",
        )
        .into());
    }
    let undecided = journal.undecided();
    let mut out = super::stdout();
    if args.format == ApproveFormat::Json {
        let items: Vec<Value> = undecided.iter().map(|item| shown(item)).collect();
        super::write_json(&mut out, &items)?;
    }
    let file = printable(&args.file.display().to_string()).into_owned();
    if undecided.is_empty() {
        let _ = writeln!(std::io::stderr(), "warning: nothing is pending in {file}");
        return Ok(Exit::Success);
    }
    if args.format == ApproveFormat::Text {
        for item in &undecided {
            writeln!(out, "{}", line(item))?;
        }
    }
    out.flush()?;
    let _ = writeln!(
        std::io::stderr(),
        "decide with `orch approve {file} ID…` or `--all` (add `--deny [--reason TEXT]` to deny), then `orch resume {file}`"
    );
    Ok(Exit::Success)
}

/// One pending item on one line: its id, its kind, where it is and who asks, and the tool
/// call or the output, cut to a line (`--format json` gives it whole).
pub fn line(item: &GateItem) -> String {
    let what = match item.kind {
        GateKind::Tool => format!(
            "agent {} calls {}.{} with {}",
            item.agent_id,
            item.server.as_deref().unwrap_or_default(),
            item.tool.as_deref().unwrap_or_default(),
            excerpt(&item.arguments.to_string(), SHOWN)
        ),
        GateKind::Department => {
            let output = match &item.output {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            format!("head {} wrote: {}", item.agent_id, excerpt(&output, SHOWN))
        }
    };
    let (id, kind) = (&item.id, item.kind.to_string());
    printable(&format!("{id}  {kind:<10}  in {}, {what}", item.department)).into_owned()
}

/// An item as `--format json` prints it: an object whose keys are in sorted order, as the
/// journal writes it.
fn shown(item: &GateItem) -> Value {
    serde_json::to_value(item).unwrap_or(Value::Null)
}

/// A decided item as `--format json` prints it: the item, with its decision and reason.
pub fn decided(item: &GateItem, decision: &str, reason: Option<&str>) -> Value {
    let mut shown = shown(item);
    if let Value::Object(map) = &mut shown {
        map.insert("decision".into(), json!(decision));
        map.insert("reason".into(), json!(reason));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(value: Value) -> GateItem {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_line_names_the_item_and_cuts_what_it_shows() {
        let tool = item(
            json!({"id": "tool-0a1b2c3d", "kind": "tool", "department": "d", "agentId": "h",
            "server": "files", "tool": "echo", "arguments": {"text": "hi\u{1b}[2J"}, "output": null}),
        );
        assert_eq!(
            line(&tool),
            "tool-0a1b2c3d  tool        in d, agent h calls files.echo with {\"text\":\"hi\\u001b[2J\"}"
        );
        let long = "word ".repeat(100);
        let dept = item(
            json!({"id": "dept-0a1b2c3d", "kind": "department", "department": "e", "agentId": "g",
            "server": null, "tool": null, "arguments": null, "output": format!("Line one\n{long}")}),
        );
        let shown = line(&dept);
        assert!(
            shown.starts_with("dept-0a1b2c3d  department  in e, head g wrote: Line one word word"),
            "{shown}"
        );
        assert!(shown.ends_with('…') && !shown.contains('\n'), "{shown}");
    }
}
