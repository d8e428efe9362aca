//! The paired test of a comparison: the cases on both sides are pairs, and the exact
//! McNemar test ([`crate::statistics::Mcnemar`]) asks whether the ones that flipped lean one
//! way more than chance.

pub use crate::statistics::Mcnemar;
