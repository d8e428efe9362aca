//! The simulated reviewer and revisions: in review 1 the reviewer names one
//! conflict between the two successful departments of lowest quality (ties by id), and none
//! after, so the offline demo shows a round; a head's revision keeps its output and says
//! what it changed.

use crate::prompts::{ORIGINAL_REQUEST_LINE, REVIEW_DEPARTMENT, REVISION_REQUEST};

/// The reviewer's JSON for a reviewer prompt.
pub fn review_reply(prompt: &str) -> String {
    let number: u32 = prompt
        .lines()
        .find_map(|l| l.strip_prefix("Review: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(1);
    let mut departments: Vec<(f64, &str)> = prompt
        .lines()
        .filter_map(|l| l.strip_prefix(REVIEW_DEPARTMENT))
        .filter_map(|l| {
            let mut parts = l.split(" | ");
            let id = parts.next()?.trim();
            let quality = parts.nth(1)?.strip_prefix("quality ")?.trim().parse().ok()?;
            Some((quality, id))
        })
        .collect();
    departments.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    let conflicts = match departments.as_slice() {
        [(_, a), (_, b), ..] if number == 1 => {
            let issue = format!("the hero is a thief in `{a}` and a prince in `{b}`; agree on one.");
            vec![serde_json::json!({"departments": [a, b], "issue": issue})]
        }
        _ => Vec::new(),
    };
    serde_json::json!({"consistent": conflicts.is_empty(), "conflicts": conflicts}).to_string()
}

/// A head's revised output: its own output, then a line per issue it answered.
pub fn revision(prompt: &str) -> String {
    let issues: Vec<&str> = prompt
        .lines()
        .filter_map(|l| l.strip_prefix(REVISION_REQUEST))
        .collect();
    let own = prompt
        .split_once("\nYOUR OUTPUT (")
        .and_then(|(_, rest)| rest.split_once("):\n"))
        .map(|(_, rest)| rest.split("\n\nRevise your output").next().unwrap_or(rest))
        .unwrap_or("");
    let request = prompt
        .lines()
        .find_map(|l| l.strip_prefix(ORIGINAL_REQUEST_LINE))
        .unwrap_or("the request");
    let mut out = own.trim_end().to_string();
    if out.is_empty() {
        out = format!("A revised answer to: {request}");
    }
    for issue in issues {
        out.push_str(&format!(
            "\n\n**Revised for consistency**: {}",
            crate::text::excerpt(issue, 200)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompts::{review, revision as revision_prompt, Reviewed};

    fn reviewed<'a>(id: &'a str, quality: f64) -> Reviewed<'a> {
        Reviewed {
            id,
            name: id,
            quality,
            output: "## A heading\nsome text",
        }
    }

    #[test]
    fn review_one_names_the_two_of_lowest_quality_and_review_two_none() {
        let ds = [
            reviewed("story", 90.0),
            reviewed("visual", 85.0),
            reviewed("character", 85.0),
        ];
        let first: serde_json::Value = serde_json::from_str(&review_reply(&review("r", 1, &ds))).unwrap();
        assert_eq!(
            first["conflicts"][0]["departments"],
            serde_json::json!(["character", "visual"])
        );
        assert_eq!(first["consistent"], false);
        let second: serde_json::Value = serde_json::from_str(&review_reply(&review("r", 2, &ds))).unwrap();
        assert_eq!(second["conflicts"], serde_json::json!([]));
    }

    #[test]
    fn a_revision_keeps_the_output_and_answers_each_issue() {
        let own = reviewed("story", 90.0);
        let p = revision_prompt("r", &["one", "two"], &[reviewed("visual", 80.0)], &own);
        let out = revision(&p);
        assert!(
            out.starts_with("## A heading\nsome text\n\n**Revised for consistency**: one"),
            "{out}"
        );
        assert!(out.ends_with("**Revised for consistency**: two"), "{out}");
    }
}
