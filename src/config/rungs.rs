//! Model ladders, once the config is read: `escalate` checked (only specialists
//! escalate, each rung's providers exist), and the providers and model each rung asks.

use super::diagnostic::Diagnostic;
use super::model::{Agent, Config};
use super::types::Role;
use super::wire::WireConfig;

/// Checks every `escalate`: only specialists escalate, and each rung's providers exist.
/// `providers` are the names a config may use; `unknown` words a missing one.
pub fn check(wire: &WireConfig, providers: &[&str], unknown: impl Fn(&str) -> String, out: &mut Vec<Diagnostic>) {
    for a in &wire.agents {
        let Some(ladder) = &a.escalate else {
            continue;
        };
        if a.role.value != Role::Specialist && !ladder.value.is_empty() {
            out.push(Diagnostic::error(
                &a.file,
                ladder.pos,
                "invalid-value",
                format!(
                    "agent `{}` has role {}: `escalate` is for specialists only (heads, judges, routers and masters never escalate)",
                    a.id.value, a.role.value
                ),
            ));
        }
        for p in ladder.value.iter().flat_map(|r| r.provider.iter()).flat_map(|c| &c.0) {
            if !providers.contains(&p.value.as_str()) {
                out.push(Diagnostic::error(
                    &a.file,
                    p.pos,
                    "missing-reference",
                    unknown(&p.value),
                ));
            }
        }
    }
}

impl Config {
    /// The top rung of an agent's ladder: 0 without `escalate`.
    pub fn top_rung(&self, agent: &Agent) -> usize {
        agent.escalate.len()
    }

    /// The providers (in fallback order) and the model asked of each on rung `rung` of
    /// `agent` (past the top: the top). Rung 0 is the agent's own, where `--provider` and
    /// `--model` (`override_*`) apply; a higher rung keeps its own, its provider the agent's
    /// own (as configured) when it names none.
    pub fn rung_links(
        &self,
        agent: &Agent,
        rung: usize,
        override_provider: Option<&str>,
        override_model: Option<&str>,
    ) -> Vec<(String, String)> {
        let top = agent.escalate.len().saturating_sub(1);
        let Some(step) = rung.checked_sub(1).and_then(|k| agent.escalate.get(k.min(top))) else {
            return self
                .chain_of(agent, override_provider)
                .into_iter()
                .map(|p| (p.to_string(), self.model_on(agent, p, override_model)))
                .collect();
        };
        let chain: Vec<String> = match &step.provider {
            Some(chain) => chain.clone(),
            None => self.chain_of(agent, None).into_iter().map(str::to_string).collect(),
        };
        chain.into_iter().map(|p| (p, step.model.clone())).collect()
    }

    /// Every provider any rung of `agent` may call (`--provider` replacing rung 0's chain).
    pub fn ladder_providers<'a>(&'a self, agent: &'a Agent, override_provider: Option<&'a str>) -> Vec<String> {
        (0..=self.top_rung(agent))
            .flat_map(|r| self.rung_links(agent, r, override_provider, None))
            .map(|(p, _)| p)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_str;

    const BASE: &str = "providers:\n  local: {kind: openai, baseUrl: \"http://127.0.0.1:1/v1\"}\ndepartments:\n  - {id: d, head: h, keywords: [x]}\n";

    fn agents(extra: &str) -> String {
        format!("{BASE}agents:\n  - {{id: h, role: head, department: d}}\n{extra}")
    }

    #[test]
    fn rungs_resolve_to_providers_and_models() {
        let c = load_str(
            &agents("  - id: s\n    role: specialist\n    department: d\n    model: small\n    escalate:\n      - model: mid\n      - {provider: local, model: big}\n"),
            false,
        )
        .unwrap();
        let s = c.agent("s").unwrap();
        assert_eq!(c.top_rung(s), 2);
        let link = |r, p, m| c.rung_links(s, r, p, m);
        assert_eq!(link(0, None, None), [("simulated".to_string(), "small".to_string())]);
        assert_eq!(link(1, None, None), [("simulated".to_string(), "mid".to_string())]);
        assert_eq!(link(2, None, None), [("local".to_string(), "big".to_string())]);
        assert_eq!(link(5, None, None), link(2, None, None));
        // --provider and --model replace rung 0 only.
        assert_eq!(
            link(0, Some("local"), Some("x")),
            [("local".to_string(), "x".to_string())]
        );
        assert_eq!(link(1, Some("local"), Some("x")), link(1, None, None));
    }

    #[test]
    fn escalate_is_checked() {
        let errors = |yaml: &str| {
            load_str(&agents(yaml), false)
                .unwrap_err()
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            errors("  - {id: j, role: judge, escalate: [{model: big}]}\n"),
            ["orch.yaml:7:36: error: agent `j` has role judge: `escalate` is for specialists only (heads, judges, routers and masters never escalate)"]
        );
        assert_eq!(
            errors("  - {id: s, role: specialist, department: d, escalate: [{provider: locl, model: big}]}\n"),
            ["orch.yaml:7:68: error: unknown provider `locl` (did you mean `local`?)"]
        );
        assert_eq!(
            errors("  - {id: s, role: specialist, department: d, escalate: [{provider: local}]}\n"),
            ["orch.yaml:7:57: error: a rung of `escalate` needs `model`"]
        );
        assert_eq!(
            errors("  - {id: s, role: specialist, department: d, escalate: [{modle: big}]}\n"),
            [
                "orch.yaml:7:58: error: unknown key `modle` in a rung of `escalate` (did you mean `model`?)",
                "orch.yaml:7:57: error: a rung of `escalate` needs `model`"
            ]
        );
    }
}
