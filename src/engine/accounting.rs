//! What one call to a provider spent, counted into a usage: pure arithmetic, so
//! the numbers a report shows can be checked without a provider.

use crate::config::{Price, Tokens};
use crate::report::Usage;

/// What a provider's outcome says one call spent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spend {
    /// Retries the HTTP layer made inside the call (not quality attempts).
    pub transport_retries: u32,
    /// Answered from the `--cache` file: not bought again, so free.
    pub cached: bool,
    /// Answered by a batch: priced at the model's `batch` share.
    pub batched: bool,
    /// The model's price, `None` when the config has none.
    pub price: Option<Price>,
    /// The reply's tokens, when there is a reply.
    pub tokens: Option<Tokens>,
}

/// What the run's budgets are charged for a call that answered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Charge {
    /// Prompt and completion tokens together.
    pub tokens: u64,
    /// Its cost in USD (0 when cached or unpriced).
    pub usd: f64,
}

/// Counts one call into `usage`: the call, its transport retries, whether it was cached or
/// unpriced and, when it answered, its tokens and cost. Returns what the budgets are
/// charged, nothing for a call without a reply. Saturating: the numbers come from servers,
/// and none may wrap a sum.
pub fn record(usage: &mut Usage, spend: &Spend) -> Option<Charge> {
    usage.calls += 1;
    usage.transport_retries = usage
        .transport_retries
        .saturating_add(u64::from(spend.transport_retries));
    let price = if spend.cached {
        usage.cached_calls += 1;
        Some(Price::default())
    } else {
        spend.price
    };
    if price.is_none() {
        usage.unpriced_calls += 1;
    }
    let tokens = spend.tokens?;
    usage.prompt_tokens = usage.prompt_tokens.saturating_add(tokens.prompt);
    usage.completion_tokens = usage.completion_tokens.saturating_add(tokens.completion);
    usage.cache_read_tokens = usage.cache_read_tokens.saturating_add(tokens.cache_read);
    usage.cache_write_tokens = usage.cache_write_tokens.saturating_add(tokens.cache_write);
    if spend.batched {
        usage.batched_calls += 1;
    }
    let share = |p: &Price| if spend.batched { p.batch } else { 1.0 };
    let usd = price.map_or(0.0, |p| p.cost(&tokens) * share(&p));
    usage.cost_usd += usd;
    Some(Charge {
        tokens: tokens.prompt.saturating_add(tokens.completion),
        usd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// USD 2 per million prompt tokens, 8 per million completion tokens.
    fn price() -> Option<Price> {
        Some(Price {
            input: 2.0,
            output: 8.0,
            ..Price::default()
        })
    }

    #[test]
    fn a_priced_reply_counts_its_tokens_and_cost() {
        let mut usage = Usage::default();
        let spend = Spend {
            transport_retries: 2,
            price: price(),
            tokens: Some(Tokens {
                prompt: 1000,
                completion: 500,
                ..Tokens::default()
            }),
            ..Spend::default()
        };
        // (1000 × 2 + 500 × 8) / 1e6
        assert_eq!(
            record(&mut usage, &spend),
            Some(Charge {
                tokens: 1500,
                usd: 0.006
            })
        );
        assert_eq!(
            (
                usage.calls,
                usage.transport_retries,
                usage.prompt_tokens,
                usage.completion_tokens
            ),
            (1, 2, 1000, 500)
        );
        assert_eq!(usage.cost_usd, 0.006);
        assert_eq!((usage.cached_calls, usage.unpriced_calls, usage.fallbacks), (0, 0, 0));
        // A second call adds to the first.
        assert_eq!(
            record(&mut usage, &spend),
            Some(Charge {
                tokens: 1500,
                usd: 0.006
            })
        );
        assert_eq!(
            (usage.calls, usage.transport_retries, usage.prompt_tokens),
            (2, 4, 2000)
        );
        assert_eq!(usage.cost_usd, 0.012);
    }

    #[test]
    fn a_batched_reply_costs_the_model_s_batch_share_and_is_counted() {
        let mut usage = Usage::default();
        let tokens = Some(Tokens {
            prompt: 1000,
            completion: 500,
            ..Tokens::default()
        });
        let half = Spend {
            batched: true,
            price: price().map(|p| Price { batch: 0.5, ..p }),
            tokens,
            ..Spend::default()
        };
        // 1000 * 2 + 500 * 8 = 6000 per million, half of it.
        assert_eq!(record(&mut usage, &half).map(|c| c.usd), Some(0.003));
        assert_eq!((usage.calls, usage.batched_calls), (1, 1));
        let live = Spend { batched: false, ..half };
        assert_eq!(record(&mut usage, &live).map(|c| c.usd), Some(0.006));
        assert_eq!((usage.calls, usage.batched_calls), (2, 1));
    }

    #[test]
    fn a_cached_reply_is_free_and_never_unpriced() {
        for price in [price(), None] {
            let mut usage = Usage::default();
            let spend = Spend {
                cached: true,
                price,
                tokens: Some(Tokens {
                    prompt: 1000,
                    completion: 500,
                    ..Tokens::default()
                }),
                ..Spend::default()
            };
            assert_eq!(record(&mut usage, &spend), Some(Charge { tokens: 1500, usd: 0.0 }));
            assert_eq!((usage.calls, usage.cached_calls, usage.unpriced_calls), (1, 1, 0));
            assert_eq!((usage.prompt_tokens, usage.completion_tokens), (1000, 500));
            assert_eq!(usage.cost_usd, 0.0);
        }
    }

    #[test]
    fn an_unpriced_reply_counts_its_tokens_at_no_cost() {
        let mut usage = Usage::default();
        let spend = Spend {
            tokens: Some(Tokens {
                prompt: 10,
                completion: 20,
                ..Tokens::default()
            }),
            ..Spend::default()
        };
        assert_eq!(record(&mut usage, &spend), Some(Charge { tokens: 30, usd: 0.0 }));
        assert_eq!((usage.calls, usage.unpriced_calls, usage.cached_calls), (1, 1, 0));
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (10, 20));
        assert_eq!(usage.cost_usd, 0.0);
    }

    #[test]
    fn a_call_without_a_reply_counts_the_call_and_its_retries_only() {
        let mut usage = Usage::default();
        let spend = Spend {
            transport_retries: 3,
            price: price(),
            ..Spend::default()
        };
        assert_eq!(record(&mut usage, &spend), None);
        assert_eq!((usage.calls, usage.transport_retries, usage.unpriced_calls), (1, 3, 0));
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens, usage.cost_usd),
            (0, 0, 0.0)
        );
        let unpriced = Spend { price: None, ..spend };
        assert_eq!(record(&mut usage, &unpriced), None);
        assert_eq!((usage.calls, usage.transport_retries, usage.unpriced_calls), (2, 6, 1));
    }

    #[test]
    fn numbers_from_servers_never_wrap() {
        let mut usage = Usage {
            transport_retries: u64::MAX - 1,
            prompt_tokens: u64::MAX - 1,
            ..Usage::default()
        };
        let spend = Spend {
            transport_retries: 5,
            tokens: Some(Tokens {
                prompt: 5,
                completion: u64::MAX,
                ..Tokens::default()
            }),
            ..Spend::default()
        };
        assert_eq!(
            record(&mut usage, &spend),
            Some(Charge {
                tokens: u64::MAX,
                usd: 0.0
            })
        );
        assert_eq!(
            (usage.transport_retries, usage.prompt_tokens, usage.completion_tokens),
            (u64::MAX, u64::MAX, u64::MAX)
        );
    }
}
