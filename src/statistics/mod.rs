//! The statistics every analysis shares, one implementation each: Fisher's exact test of
//! two pass rates, the Wilson interval of one, the exact McNemar test of paired verdicts,
//! binomial coefficients and pass^k, and a rule's agreement with a person (κ, Youden's J).
//! `compare`, `stats`, `tune` and `optimize` use them from here.

mod agreement;
mod binomial;
mod fisher;
mod mcnemar;
mod pass_hat_k;
mod wilson;

pub use agreement::Agreement;
pub use fisher::two_sided as fisher_two_sided;
pub use mcnemar::Mcnemar;
pub use pass_hat_k::PassHatK;
pub use wilson::interval as wilson_interval;
