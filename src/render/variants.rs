//! Variants in the pictures: the plan's assignment in `explain`'s tree, the
//! variant of each agent in a run's tree, Markdown and HTML, and each specialist's
//! variants in the stats.

use super::tree::{Node, Style};
use crate::plan::{AgentVariants, Plan};
use crate::report::Report;
use crate::stats::{percent, two, AgentStats, Stats};
use crate::text::{markdown_code as code, printable, Align, MarkdownTable};

/// `variants:` and a line per agent with variants: the one this request gets, its slot,
/// every share, those disabled; `None` when no agent has variants.
pub fn plan_node(plan: &Plan, style: Style) -> Option<Node> {
    if plan.variants.is_empty() {
        return None;
    }
    let lines = plan.variants.iter().map(|a| Node::leaf(agent_line(a, style))).collect();
    Some(Node::new(style.dim("variants:"), lines))
}

fn agent_line(a: &AgentVariants, style: Style) -> String {
    let how = match a.forced {
        true => "forced".to_string(),
        false => format!("slot {} of 10000", a.slot),
    };
    let shares: Vec<String> = a
        .variants
        .iter()
        .map(|v| format!("{} {}", printable(&v.name), percent(Some(v.weight))))
        .chain([format!("control {}", percent(Some(a.control_weight)))])
        .collect();
    let mut line = format!(
        "{} → {} {}",
        style.cyan(&printable(&a.agent)),
        style.bold(&printable(&a.variant)),
        style.dim(&format!("({how}; {})", shares.join(", ")))
    );
    if !a.variant_disabled.is_empty() {
        let joined = a.variant_disabled.join(", ");
        let off = printable(&joined);
        line.push_str(&style.yellow(&format!(" disabled: {off} (its share is control's)")));
    }
    line
}

/// `, variant NAME` for a specialist's line; empty for an agent with no variants.
pub fn note(variant: Option<&str>) -> String {
    variant.map_or(String::new(), |v| format!(", variant {}", printable(v)))
}

/// `**Variants:** `writer` terse, `head` control.`: every agent with variants and the one
/// that ran; nothing when none had variants.
pub fn markdown(report: &Report) -> String {
    let mut ran = Vec::new();
    for d in &report.departments {
        let head = report_head(d);
        ran.extend(d.variant.as_deref().map(|v| format!("{} {}", code(&head), code(v))));
        for s in &d.specialist_results {
            ran.extend(
                s.variant
                    .as_deref()
                    .map(|v| format!("{} {}", code(&s.agent_id), code(v))),
            );
        }
    }
    match ran.is_empty() {
        true => String::new(),
        false => format!("\n**Variants:** {}.\n", ran.join(", ")),
    }
}

/// The head of a department as a report names it: `DEPARTMENT head`.
fn report_head(d: &crate::report::DepartmentResult) -> String {
    format!("{} head", d.department_id)
}

/// A line per variant of a specialist in the stats tree: runs, first-attempt pass rate and
/// its interval, mean score, p against control.
pub fn stats_nodes(a: &AgentStats, style: Style) -> Vec<Node> {
    a.variants
        .iter()
        .map(|v| {
            Node::leaf(format!(
                "variant {} {}",
                style.cyan(&printable(&v.variant)),
                style.dim(&figures(v).join(", "))
            ))
        })
        .collect()
}

/// The figures of one variant as the tree and the table show them.
fn figures(v: &crate::stats::VariantStats) -> [String; 5] {
    let interval = v.interval.map_or(String::new(), |[lo, hi]| {
        format!(" [{} – {}]", percent(Some(lo)), percent(Some(hi)))
    });
    [
        format!("{} runs", v.runs),
        format!("first attempt {}{interval}", percent(v.first_attempt_pass_rate)),
        format!("score {}", two(v.mean_score)),
        format!("p {}", p_text(v.p_value)),
        crate::text::fmt_usd(v.cost_usd),
    ]
}

/// A table of every specialist's variants; nothing when none has any.
pub fn stats_table(stats: &Stats) -> String {
    let mut table = MarkdownTable::new(&[
        ("agent", Align::Left),
        ("variant", Align::Left),
        ("runs", Align::Right),
        ("first attempt", Align::Right),
        ("95% interval", Align::Left),
        ("mean score", Align::Right),
        ("p vs control", Align::Right),
    ]);
    for a in &stats.agents {
        for v in &a.variants {
            let interval = v.interval.map_or("–".to_string(), |[lo, hi]| {
                format!("{} – {}", percent(Some(lo)), percent(Some(hi)))
            });
            table.row([
                code(&a.agent_id),
                code(&v.variant),
                v.runs.to_string(),
                percent(v.first_attempt_pass_rate),
                interval,
                two(v.mean_score),
                p_text(v.p_value),
            ]);
        }
    }
    table.finish_unless_empty("\n### Variants\n\n")
}

/// A p-value to 4 decimals (`< 0.0001` below that); `–` for control.
fn p_text(p: Option<f64>) -> String {
    match p {
        None => "–".into(),
        Some(p) if p < 0.0001 => "< 0.0001".into(),
        Some(p) => format!("{p:.4}"),
    }
}
