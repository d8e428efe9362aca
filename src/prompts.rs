//! The prompts the engine sends, word for word as the design fixes them,
//! and the markers in them that the simulated provider reads (one spelling, here).

/// Starts a retry prompt.
pub const ORIGINAL_REQUEST: &str = "ORIGINAL REQUEST:";
/// Precedes the previous output in a retry prompt.
pub const PREVIOUS_ATTEMPT_FAILED: &str = "PREVIOUS ATTEMPT FAILED:";
/// Precedes the feedback lines in a retry prompt.
pub const FEEDBACK_FROM_PREVIOUS: &str = "FEEDBACK FROM PREVIOUS ATTEMPTS:";
/// Precedes the closing instructions of a retry prompt.
pub const INSTRUCTIONS: &str = "INSTRUCTIONS:";
/// Precedes each dependency's output handed to a department.
pub const CONTEXT_FROM: &str = "\n\nCONTEXT FROM";
/// Marks the head's synthesis prompt.
pub const SYNTHESIS_MARKER: &str = "You are the department head. Review and synthesize";
/// Marks the master's summary prompt.
pub const SUMMARY_MARKER: &str = "You are the master orchestrator. Summarize";

/// A dependency's output handed to a department.
pub struct Handoff<'a> {
    /// The dependency.
    pub department: &'a str,
    /// The dependency's quality score.
    pub quality: f64,
    /// The dependency's output.
    pub output: &'a str,
}

/// The first-attempt prompt: the request, then each dependency's output and quality.
pub fn with_handoff(request: &str, handoffs: &[Handoff]) -> String {
    let mut p = request.to_string();
    for h in handoffs {
        p.push_str(&format!(
            "{CONTEXT_FROM} {} (quality {}):\n{}",
            h.department.to_uppercase(),
            crate::text::fmt_score(h.quality),
            h.output
        ));
    }
    p
}

/// The retry prompt: the task, the previous output and every feedback line so far.
pub fn retry(request: &str, previous_output: &str, feedback: &[String]) -> String {
    format!(
        "{ORIGINAL_REQUEST} {request}\n\n\
         {PREVIOUS_ATTEMPT_FAILED} {previous_output}\n\n\
         {FEEDBACK_FROM_PREVIOUS}\n{}\n\n\
         {INSTRUCTIONS}\n\
         Retry with improvements. Focus on quality, relevance, consistency.",
        feedback.join("\n")
    )
}

/// One feedback line: `Quality score X below threshold Y. Improve quality, relevance, and
/// consistency.`, then the grader's own feedback when there is some.
pub fn feedback_line(score: f64, threshold: u32, grader_feedback: &str) -> String {
    let mut line = format!(
        "Quality score {} below threshold {threshold}. Improve quality, relevance, and consistency.",
        crate::text::fmt_score(score)
    );
    if !grader_feedback.is_empty() {
        line.push(' ');
        line.push_str(grader_feedback);
    }
    line
}

/// The feedback line of an attempt cut by the length cap; `cap` 0 is the
/// provider's own limit.
pub fn truncated_line(cap: u32) -> String {
    if cap > 0 {
        format!("Output was cut off at the length limit ({cap} tokens). Be more concise.")
    } else {
        "Output was cut off at the length limit. Be more concise.".to_string()
    }
}

/// How synthesis and summary prompts begin, before the request.
pub const ORIGINAL_REQUEST_LINE: &str = "Original request: ";

/// The first line of every router prompt; the simulated provider recognises it.
pub const ROUTER_MARKER: &str = "ROUTE THIS REQUEST.";

/// The router's prompt: the request and every department, one line each
/// (`- id: … | name: … | description: … | keywords: …`), and the reply wanted.
pub fn router(request: &str, departments: &[crate::config::Department]) -> String {
    let mut p = format!("{ROUTER_MARKER}\n\nRequest: {request}\n\nDepartments:\n");
    for d in departments {
        let keywords: Vec<&str> = d.keywords.iter().map(|k| k.phrase.as_str()).collect();
        p.push_str(&format!(
            "- id: {} | name: {} | description: {} | keywords: {}\n",
            d.id,
            d.name,
            crate::text::excerpt(&d.description, 300),
            keywords.join(", ")
        ));
    }
    p.push_str(
        "\nReply with one JSON object and nothing else:\n\
         {\"departments\": [{\"id\": \"…\", \"relevance\": 0.9, \"reason\": \"…\"}], \"complexity\": \"simple\"}\n\
         List the departments that should work on the request, each with a relevance from 0 to 1 \
         and a short reason; complexity is simple, moderate or complex.",
    );
    p
}

/// The router's prompt when the config asks for clarification: [`router`]'s,
/// asking also for its confidence, the critical information missing and its questions.
pub fn router_clarifying(request: &str, departments: &[crate::config::Department]) -> String {
    let mut p = router(request, departments);
    p.push_str(
        "\nAlso give \"confidence\" (0 to 1: how sure you are which departments the request means), \
         \"missing\" (the critical information the request lacks, if any) and \"questions\" \
         (what to ask the user to get it), for example \
         {\"confidence\": 0.4, \"missing\": [\"the outlet\"], \"questions\": [\"Which outlet do you mean?\"]}.",
    );
    p
}

/// A specialist's passing output, for the synthesis prompt.
pub struct SynthesisInput<'a> {
    /// The specialist's name.
    pub name: &'a str,
    /// Its specialization.
    pub specialization: &'a str,
    /// Its score.
    pub score: f64,
    /// The specialist's best output.
    pub output: &'a str,
}

/// The head's synthesis prompt.
pub fn synthesis(request: &str, inputs: &[SynthesisInput]) -> String {
    let mut p = format!(
        "{ORIGINAL_REQUEST_LINE}{request}\n\n\
         {SYNTHESIS_MARKER} the following specialist outputs \
         into a cohesive final result:\n"
    );
    for (i, s) in inputs.iter().enumerate() {
        p.push_str(&format!(
            "\n## Specialist {}: {} ({})\nQuality Score: {}\nOutput: {}\n",
            i + 1,
            s.name,
            s.specialization,
            crate::text::fmt_score(s.score),
            s.output
        ));
    }
    p.push_str(
        "\nPlease synthesize these outputs into a cohesive, high-quality final result that addresses \
         the original request. Write something new, not a concatenation.",
    );
    p
}

/// The master's summary prompt over every successful department's output.
pub fn summary(request: &str, outputs: &[(&str, &str)]) -> String {
    let mut p = format!(
        "{ORIGINAL_REQUEST_LINE}{request}\n\n{SUMMARY_MARKER} what the departments \
         produced into one unified result: what was made, how the pieces fit, what is still open.\n"
    );
    for (dept, output) in outputs {
        p.push_str(&format!("\n## {dept}\n{output}\n"));
    }
    p
}

/// The first line of every reviewer prompt; the simulated provider recognises it.
pub const REVIEW_MARKER: &str = "REVIEW THE DEPARTMENTS' OUTPUTS TOGETHER.";
/// Starts each department's block in a reviewer prompt.
pub const REVIEW_DEPARTMENT: &str = "--- department: ";
/// Starts each issue line of a revision prompt.
pub const REVISION_REQUEST: &str = "REVISION REQUEST: ";

/// A successful department's output, as the reviewer reads it.
pub struct Reviewed<'a> {
    /// The department's id (the reviewer names conflicts by it).
    pub id: &'a str,
    /// Its name.
    pub name: &'a str,
    /// Its quality score.
    pub quality: f64,
    /// Its current output.
    pub output: &'a str,
}

/// The reviewer's prompt: review `number` of the request's successful
/// departments, each under a `--- department: ID | NAME | quality Q` line, and the reply wanted.
pub fn review(request: &str, number: u32, departments: &[Reviewed]) -> String {
    let mut p = format!("{REVIEW_MARKER}\nReview: {number}\n\nRequest: {request}\n");
    for d in departments {
        p.push_str(&format!(
            "\n{REVIEW_DEPARTMENT}{} | {} | quality {}\n{}\n",
            d.id,
            d.name,
            crate::text::fmt_score(d.quality),
            d.output
        ));
    }
    p.push_str(
        "\nDo these outputs agree with each other (names, facts, looks, events, tone)? \
         Reply with one JSON object and nothing else:\n\
         {\"consistent\": false, \"conflicts\": [{\"departments\": [\"id\", \"id\"], \"issue\": \"…\"}]}\n\
         Name each conflict by the ids of the departments that disagree and say what they disagree on; \
         consistent is true and conflicts empty when they all agree.",
    );
    p
}

/// A department head's revision prompt: one `REVISION REQUEST: <issue>` line per
/// issue, the request, the other named departments' outputs, and its own output.
pub fn revision(request: &str, issues: &[&str], others: &[Reviewed], own: &Reviewed) -> String {
    let mut p: String = issues.iter().map(|i| format!("{REVISION_REQUEST}{i}\n")).collect();
    p.push_str(&format!("\n{ORIGINAL_REQUEST_LINE}{request}\n"));
    for d in others {
        p.push_str(&format!(
            "\nOUTPUT OF {} ({}):\n{}\n",
            d.id.to_uppercase(),
            d.name,
            d.output
        ));
    }
    p.push_str(&format!(
        "\nYOUR OUTPUT ({}):\n{}\n\nRevise your output so that it agrees with the other departments \
         on the issues above. Reply with the whole revised output.",
        own.id.to_uppercase(),
        own.output
    ));
    p
}

/// How a judged expectation's request begins: the answer a person receives follows.
pub const JUDGED_ANSWER: &str = "ANSWER:\n";
/// The heading of a judged expectation's numbered criteria.
pub const JUDGED_CRITERIA: &str = "\n\nCRITERIA:";
/// The heading of the reference a judged answer must agree with.
pub const JUDGED_REFERENCE: &str = "\n\nREFERENCE:\n";
/// The start of `orch optimize`'s reflection request: the agent's instructions follow,
/// exactly as they are (the simulated provider knows a reflection by it).
pub const REFLECTION_MARKER: &str = "CURRENT INSTRUCTIONS:\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_prompt_is_exactly_the_spec() {
        let p = retry("Design Aladdin", "a sketch", &[feedback_line(58.0, 65, "")]);
        assert_eq!(
            p,
            "ORIGINAL REQUEST: Design Aladdin\n\nPREVIOUS ATTEMPT FAILED: a sketch\n\nFEEDBACK FROM PREVIOUS ATTEMPTS:\n\
             Quality score 58 below threshold 65. Improve quality, relevance, and consistency.\n\n\
             INSTRUCTIONS:\nRetry with improvements. Focus on quality, relevance, consistency."
        );
    }

    #[test]
    fn feedback_lines_carry_the_graders_words() {
        assert_eq!(
            feedback_line(40.5, 70, "Add a palette."),
            "Quality score 40.5 below threshold 70. Improve quality, relevance, and consistency. Add a palette."
        );
    }

    #[test]
    fn truncation_has_its_own_line() {
        assert_eq!(
            truncated_line(256),
            "Output was cut off at the length limit (256 tokens). Be more concise."
        );
    }

    #[test]
    fn synthesis_lists_each_specialist() {
        let p = synthesis(
            "Create Aladdin",
            &[SynthesisInput {
                name: "Appearance Specialist",
                specialization: "appearance",
                score: 72.0,
                output: "vest",
            }],
        );
        assert!(p.starts_with("Original request: Create Aladdin\n\nYou are the department head."));
        assert!(p.contains("## Specialist 1: Appearance Specialist (appearance)\nQuality Score: 72\nOutput: vest\n"));
    }
}
