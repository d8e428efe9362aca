//! A judge's feedback that tells the writer nothing: empty, or only words of the judge's own
//! request repeated back (a small model often answers with a piece of its instructions).
//! Such feedback is kept on the attempt but not put in the retry's prompt.

/// `text` lowercased, with punctuation removed and runs of spaces made one.
fn normalized(text: &str) -> String {
    let kept: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                ' '
            }
        })
        .flat_map(char::to_lowercase)
        .collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `feedback` is empty or appears word for word in one of `request` (the texts the
/// judge was sent), both normalised alike.
pub fn echoes(feedback: &str, request: &[&str]) -> bool {
    let feedback = normalized(feedback);
    feedback.is_empty() || request.iter().any(|r| normalized(r).contains(&feedback))
}

#[cfg(test)]
mod tests {
    use super::echoes;

    #[test]
    fn empty_or_repeated_feedback_echoes() {
        let sent = [
            "You grade drafts.",
            "Rate the QUALITY, relevance and consistency of this draft.",
        ];
        assert!(echoes("", &sent));
        assert!(echoes("  ...  ", &sent));
        assert!(echoes("quality, relevance and consistency", &sent));
        assert!(echoes("Rate the quality", &sent));
        assert!(!echoes("Add a colour palette.", &sent));
        assert!(!echoes("rate the palette", &sent));
    }
}
