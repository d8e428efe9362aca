//! The config as written: every field optional, each reference with the place it was
//! written, so the checks in `validate.rs` can point at it.

use super::decode::{Decoder, FromNode};
use super::definitions::{agent_file, department_file, AgentWire, DepartmentWire};
use super::node::Node;
use super::sections::SettingsWire;
use super::spec::{KeySpec, Rule};

/// Everything read from a config root, before meaning is checked.
#[derive(Clone, Debug, Default)]
pub struct WireConfig {
    /// The global settings file, when there is one (its inline definitions moved below).
    pub settings: Option<SettingsWire>,
    /// Every department, in file order.
    pub departments: Vec<DepartmentWire>,
    /// Every agent, in file order.
    pub agents: Vec<AgentWire>,
}

/// Which part of a config a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `orch.toml` / `orch.yaml`.
    Settings,
    /// A file of `departments/`.
    Departments,
    /// A file of `agents/`.
    Agents,
}

impl WireConfig {
    /// Decodes one file's tree into this config, reporting problems through `d`.
    pub fn add(&mut self, d: &mut Decoder, kind: FileKind, root: &Node) {
        match kind {
            FileKind::Settings => {
                let key = KeySpec {
                    name: "",
                    doc: "",
                    rule: Rule::Section(SettingsWire::KEYS),
                };
                let Some(mut s) = SettingsWire::from_node(d, root, &key, "") else {
                    return;
                };
                self.departments.extend(s.departments.take().unwrap_or_default());
                self.agents.extend(s.agents.take().unwrap_or_default());
                self.settings = Some(s);
            }
            FileKind::Departments => self.departments.extend(department_file(d, root)),
            FileKind::Agents => self.agents.extend(agent_file(d, root)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::yaml::parse_yaml;

    #[test]
    fn base_urls_must_be_http_urls() {
        let provider = |url: &str| {
            let mut diags = Vec::new();
            let mut out = WireConfig::default();
            let node = parse_yaml(&format!("providers:\n  p: {{ kind: openai, baseUrl: \"{url}\" }}\n")).unwrap();
            out.add(&mut Decoder::new("orch.yaml", &mut diags), FileKind::Settings, &node);
            diags.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
        };
        assert!(provider("http://127.0.0.1:8080/v1").is_empty());
        assert!(provider("https://api.openai.com/v1").is_empty());
        assert!(provider("http://[::1]:11434").is_empty());
        assert!(provider("http://[::1]/v1").is_empty());
        assert_eq!(provider("http://"), ["`baseUrl` `http://` is not a URL (empty host)"]);
        assert_eq!(
            provider("not a url"),
            ["`baseUrl` `not a url` is not a URL (relative URL without a base)"]
        );
        assert_eq!(
            provider("file:///etc/passwd"),
            ["`baseUrl` `file:///etc/passwd` is not an http:// or https:// URL"]
        );
        assert_eq!(
            provider("http://localhost:99999"),
            ["`baseUrl` `http://localhost:99999` is not a URL (invalid port number)"]
        );
        assert_eq!(
            provider("unix:/run/llm.sock"),
            ["`baseUrl` `unix:/run/llm.sock` is not an http:// or https:// URL"]
        );
    }
}
