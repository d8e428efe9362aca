//! A suite's tool expectations: `toolsCalled`, `toolsNotCalled` and
//! `maxToolCalls`, checked in the suite file and against a run's report.

use crate::config::{suggestion, At, Config, Diagnostic};
use crate::report::{Report, ToolCall};

/// The problems of an `expect`'s tool names (`toolsCalled`, `toolsNotCalled`): an empty
/// name; `toolsCalled` on a config whose agents have no tools (it could never hold); a
/// `server.tool` whose `server` is no `mcpServers` entry, warned of, since it is then read
/// as a tool's own name (MCP allows dots in one) and a typo would never match.
pub fn check_names(
    called: &Option<Vec<At<String>>>,
    not_called: &Option<Vec<At<String>>>,
    config: &Config,
    shown: &str,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let any_tools = config.agents.iter().any(|a| !a.tools.is_empty());
    let lists = [("toolsCalled", called), ("toolsNotCalled", not_called)];
    for (key, names) in lists {
        for name in names.iter().flatten() {
            let (pos, n) = (name.pos, name.value.as_str());
            if n.is_empty() {
                out.push(Diagnostic::error(
                    shown,
                    pos,
                    "invalid-value",
                    format!("`{key}` holds an empty tool name"),
                ));
            } else if key == "toolsCalled" && !any_tools {
                let why = format!("`toolsCalled` names `{n}`, but no agent of the config has tools");
                out.push(Diagnostic::error(shown, pos, "missing-reference", why));
            } else if let Some((server, _)) = n.split_once('.') {
                if config.mcp_server(server).is_none() {
                    let hint = suggestion(server, config.settings.mcp_servers.keys().map(String::as_str));
                    let why = format!("no mcp server `{server}`{hint}: `{n}` is read as one tool's own name");
                    out.push(Diagnostic::warning(shown, pos, "missing-reference", why));
                }
            }
        }
    }
    out
}

/// What a case expects of tool use; every part optional.
#[derive(Clone, Debug, Default)]
pub struct ToolExpect {
    /// Tools that ran, each at least once (`tool` or `server.tool`).
    pub called: Vec<String>,
    /// Tools that never ran.
    pub not_called: Vec<String>,
    /// `usage.toolCalls` at most.
    pub max_calls: Option<u64>,
}

/// Every tool expectation of `expect` that `report` does not meet.
pub fn failures(expect: &ToolExpect, report: &Report) -> Vec<String> {
    let calls: Vec<&ToolCall> = tool_calls(report).collect();
    failures_among(expect, &calls, report.usage.tool_calls)
}

/// Every tool call of the run: each department's head's, and each attempt's.
fn tool_calls(report: &Report) -> impl Iterator<Item = &ToolCall> {
    report.departments.iter().flat_map(|d| {
        let attempts = d.specialist_results.iter().flat_map(|s| &s.attempts);
        d.tool_calls.iter().chain(attempts.flat_map(|a| &a.tool_calls))
    })
}

/// `toolsCalled` (each ran at least once, ok or not), `toolsNotCalled` and `maxToolCalls`
/// (`usage.toolCalls`, every call asked, run or refused). A call orch refused (a limit, the
/// repeated-call guard, an unknown or unallowed tool, a denial) did not run.
/// `asked` is the run's `usage.toolCalls`.
fn failures_among(expect: &ToolExpect, calls: &[&ToolCall], asked: u64) -> Vec<String> {
    let runs = |name: &str| calls.iter().filter(|c| c.ran() && c.is_named(name)).count();
    let mut out = Vec::new();
    for name in &expect.called {
        if runs(name) == 0 {
            out.push(format!("toolsCalled: `{name}` did not run"));
        }
    }
    for name in &expect.not_called {
        match runs(name) {
            0 => {}
            n => out.push(format!(
                "toolsNotCalled: `{name}` ran ({})",
                crate::text::count(n, "time")
            )),
        }
    }
    if let Some(max) = expect.max_calls.filter(|max| asked > *max) {
        out.push(format!("maxToolCalls: {asked} tool calls, more than {max}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Approval;

    fn call(server: Option<&str>, tool: &str, error: Option<&str>) -> ToolCall {
        ToolCall {
            id: "c".into(),
            server: server.map(str::to_string),
            tool: tool.into(),
            arguments: serde_json::json!({}),
            ok: error.is_none(),
            result: error.unwrap_or("text").into(),
            error: error.map(str::to_string),
            cut: false,
            latency_ms: 1,
            started_at: 0,
            finished_at: 1,
            approval: None,
            in_doubt: false,
            refused: false,
            conditions: Vec::new(),
        }
    }

    /// `call` as orch refused it.
    fn refused(mut call: ToolCall) -> ToolCall {
        call.refused = true;
        call
    }

    fn expect(called: &[&str], not_called: &[&str], max: Option<u64>) -> ToolExpect {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        ToolExpect {
            called: names(called),
            not_called: names(not_called),
            max_calls: max,
        }
    }

    #[test]
    fn a_tool_that_ran_ok_or_not_was_called_and_one_orch_refused_was_not() {
        let mut denied = call(
            Some("files"),
            "write_file",
            Some("denied by policy: not approved (--approvals deny)"),
        );
        denied.approval = Some(Approval::Denied);
        let calls = [
            call(Some("files"), "read_file", None),
            call(Some("files"), "read_file", Some("tool call timed out after 30 s")),
            call(Some("docs"), "search", Some("no such page")),
            denied,
            refused(call(None, "delete", Some("unknown tool: delete"))),
            refused(call(Some("files"), "list", Some("tool call limit reached (3)"))),
        ];
        let calls: Vec<&ToolCall> = calls.iter().collect();
        let holds = expect(
            &["read_file", "files.read_file", "docs.search"],
            &["write_file", "delete", "list", "files.search"],
            Some(6),
        );
        assert_eq!(failures_among(&holds, &calls, 6), Vec::<String>::new());
        let fails = expect(
            &["write_file", "files.search", "list"],
            &["search", "files.read_file"],
            Some(5),
        );
        assert_eq!(
            failures_among(&fails, &calls, 6),
            [
                "toolsCalled: `write_file` did not run",
                "toolsCalled: `files.search` did not run",
                "toolsCalled: `list` did not run",
                "toolsNotCalled: `search` ran (1 time)",
                "toolsNotCalled: `files.read_file` ran (2 times)",
                "maxToolCalls: 6 tool calls, more than 5",
            ]
        );
    }
}
