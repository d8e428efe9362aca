//! How well a pass/fail rule agrees with a person's verdicts: Cohen's κ (agreement
//! beyond chance) and Youden's J (true pass rate minus false pass rate), over the 2×2 table of
//! (rule says pass, person says pass).

/// The four counts of a rule's verdicts against a person's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Agreement {
    /// Both pass.
    pub both_pass: u64,
    /// The rule passes what the person failed.
    pub false_pass: u64,
    /// The rule fails what the person passed.
    pub false_fail: u64,
    /// Both fail.
    pub both_fail: u64,
}

impl Agreement {
    /// Cohen's κ = (pₒ − pₑ) / (1 − pₑ); 0 when chance agreement pₑ is 1 (or no verdicts).
    pub fn kappa(&self) -> f64 {
        let n = (self.both_pass + self.false_pass + self.false_fail + self.both_fail) as f64;
        if n == 0.0 {
            return 0.0;
        }
        let observed = (self.both_pass + self.both_fail) as f64 / n;
        let rule_pass = (self.both_pass + self.false_pass) as f64 / n;
        let person_pass = (self.both_pass + self.false_fail) as f64 / n;
        let chance = rule_pass * person_pass + (1.0 - rule_pass) * (1.0 - person_pass);
        if chance >= 1.0 {
            return 0.0;
        }
        (observed - chance) / (1.0 - chance)
    }

    /// The share of the person's passes the rule passes (0 without any).
    pub fn true_pass_rate(&self) -> f64 {
        ratio(self.both_pass, self.both_pass + self.false_fail)
    }

    /// The share of the person's fails the rule passes (0 without any).
    pub fn false_pass_rate(&self) -> f64 {
        ratio(self.false_pass, self.false_pass + self.both_fail)
    }

    /// Youden's J = true pass rate − false pass rate, in [−1, 1].
    pub fn youden(&self) -> f64 {
        self.true_pass_rate() - self.false_pass_rate()
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::Agreement;

    fn table(both_pass: u64, false_pass: u64, false_fail: u64, both_fail: u64) -> Agreement {
        Agreement {
            both_pass,
            false_pass,
            false_fail,
            both_fail,
        }
    }

    #[test]
    fn kappa_matches_published_examples() {
        // Wikipedia, "Cohen's kappa", worked example: 20 yes/yes, 5 and 10 disagreements,
        // 15 no/no → pₒ = 0.7, pₑ = 0.5, κ = 0.4; its second table (45, 15, 25, 15) → 0.1304
        // (3/23 in exact fractions, as sklearn's cohen_kappa_score gives).
        assert!((table(20, 5, 10, 15).kappa() - 0.4).abs() < 1e-12);
        assert!((table(45, 15, 25, 15).kappa() - 3.0 / 23.0).abs() < 1e-12);
        assert!((table(8, 2, 1, 9).kappa() - 0.7).abs() < 1e-12);
        assert_eq!(table(10, 0, 0, 10).kappa(), 1.0);
        assert_eq!(table(5, 5, 5, 5).kappa(), 0.0);
        // Chance agreement 1 (everyone passes everything): κ is 0, not NaN.
        assert_eq!(table(10, 0, 0, 0).kappa(), 0.0);
        assert_eq!(table(0, 0, 0, 0).kappa(), 0.0);
    }

    #[test]
    fn rates_and_youden_by_hand() {
        let t = table(20, 5, 10, 15);
        assert!((t.true_pass_rate() - 20.0 / 30.0).abs() < 1e-12);
        assert!((t.false_pass_rate() - 0.25).abs() < 1e-12);
        assert!((t.youden() - (20.0 / 30.0 - 0.25)).abs() < 1e-12);
        assert_eq!(table(0, 3, 0, 0).true_pass_rate(), 0.0);
    }
}
