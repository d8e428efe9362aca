//! A long text cut to a budget of bytes, keeping its head and its tail (SPEC §15: a tool's
//! result longer than `maxToolResultBytes` before the model sees it).

/// `text` as it is when it fits in `max` bytes, and 0; else its first three quarters and its
/// last quarter of `max` bytes, each on character boundaries (so never more), around the
/// line `[… N bytes cut …]`, and N. The head and tail keep a model's view of both ends: the
/// start of a listing and the end of a log both matter.
pub fn cut_middle(text: &str, max: usize) -> (String, usize) {
    if text.len() <= max {
        return (text.to_string(), 0);
    }
    let head_budget = max / 4 * 3 + max % 4 * 3 / 4;
    let tail_budget = max - head_budget;
    let head_end = floor_boundary(text, head_budget);
    let tail_start = ceil_boundary(text, text.len() - tail_budget).max(head_end);
    let cut = tail_start - head_end;
    let text = format!("{}\n[… {cut} bytes cut …]\n{}", &text[..head_end], &text[tail_start..]);
    (text, cut)
}

/// The largest character boundary of `text` at or before `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut i = at.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary of `text` at or after `at`.
fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut i = at.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_that_fits_is_kept_whole() {
        assert_eq!(cut_middle("abcdefgh", 8), ("abcdefgh".to_string(), 0));
        assert_eq!(cut_middle("", 0), (String::new(), 0));
    }

    #[test]
    fn three_quarters_of_the_budget_from_the_head_and_one_from_the_tail() {
        let text: String = ('a'..='z').collect();
        // Budget 8: 6 bytes of head, 2 of tail, 18 cut.
        assert_eq!(cut_middle(&text, 8), ("abcdef\n[… 18 bytes cut …]\nyz".to_string(), 18));
        // Budget 10: 7 (three quarters, rounded down) and 3.
        assert_eq!(
            cut_middle(&text, 10),
            ("abcdefg\n[… 16 bytes cut …]\nxyz".to_string(), 16)
        );
    }

    #[test]
    fn multibyte_characters_are_never_split() {
        // Each `é` is 2 bytes, each `€` 3: 10 of them are 30 bytes.
        let euros = "€".repeat(10);
        // Head budget 9 holds 3 euros; tail budget 3 holds 1.
        let (text, cut) = cut_middle(&euros, 12);
        assert_eq!(text, "€€€\n[… 18 bytes cut …]\n€");
        assert_eq!(cut, 18);
        // Head budget 6 holds 2 euros (not 2⅔); tail budget 2 holds none (not ⅔).
        let (text, cut) = cut_middle(&euros, 8);
        assert_eq!(text, "€€\n[… 24 bytes cut …]\n");
        assert_eq!(cut, 24);
        let mixed = "é€é€é€é€";
        let (text, cut) = cut_middle(mixed, 9);
        // Head 6 bytes: é€ (5), not splitting the next é; tail 3: €.
        assert_eq!(text, "é€\n[… 12 bytes cut …]\n€");
        assert_eq!(cut, mixed.len() - 5 - 3);
    }

    #[test]
    fn what_is_kept_plus_what_is_cut_is_the_whole() {
        let text = "line one\nline two ✓\nline three ✗\n".repeat(50);
        for max in [0, 1, 7, 64, 100, 1000] {
            let (shown, cut) = cut_middle(&text, max);
            let marker = format!("\n[… {cut} bytes cut …]\n");
            let (head, tail) = shown.split_once(&marker).unwrap();
            assert!(head.len() + tail.len() <= max, "budget {max}");
            assert_eq!(head.len() + cut + tail.len(), text.len(), "budget {max}");
            assert!(text.starts_with(head) && text.ends_with(tail));
        }
    }
}
