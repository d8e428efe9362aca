//! Model ladders: an agent's `escalate` list of rungs as written and resolved
//! (their checks and the chain each rung asks are in `rungs.rs`).

use serde::Serialize;

use super::decode::{section, Chain, Decoder, FromNode, Resolve};
use super::node::{At, Node};
use super::spec::{KeySpec, Rule};

section! {
    /// One rung of `escalate` as written.
    RungWire, "a rung of `escalate`" {
        /// The model asked on this rung.
        model "model": At<String>, Rule::Text;
        /// Its provider: a name, or a fallback chain of names (default: the agent's own).
        provider "provider": Chain, Rule::Chain;
    }
}

/// One rung above an agent's own provider and model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rung {
    /// Its providers in fallback order; `None`: the agent's own.
    pub provider: Option<Vec<String>>,
    /// The model asked on it.
    pub model: String,
}

impl FromNode for Vec<RungWire> {
    fn from_node(d: &mut Decoder, node: &Node, key: &KeySpec, what: &str) -> Option<Self> {
        d.list(
            node,
            &format!("`{}` in {what}", key.name),
            "a list of rungs (each a mapping with `model`)",
            |d, item| {
                let rung = RungWire::from_node(d, item, key, what)?;
                let named = rung.model.as_ref().is_some_and(|m| !m.value.trim().is_empty());
                if !named {
                    d.error(item.pos, "missing-key", "a rung of `escalate` needs `model`".into());
                    return None;
                }
                Some(rung)
            },
        )
    }
}

impl Resolve for RungWire {
    type To = Rung;
    fn resolve(self) -> Rung {
        Rung {
            provider: self.provider.map(Resolve::resolve),
            model: self.model.map(|m| m.value).unwrap_or_default(),
        }
    }
}
