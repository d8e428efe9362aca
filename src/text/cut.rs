//! A long text cut to a budget of bytes, keeping its head and its tail (a tool's
//! result longer than `maxToolResultBytes` before the model sees it).

/// `text` as it is when it fits in `max` bytes, and 0; else its first three quarters and its
/// last quarter of `max` bytes, each on character boundaries (so never more), around the
/// line `[… N bytes cut …]`, and N. The head and tail keep a model's view of both ends: the
/// start of a listing and the end of a log both matter.
pub fn cut_middle(text: &str, max: usize) -> (String, usize) {
    if text.len() <= max {
        return (text.to_string(), 0);
    }
    let (head_budget, tail_budget) = budgets(max);
    let head_end = floor_boundary(text, head_budget);
    let tail_start = ceil_boundary(text, text.len() - tail_budget).max(head_end);
    let cut = tail_start - head_end;
    let text = format!("{}\n[… {cut} bytes cut …]\n{}", &text[..head_end], &text[tail_start..]);
    (text, cut)
}

/// The budgets of the head and the tail of a cut to `max` bytes.
fn budgets(max: usize) -> (usize, usize) {
    let head = max / 4 * 3 + max % 4 * 3 / 4;
    (head, max - head)
}

/// The largest text a stand-in is made for (256 MiB): a line claiming more cut is taken
/// as it is.
const MAX_STAND_IN: usize = 256 << 20;

/// A text that [`cut_middle`] to `max` cuts to `shown` with `cut` bytes cut, when `shown` is
/// such a cut (else `None`): its head and tail around `cut` bytes of filler, whose first and
/// last characters are wide enough to move the cut's boundaries exactly where the whole's
/// characters put them. What a journal or cassette keeps of a long result (the text the
/// model saw) is thus given to the engine again as a result it cuts to the same text.
pub fn stand_in(shown: &str, cut: usize, max: usize) -> Option<String> {
    let (head_budget, tail_budget) = budgets(max);
    let marker = format!("\n[… {cut} bytes cut …]\n");
    let head_len = (head_budget.saturating_sub(3)..=head_budget)
        .find(|&at| shown.is_char_boundary(at) && shown[at..].starts_with(&marker))?;
    let tail = &shown[head_len + marker.len()..];
    let (head_gap, tail_gap) = (head_budget - head_len, tail_budget.checked_sub(tail.len())?);
    if tail_gap > 3 || cut == 0 || cut > MAX_STAND_IN {
        return None;
    }
    let wide = |n: usize| ['a', 'é', '€', '𝄞'][n - 1];
    let filler = if cut <= 4 && cut > head_gap && cut > tail_gap {
        wide(cut).to_string()
    } else {
        let (first, last) = (head_gap + 1..=4)
            .flat_map(|f| (tail_gap + 1..=4).map(move |l| (f, l)))
            .find(|(f, l)| f + l <= cut)?;
        format!("{}{}{}", wide(first), "a".repeat(cut - first - last), wide(last))
    };
    let whole = format!("{}{filler}{tail}", &shown[..head_len]);
    (cut_middle(&whole, max) == (shown.to_string(), cut)).then_some(whole)
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
    fn a_stand_in_cuts_to_what_the_whole_cut_to() {
        let texts = [
            "line one\nline two ✓\nline three ✗\n".repeat(50),
            "€".repeat(10),
            "é€é€é€é€".to_string(),
            "a𝄞b€c".repeat(7),
            "𝄞".repeat(9),
        ];
        for text in &texts {
            for max in 0..80 {
                let (shown, cut) = cut_middle(text, max);
                let again = stand_in(&shown, cut, max);
                if cut == 0 {
                    assert_eq!(again, None, "nothing was cut");
                    continue;
                }
                let again = again.unwrap_or_else(|| panic!("{text:?} at {max}"));
                assert_eq!(again.len(), text.len());
                assert_eq!(cut_middle(&again, max), (shown.clone(), cut), "{text:?} at {max}");
            }
        }
        // Another budget, or a text that is no cut, has none.
        let (shown, cut) = cut_middle(&texts[0], 64);
        assert_eq!(stand_in(&shown, cut, 128), None);
        assert_eq!(stand_in("plain", 3, 4), None);
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
