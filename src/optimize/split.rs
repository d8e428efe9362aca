//! The split of the selected cases into training and validation: each case's slot is FNV-1a
//! 64 of `SEED + "\n" + caseId`, mod 10,000; a slot below `share × 10,000` is validation,
//! the rest training. The same seed and ids give the same split on every machine.

/// Whether the case `id` falls on the validation side for `seed` and `share` (0..=1).
pub fn is_validation(seed: &str, id: &str, share: f64) -> bool {
    let slot = crate::text::fnv1a64(format!("{seed}\n{id}").as_bytes()) % 10_000;
    (slot as f64) < share * 10_000.0
}

/// The indices of `ids` on each side: (training, validation), each in the given order.
pub fn split<'a>(ids: impl Iterator<Item = &'a str>, seed: &str, share: f64) -> (Vec<usize>, Vec<usize>) {
    let (mut training, mut validation) = (Vec::new(), Vec::new());
    for (i, id) in ids.enumerate() {
        match is_validation(seed, id, share) {
            true => validation.push(i),
            false => training.push(i),
        }
    }
    (training, validation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_follows_the_seed_and_the_share() {
        let ids: Vec<String> = (0..200).map(|i| format!("case-{i}")).collect();
        let (t, v) = split(ids.iter().map(String::as_str), "0", 0.3);
        assert_eq!(t.len() + v.len(), 200);
        // FNV-1a 64 of "0\ncase-0" is 3742 mod 10,000 (training at 0.3), of "0\ncase-1" 1953
        // (validation): computed apart from this code.
        assert!(!is_validation("0", "case-0", 0.3) && is_validation("0", "case-1", 0.3));
        assert!(is_validation("0", "case-0", 0.3743) && !is_validation("0", "case-0", 0.3742));
        assert_eq!((v.len(), &v[..8]), (59, &[1, 6, 13, 16, 19, 22, 23, 28][..]));
        let (none, all) = split(ids.iter().map(String::as_str), "0", 0.0);
        assert_eq!((none.len(), all.len()), (200, 0));
        let (again, _) = split(ids.iter().map(String::as_str), "0", 0.3);
        assert_eq!(again, t);
        let (other, _) = split(ids.iter().map(String::as_str), "7", 0.3);
        assert_ne!(other, t);
        let (_, v7) = split(ids.iter().map(String::as_str), "7", 0.3);
        assert_eq!((v7.len(), &v7[..8]), (61, &[1, 2, 6, 7, 16, 17, 18, 21][..]));
    }
}
