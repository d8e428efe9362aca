//! The settings file (`orch.toml` / `orch.yaml`), one line per key: each line is
//! the key's name, doc, rule, wire type, resolved type and default. A new key is one line.

use strum::VariantNames;

use super::decode::{section, Chain, Decoder, FromNode};
use super::definitions::{AgentKeys, AgentWire, DepartmentKeys, DepartmentWire};
use super::mcp::{McpServerEntry, McpServerWire};
use super::node::{At, Node, Value};
use super::spec::{KeySpec, Rule, MAX_OUTPUT_TOKENS, MAX_TOOL_CALLS, TEMPERATURE, TIMEOUT, UNIT};
use super::types::{
    CacheTtl, GradingMethod, GradingScale, PromptCache, ProviderKind, RoutingMethod, StructuredOutput, TokenField,
    MAX_BACKOFF_BASE_SECS, MAX_BACKOFF_CAP_SECS, MAX_CONTEXT_TOKENS, MAX_TIMEOUT_SECS, MIN_CONTEXT_TOKENS,
};

/// The default list of words that make a request `complex`.
pub const DEFAULT_COMPLEX_TERMS: &[&str] = &[
    "comprehensive",
    "detailed",
    "in-depth",
    "analyze",
    "analysis",
    "compare",
    "research",
    "strategy",
    "plan",
    "multi-step",
    "evaluate",
    "integrate",
];

/// The default words that make a request urgent.
pub const DEFAULT_URGENT_TERMS: &[&str] = &[
    "urgent",
    "urgently",
    "asap",
    "immediately",
    "now",
    "quickly",
    "hurry",
    "fast",
];

section! {
    /// `[defaults]` as written.
    DefaultsWire => /// `[defaults]`: what agents get unless they say otherwise.
    Defaults, "[defaults]" {
        /// The threshold of last resort, when neither the agent nor its department sets one.
        passing_threshold "passingThreshold": u32 => u32 = 60, Rule::count(0, 100);
        /// Quality retries of a specialist without its own `maxRetries`.
        max_retries "maxRetries": u32 => u32 = 3, Rule::count(0, 10);
        /// Seconds for one call, transport retries included.
        timeout "timeout": f64 => f64 = 300.0, TIMEOUT;
        /// Sampling temperature of agents without their own.
        temperature "temperature": f64 => f64 = 0.7, TEMPERATURE;
        /// The provider of agents without their own: a name, or a fallback chain of names.
        provider "provider": Chain => Vec<String> = vec!["simulated".into()], Rule::Chain;
        /// The model of agents without their own ("": the provider's model).
        model "model": String => String = String::new(), Rule::Text;
        /// Tokens one reply may have (0: the provider's default; anthropic then sends 4096).
        max_output_tokens "maxOutputTokens": u32 => u32 = 0, Rule::count(0, MAX_OUTPUT_TOKENS);
        /// Tool calls one attempt of an agent with tools may make.
        max_tool_calls "maxToolCalls": u32 => u32 = 8, Rule::count(0, MAX_TOOL_CALLS);
        /// Bytes of one tool result the model sees; a longer result is cut.
        max_tool_result_bytes "maxToolResultBytes": u64 => u64 = 32_768, Rule::count(256, 16 << 20);
    }
}

section! {
    /// `[routing]` as written.
    RoutingWire => /// `[routing]`: how a request finds its departments.
    Routing, "[routing]" {
        /// Supporting departments score strictly above it.
        supporting_threshold "supportingThreshold": f64 => f64 = 0.3, UNIT;
        /// The weight of a keyword given without one.
        keyword_weight "keywordWeight": f64 => f64 = 0.35, Rule::above(0.0, 1.0, "");
        /// The department used when nothing matches.
        fallback_department "fallbackDepartment": At<String> => String, Rule::Reference;
        /// `keywords`, `llm` (the router decides) or `hybrid` (the larger relevance of both).
        method "method": At<RoutingMethod> => RoutingMethod = RoutingMethod::Keywords,
            Rule::Choice(RoutingMethod::VARIANTS);
        /// The agent (role `router`) asked when the method is `llm` or `hybrid`.
        router "router": At<String> => String, Rule::Reference;
        /// Words that make a request complex.
        complex_terms "complexTerms": Vec<String> => Vec<String> =
            DEFAULT_COMPLEX_TERMS.iter().map(|t| t.to_string()).collect(), Rule::Strings;
        /// A file of learned success rates (`orch stats --success-rates`), relative to the config root.
        success_rates "successRates": At<String> => String = String::new(), Rule::Text;
        /// Ask for clarification when the routing confidence is below it (0 = never ask).
        clarify_below "clarifyBelow": f64 => f64 = 0.0, UNIT;
        /// Words that make a request urgent (whole words, as keywords match).
        urgent_terms "urgentTerms": Vec<String> => Vec<String> =
            DEFAULT_URGENT_TERMS.iter().map(|t| t.to_string()).collect(), Rule::Strings;
        /// Urgency above it answers at once: no question, no specialists.
        urgent_above "urgentAbove": f64 => f64 = 0.7, UNIT;
    }
}

section! {
    /// `[grading.weights]` as written.
    WeightsWire => /// The weights of the three grading parts; they sum to 1.
    #[derive(Copy)]
    Weights, "`weights`" {
        /// Weight of quality (craft, completeness).
        quality "quality": f64 => f64 = 0.4, UNIT;
        /// Weight of relevance to the request.
        relevance "relevance": f64 => f64 = 0.3, UNIT;
        /// Weight of consistency (agrees with itself and its inputs).
        consistency "consistency": f64 => f64 = 0.3, UNIT;
    }
}

section! {
    /// `[grading]` as written.
    GradingWire => /// `[grading]`: how specialist outputs are scored.
    Grading, "[grading]" {
        /// `heuristic` (no calls) or `llm` (a judge agent grades).
        method "method": At<GradingMethod> => GradingMethod = GradingMethod::default(),
            Rule::Choice(GradingMethod::VARIANTS);
        /// The agent that grades when the method is `llm`.
        judge "judge": At<String> => String, Rule::Reference;
        /// The weights of quality, relevance and consistency.
        weights "weights": At<WeightsWire> => Weights = Weights::default(), Rule::Section(WeightsWire::KEYS);
        /// `score` (0-100 parts) or `pass-fail` (the judge says pass or not: 100 or 0).
        scale "scale": At<GradingScale> => GradingScale = GradingScale::default(),
            Rule::Choice(GradingScale::VARIANTS);
        /// The judge is asked for its grade through structured output.
        structured "structured": bool => bool = true, Rule::Bool;
        /// How many times the judge is asked per attempt; the medians are used.
        samples "samples": u32 => u32 = 1, Rule::count(1, 5);
    }
}

section! {
    /// `[limits]` as written.
    LimitsWire => /// `[limits]`: what one run may spend.
    Limits, "[limits]" {
        /// No call beyond it.
        max_calls "maxCalls": u32 => u32 = 200, Rule::count(1, i64::MAX);
        /// Tokens across the run; 0 = no cap.
        max_tokens "maxTokens": u64 => u64 = 0, Rule::count(0, i64::MAX);
        /// USD the whole run may spend, by `[pricing]` (0 = no cap).
        max_cost_usd "maxCostUsd": f64 => f64 = 0.0, Rule::between_noted(0.0, 1e9, " (USD, 0 = none)");
        /// Calls in flight across the run.
        max_concurrency "maxConcurrency": u32 => u32 = 8, Rule::count(1, 1024);
        /// Seconds the whole run may take; then the work not done fails `deadline exceeded` (0 = none).
        deadline "deadline": f64 => f64 = 0.0, Rule::between_noted(0.0, MAX_TIMEOUT_SECS, " (seconds, 0 = none)");
        /// The share of a budget whose spending starts economy: no escalation, supporting departments skipped (0 = off).
        economy_at "economyAt": f64 => f64 = 0.0, Rule::Share;
    }
}

section! {
    /// `[aggregation]` as written.
    AggregationWire => /// `[aggregation]`: how the master ends a run.
    Aggregation, "[aggregation]" {
        /// The master agent writes a summary of every department's output.
        synthesize "synthesize": At<bool> => bool = false, Rule::Bool;
        /// The agent that writes the summary.
        master_agent "masterAgent": At<String> => String, Rule::Reference;
        /// The agent (role judge or master) that checks the departments' outputs together.
        review "review": At<String> => String, Rule::Reference;
        /// Revision rounds the review may ask for.
        max_rounds "maxRounds": u32 => u32 = 1, Rule::count(0, 3);
    }
}

section! {
    /// `[http]` as written.
    HttpWire => /// `[http]`: transport retries of one call.
    #[derive(Copy)]
    Http, "[http]" {
        /// Transport retries of one call (connection errors, 429, 5xx).
        max_retries "maxRetries": u32 => u32 = 4, Rule::count(0, 10);
        /// Seconds; doubled each retry, with full jitter.
        backoff_base "backoffBase": f64 => f64 = 0.5, Rule::between_noted(0.0, MAX_BACKOFF_BASE_SECS, " (seconds)");
        /// Seconds; also the longest `Retry-After` honoured.
        backoff_cap "backoffCap": f64 => f64 = 30.0, Rule::between_noted(0.0, MAX_BACKOFF_CAP_SECS, " (seconds)");
        /// Consecutive failed calls that open a provider's circuit (0 = no breaker).
        circuit_failures "circuitFailures": u32 => u32 = 5, Rule::count(0, 1000);
        /// Seconds an open circuit skips its provider before one probe call.
        circuit_cooldown "circuitCooldown": f64 => f64 = 30.0, Rule::between_noted(0.0, MAX_BACKOFF_CAP_SECS, " (seconds)");
        /// Bytes of one reply body; a longer reply fails the call, read no further.
        max_reply_bytes "maxReplyBytes": u64 => u64 = 8_388_608, Rule::count(1024, 1 << 40);
    }
}

section! {
    /// One `[providers.NAME]` entry as written (resolved in `model.rs`, over its built-in base).
    ProviderWire, "a provider" {
        /// The wire protocol: `openai`, `anthropic` or `simulated` (default: the entry's name).
        kind "kind": At<ProviderKind>, Rule::Choice(ProviderKind::VARIANTS);
        /// Where the API lives (default: the kind's public endpoint).
        base_url "baseUrl": String, Rule::Url;
        /// The NAME of the environment variable holding the API key.
        api_key_env "apiKeyEnv": At<String>, Rule::EnvName;
        /// The model of agents that name none.
        model "model": String, Rule::Text;
        /// Client-side rate limit; 0 = none.
        requests_per_minute "requestsPerMinute": u32, Rule::count(0, i64::MAX);
        /// The request field of the reply cap (openai kind): `max_tokens` or `max_completion_tokens`.
        token_field "tokenField": At<TokenField>, Rule::Choice(TokenField::VARIANTS);
        /// How its server takes a reply's JSON Schema: `json_schema`, `json_object` or `off`.
        structured_output "structuredOutput": At<StructuredOutput>, Rule::Choice(StructuredOutput::VARIANTS);
        /// The context window asked of the server, in tokens (ollama kind; default 8192).
        context_tokens "contextTokens": u32, Rule::count(MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS);
        /// Remove a leading `<think>…</think>` block from replies (default true).
        strip_reasoning "stripReasoning": bool, Rule::Bool;
        /// Whether to ask for prompt caching: `auto` (default) or `off`.
        prompt_cache "promptCache": At<PromptCache>, Rule::Choice(PromptCache::VARIANTS);
        /// How long Anthropic keeps a cached prefix (anthropic kind): `5m` (default) or `1h`.
        cache_ttl "cacheTtl": At<CacheTtl>, Rule::Choice(CacheTtl::VARIANTS);
        /// Send `prompt_cache_key` (openai kind; default: true on OpenAI's own URL only).
        prompt_cache_key "promptCacheKey": At<bool>, Rule::Bool;
    }
}

section! {
    /// One `[pricing.MODEL]` entry as written.
    PriceWire => /// What a model costs, in USD per million tokens.
    #[derive(Copy)]
    Price, "a price" {
        /// USD per million prompt tokens.
        input "input": f64 => f64 = 0.0, Rule::between_noted(0.0, 1e6, " (USD per million tokens)");
        /// USD per million completion tokens.
        output "output": f64 => f64 = 0.0, Rule::between_noted(0.0, 1e6, " (USD per million tokens)");
        /// USD per million prompt tokens read from the provider's prompt cache (default: `input`).
        cache_read "cacheRead": f64 => f64, Rule::between_noted(0.0, 1e6, " (USD per million tokens)");
        /// USD per million prompt tokens written to the provider's prompt cache (default: `input`).
        cache_write "cacheWrite": f64 => f64, Rule::between_noted(0.0, 1e6, " (USD per million tokens)");
        /// The share of the price a call answered by a batch costs (`orch test --batch`).
        batch "batch": f64 => f64 = 0.5, UNIT;
    }
}

/// The tokens of one call, as a price reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Every input token, cached ones included.
    pub prompt: u64,
    /// Output tokens.
    pub completion: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
}

impl Price {
    /// USD of one call: uncached input at `input`, cache reads at `cacheRead` and cache
    /// writes at `cacheWrite` (each `input` when unset), output at `output`.
    pub fn cost(&self, t: &Tokens) -> f64 {
        let uncached = t.prompt.saturating_sub(t.cache_read).saturating_sub(t.cache_write);
        let read = self.cache_read.unwrap_or(self.input);
        let write = self.cache_write.unwrap_or(self.input);
        (uncached as f64 * self.input
            + t.cache_read as f64 * read
            + t.cache_write as f64 * write
            + t.completion as f64 * self.output)
            / 1e6
    }

    /// USD of a call at the worst: every input token at the dearer of `input` and
    /// `cacheWrite` (a plan cannot know what the cache will hold).
    pub fn worst_cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        let input = self.input.max(self.cache_write.unwrap_or(0.0));
        (prompt_tokens as f64 * input + completion_tokens as f64 * self.output) / 1e6
    }
}

/// A mapping under a name chosen by the user (`[pricing."gpt-4o-mini"]`).
#[derive(Clone, Debug)]
pub struct Named<T> {
    /// The name, where it is written.
    pub name: At<String>,
    /// The mapping.
    pub value: T,
}

impl<T: FromNode> FromNode for Vec<Named<T>> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, _what: &str) -> Option<Self> {
        let Value::Map(entries) = &node.value else {
            d.type_error(node, &format!("`{}`", key.name), "a mapping of names to settings");
            return None;
        };
        let out = entries
            .iter()
            .filter_map(|(name, value)| {
                let value = T::from_node(d, value, key, "")?;
                Some(Named {
                    name: At {
                        value: name.name.clone(),
                        pos: name.pos,
                    },
                    value,
                })
            })
            .collect();
        Some(out)
    }
}

/// A named provider: `[providers.NAME]` with its kind settled.
#[derive(Clone, Debug)]
pub struct ProviderEntry {
    /// NAME, where it is written.
    pub name: At<String>,
    /// The kind, from `kind` or the name.
    pub kind: ProviderKind,
    /// The rest of the entry.
    pub keys: ProviderWire,
}

impl FromNode for Vec<ProviderEntry> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, _what: &str) -> Option<Self> {
        let Value::Map(entries) = &node.value else {
            d.type_error(node, "`providers`", "a mapping of provider names to settings");
            return None;
        };
        let mut out = Vec::new();
        for (name, value) in entries {
            let Some(keys) = ProviderWire::from_node(d, value, key, "") else {
                continue;
            };
            let kind = match &keys.kind {
                Some(k) => k.value,
                None if !value.has_key("kind") => match name.name.parse::<ProviderKind>() {
                    Ok(k) => k,
                    Err(_) => {
                        d.error(
                            value.pos,
                            "missing-key",
                            format!(
                                "provider `{}` needs `kind` ({})",
                                name.name,
                                ProviderKind::VARIANTS.join(", ")
                            ),
                        );
                        continue;
                    }
                },
                None => continue,
            };
            out.push(ProviderEntry {
                name: At {
                    value: name.name.clone(),
                    pos: name.pos,
                },
                kind,
                keys,
            });
        }
        Some(out)
    }
}

section! {
    /// `orch.toml` / `orch.yaml` as written.
    SettingsWire, "the settings file" {
        /// What agents get unless they say otherwise.
        defaults "defaults": DefaultsWire, Rule::Section(DefaultsWire::KEYS);
        /// How a request finds its departments.
        routing "routing": RoutingWire, Rule::Section(RoutingWire::KEYS);
        /// How specialist outputs are scored.
        grading "grading": GradingWire, Rule::Section(GradingWire::KEYS);
        /// What one run may spend.
        limits "limits": LimitsWire, Rule::Section(LimitsWire::KEYS);
        /// How the master ends a run.
        aggregation "aggregation": AggregationWire, Rule::Section(AggregationWire::KEYS);
        /// Transport retries of one call.
        http "http": HttpWire, Rule::Section(HttpWire::KEYS);
        /// Named providers.
        providers "providers": Vec<ProviderEntry>, Rule::Named(ProviderWire::KEYS);
        /// USD per million tokens, by model name.
        pricing "pricing": Vec<Named<PriceWire>>, Rule::Named(PriceWire::KEYS);
        /// MCP servers whose tools agents may use, by name.
        mcp_servers "mcpServers": Vec<McpServerEntry>, Rule::Servers(McpServerWire::KEYS);
        /// Departments defined inline.
        departments "departments": Vec<DepartmentWire>, Rule::Definitions(DepartmentKeys::KEYS);
        /// Agents defined inline.
        agents "agents": Vec<AgentWire>, Rule::Definitions(AgentKeys::KEYS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::definitions::{AgentKeys, DepartmentKeys};
    use crate::config::mcp::ToolKeys;

    fn every_key(keys: &'static [KeySpec], out: &mut Vec<&'static KeySpec>) {
        for k in keys {
            out.push(k);
            if let Rule::Section(inner) = k.rule {
                every_key(inner, out);
            }
        }
    }

    #[test]
    fn the_config_reference_lists_every_key_with_a_doc() {
        let readme = include_str!("../../docs/config.md");
        let start = readme.find("# Config reference").expect("a config reference");
        let reference = &readme[start..];
        let reference = &reference[..reference[2..].find("\n## Routing").map_or(reference.len(), |e| e + 2)];
        let words: std::collections::HashSet<&str> = reference.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        let mut keys = Vec::new();
        for table in [
            SettingsWire::KEYS,
            ProviderWire::KEYS,
            McpServerWire::KEYS,
            DepartmentKeys::KEYS,
            AgentKeys::KEYS,
            ToolKeys::KEYS,
        ] {
            every_key(table, &mut keys);
        }
        assert!(keys.len() > 50, "{}", keys.len());
        for k in keys {
            assert!(words.contains(k.name), "docs/config.md's reference lacks `{}`", k.name);
            assert!(k.doc.trim().ends_with('.'), "`{}` needs a one-sentence doc", k.name);
        }
    }

    #[test]
    fn defaults_are_the_seed_numbers() {
        let d = Defaults::default();
        assert_eq!(
            (d.passing_threshold, d.max_retries, d.timeout, d.temperature),
            (60, 3, 300.0, 0.7)
        );
        assert_eq!(d.provider, ["simulated"]);
        let r = Routing::default();
        assert_eq!((r.supporting_threshold, r.keyword_weight), (0.3, 0.35));
        assert_eq!(r.complex_terms.len(), 12);
        let w = Grading::default().weights;
        assert_eq!((w.quality, w.relevance, w.consistency), (0.4, 0.3, 0.3));
        let l = Limits::default();
        assert_eq!((l.max_calls, l.max_tokens, l.max_concurrency), (200, 0, 8));
        let h = Http::default();
        assert_eq!((h.max_retries, h.backoff_base, h.backoff_cap), (4, 0.5, 30.0));
    }
}
