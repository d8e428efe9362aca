//! A case's `variants: {AGENT: NAME}`: the variants it forces, checked against
//! the config it runs on (`--variant` wins over them).

use std::collections::BTreeMap;

use crate::config::{suggestion, Config, Pairs, Pos, CONTROL};

/// The variants a case forces, each checked: the agent exists and has a variant of that
/// name (or `control`). Problems go to `error` at the name or the value.
pub fn forced(
    written: Option<&Pairs>,
    config: &Config,
    error: &mut impl FnMut(Pos, &'static str, String),
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (agent, name) in written.map(|p| p.0.as_slice()).unwrap_or_default() {
        let Some(a) = config.agent(&agent.value) else {
            let known = config
                .agents
                .iter()
                .filter(|a| !a.variants.is_empty())
                .map(|a| a.id.as_str());
            let hint = suggestion(&agent.value, known);
            error(
                agent.pos,
                "missing-reference",
                format!("unknown agent `{}`{hint}", agent.value),
            );
            continue;
        };
        if name.value != CONTROL && a.variant_named(&name.value).is_none() {
            let hint = suggestion(&name.value, crate::plan::variant_names(a));
            error(
                name.pos,
                "missing-reference",
                format!("agent `{}` has no variant `{}`{hint}", agent.value, name.value),
            );
            continue;
        }
        out.insert(agent.value.clone(), name.value.clone());
    }
    out
}
