//! Mermaid flowcharts: the plan (`orch explain --format mermaid`) and a run's departments
//! (in Markdown summaries). GitHub renders ```` ```mermaid ```` blocks in Markdown.

use crate::plan::Plan;
use crate::report::Report;

/// A node id Mermaid accepts whatever the department id holds.
fn node(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("d_{safe}")
}

/// Text inside a quoted Mermaid label (markup characters as entities, on one line).
fn label(text: &str) -> String {
    crate::text::escape_markup(&text.replace(['\r', '\n'], " "))
}

/// The plan as a flowchart, stages left to right: one node per selected department
/// (id, role, handling, calls `min..max`), one edge per dependency.
pub fn plan(plan: &Plan) -> String {
    let mut out = String::from("flowchart LR\n");
    for (i, stage) in plan.routing.stages.iter().enumerate() {
        out.push_str(&format!("  subgraph stage_{} [\"stage {}\"]\n", i + 1, i + 1));
        for id in stage {
            if let Some(d) = plan.departments.iter().find(|d| &d.department_id == id) {
                let role = serde_json::to_value(d.role)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string));
                let handling = serde_json::to_value(d.handling)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string));
                out.push_str(&format!(
                    "    {}[\"{}<br/>{} · {} · calls {}..{}\"]\n",
                    node(id),
                    label(id),
                    role.unwrap_or_default(),
                    handling.unwrap_or_default(),
                    d.min_calls,
                    d.max_calls
                ));
            }
        }
        out.push_str("  end\n");
    }
    for d in &plan.departments {
        for dep in &d.depends_on {
            out.push_str(&format!("  {} --> {}\n", node(dep), node(&d.department_id)));
        }
    }
    out
}

/// A run's departments as a flowchart: status and quality on each node, an edge per
/// dependency output handed over.
pub fn run(report: &Report) -> String {
    let mut out = String::from("flowchart LR\n");
    let mut any_paused = false;
    for d in &report.departments {
        let (class, shown) = match d.status.to_string().as_str() {
            "success" => ("ok", format!("success · {}", crate::text::fmt_score(d.quality_score))),
            "skipped" => (
                "skipped",
                format!("skipped · {}", crate::text::fmt_score(d.quality_score)),
            ),
            // Waiting for a decision: neither failed nor scored.
            "paused" => ("paused", "⏸ paused".to_string()),
            status => (
                "failed",
                format!("{status} · {}", crate::text::fmt_score(d.quality_score)),
            ),
        };
        any_paused |= class == "paused";
        out.push_str(&format!(
            "  {}[\"{}<br/>{shown}\"]:::{class}\n",
            node(&d.department_id),
            label(&d.department_id),
        ));
        for dep in &d.metadata.dependencies_received {
            out.push_str(&format!("  {} --> {}\n", node(dep), node(&d.department_id)));
        }
    }
    if any_paused {
        out.push_str("  classDef paused fill:#fff3cd,stroke:#9a6700\n");
    }
    out.push_str("  classDef ok fill:#d8f5d8,stroke:#2a7a2a\n");
    out.push_str("  classDef failed fill:#f8d7d7,stroke:#a33\n");
    out.push_str("  classDef skipped fill:#eee,stroke:#999\n");
    out
}
