//! Reasoning text some local models write before their answer (`<think>…</think>`, or
//! `<thinking>…</thinking>`): found at the start of a reply so it can be removed before
//! the reply is graded, parsed, shown or handed on.

/// What [`strip_reasoning`] found at the start of a reply.
#[derive(Debug, PartialEq, Eq)]
pub enum Reasoning<'a> {
    /// No reasoning block: the reply as it came.
    None,
    /// A closed block: the answer after it, and the characters removed (the tags, the
    /// text between them and the whitespace after the closing tag).
    Removed {
        /// The reply without the block.
        answer: &'a str,
        /// Characters removed.
        chars: usize,
    },
    /// A block opened and never closed: there is no answer to tell from the reasoning.
    Unclosed,
}

/// The tags a reasoning block opens and closes with.
pub const REASONING_TAGS: [(&str, &str); 2] = [("<think>", "</think>"), ("<thinking>", "</thinking>")];

/// The reasoning block a reply starts with (after any whitespace), if any.
pub fn strip_reasoning(reply: &str) -> Reasoning<'_> {
    let body = reply.trim_start();
    for (open, close) in REASONING_TAGS {
        let Some(rest) = body.strip_prefix(open) else {
            continue;
        };
        let Some(end) = rest.find(close) else {
            return Reasoning::Unclosed;
        };
        let answer = rest[end + close.len()..].trim_start();
        let removed = &reply[..reply.len() - answer.len()];
        return Reasoning::Removed {
            answer,
            chars: removed.chars().count(),
        };
    }
    Reasoning::None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_block_and_the_whitespace_after_it_are_removed() {
        assert_eq!(
            strip_reasoning("<think>hmm</think>\n\nTeal."),
            Reasoning::Removed {
                answer: "Teal.",
                chars: 20
            }
        );
        assert_eq!(
            strip_reasoning("<thinking>é</thinking>{\"a\":1}"),
            Reasoning::Removed {
                answer: "{\"a\":1}",
                chars: 22
            }
        );
        assert_eq!(strip_reasoning("Teal. <think>x</think>"), Reasoning::None);
        assert_eq!(strip_reasoning("<think>still going"), Reasoning::Unclosed);
    }
}
