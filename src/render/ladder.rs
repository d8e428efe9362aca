//! The Markdown of model ladders and economy: the attempts that ran above rung 0,
//! and the economy line.

use crate::report::Report;
use crate::text::{markdown_code as code, Align, MarkdownTable};

/// `**Economy:** …` and a table of the attempts above rung 0; nothing when neither happened.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    if let Some(e) = &report.economy {
        let ids = |ids: &[String]| ids.iter().map(|i| code(i)).collect::<Vec<_>>().join(", ");
        out.push_str(&format!(
            "\n**Economy:** {} at {:.1} s",
            e.reason.strip_prefix("economy: ").unwrap_or(&e.reason),
            e.at as f64 / 1000.0
        ));
        if !e.skipped.is_empty() {
            out.push_str(&format!("; skipped {}", ids(&e.skipped)));
        }
        if !e.lightened.is_empty() {
            out.push_str(&format!("; lightened {}", ids(&e.lightened)));
        }
        out.push_str(".\n");
    }
    let mut table = MarkdownTable::new(&[
        ("department", Align::Left),
        ("agent", Align::Left),
        ("attempt", Align::Right),
        ("rung", Align::Right),
        ("model", Align::Left),
        ("escalated", Align::Left),
    ]);
    for d in &report.departments {
        for s in &d.specialist_results {
            for a in s.attempts.iter().filter(|a| a.rung > 0 || a.escalated.is_some()) {
                table.row([
                    code(&d.department_id),
                    code(&s.agent_id),
                    a.attempt.to_string(),
                    a.rung.to_string(),
                    code(&a.model),
                    a.escalated.as_deref().map_or_else(|| "–".to_string(), code),
                ]);
            }
        }
    }
    out.push_str(&table.finish_unless_empty("\n"));
    out
}
