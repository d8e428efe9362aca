//! Variants, once the config is read: `variants` checked (specialists and heads only, no
//! `control`, weights at most 1, providers that exist, `escalate` only on a specialist's
//! variant), and a variant's settings laid over the agent as written ("control").

use super::diagnostic::Diagnostic;
use super::model::Agent;
use super::types::Role;
use super::variants::{basis_points, Assigned, Variant, BASIS, CONTROL};
use super::wire::WireConfig;

/// Checks every agent's `variants`: specialists and heads only, no `control`, weights at
/// most 10,000 basis points in all, not both `temperature` and its execution setting, no
/// `escalate` on a head's variant, and each provider named exists.
pub fn check(wire: &WireConfig, providers: &[&str], unknown: impl Fn(&str) -> String, out: &mut Vec<Diagnostic>) {
    for a in &wire.agents {
        let Some(list) = &a.variants else {
            continue;
        };
        let error = |pos, code, message| Diagnostic::error(&a.file, pos, code, message);
        if !matches!(a.role.value, Role::Specialist | Role::Head) && !list.value.0.is_empty() {
            out.push(error(
                list.pos,
                "invalid-value",
                format!(
                    "agent `{}` has role {}: `variants` are for specialists and heads only",
                    a.id.value, a.role.value
                ),
            ));
        }
        let mut total = 0;
        for (name, v) in &list.value.0 {
            if name.value == CONTROL {
                out.push(error(
                    name.pos,
                    "invalid-value",
                    "a variant cannot be named `control`: `control` is the agent as written".into(),
                ));
            }
            total += v.weight.as_ref().map_or(0, |w| basis_points(w.value));
            if let (Some(t), Some(e)) = (&v.temperature, &v.execution) {
                if e.temperature.is_some() {
                    out.push(error(
                        t.pos,
                        "invalid-value",
                        format!(
                            "variant `{}` gives both `temperature` and `executionSettings.temperature`: keep one",
                            name.value
                        ),
                    ));
                }
            }
            if let Some(l) = v
                .escalate
                .as_ref()
                .filter(|l| a.role.value != Role::Specialist && !l.value.is_empty())
            {
                let (agent, role, variant) = (&a.id.value, a.role.value, &name.value);
                let message = format!(
                    "agent `{agent}` has role {role}: `escalate` in variant `{variant}` is for specialists only (heads, judges, routers and masters never escalate)"
                );
                out.push(error(l.pos, "invalid-value", message));
            }
            let chains = v.provider.iter().chain(
                v.escalate
                    .iter()
                    .flat_map(|l| l.value.iter().flat_map(|r| r.provider.iter())),
            );
            for p in chains.flat_map(|c| &c.0) {
                if !providers.contains(&p.value.as_str()) {
                    out.push(error(p.pos, "missing-reference", unknown(&p.value)));
                }
            }
        }
        if total > BASIS {
            out.push(error(
                list.pos,
                "invalid-value",
                format!(
                    "the weights of agent `{}`'s variants sum to {}, above 1: control needs what they leave",
                    a.id.value,
                    f64::from(total) / f64::from(BASIS)
                ),
            ));
        }
    }
}

impl Agent {
    /// The variant called `name` (`None` for `control` and unknown names).
    pub fn variant_named(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// This agent as its assigned variant runs it (`control`: as written), the assignment
    /// noted on it (`variant`), so its calls, results and cassette keys say which one ran.
    pub fn as_variant(&mut self, assigned: Assigned) {
        if let Some(v) = self.variant_named(&assigned.name).cloned() {
            lay_over(self, &v);
        }
        self.variant = Some(assigned);
    }

    /// The name of the variant this run gives it; `None` when it has no variants.
    pub fn variant_name(&self) -> Option<&str> {
        self.variant.as_ref().map(|a| a.name.as_str())
    }
}

/// Variant `v`'s settings over `agent`'s.
fn lay_over(agent: &mut Agent, v: &Variant) {
    if let Some(p) = &v.provider {
        agent.provider = Some(p.clone());
    }
    if let Some(m) = &v.model {
        agent.model = Some(m.clone());
    }
    if let Some(i) = &v.instructions {
        agent.instructions = i.clone();
    }
    if let Some(t) = v.passing_threshold {
        agent.passing_threshold = Some(t);
    }
    if let Some(l) = &v.escalate {
        agent.escalate = l.clone();
    }
    if let Some(e) = &v.execution {
        let mine = &mut agent.execution;
        mine.max_retries = e.max_retries.or(mine.max_retries);
        mine.timeout = e.timeout.or(mine.timeout);
        mine.temperature = e.temperature.or(mine.temperature);
        mine.max_output_tokens = e.max_output_tokens.or(mine.max_output_tokens);
        mine.max_tool_calls = e.max_tool_calls.or(mine.max_tool_calls);
    }
    if let Some(t) = v.temperature {
        agent.execution.temperature = Some(t);
    }
    if let Some(n) = v.max_output_tokens {
        agent.execution.max_output_tokens = Some(n);
    }
}
