//! The statistics every analysis shares, one implementation each: Fisher's exact test of
//! two pass rates and the Wilson interval of one. `compare`, `stats` (and what learns from
//! grades) use them from here.

mod fisher;
mod wilson;

pub use fisher::two_sided as fisher_two_sided;
pub use wilson::interval as wilson_interval;
