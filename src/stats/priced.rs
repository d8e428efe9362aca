//! What tells a cost of $0 from one that is unknown: the calls counted, and those of models
//! without a price.

/// Calls, and those of models without a `[pricing]` entry: what tells a cost of $0 from
/// one that is unknown.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Priced {
    /// LLM calls.
    pub calls: u64,
    /// Of them, calls of unpriced models.
    pub unpriced: u64,
}

impl Priced {
    /// Counts the calls of a usage.
    pub fn add(&mut self, usage: &crate::report::Usage) {
        self.calls = self.calls.saturating_add(usage.calls);
        self.unpriced = self.unpriced.saturating_add(usage.unpriced_calls);
    }
}
