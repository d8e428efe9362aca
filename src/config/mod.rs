//! Config: files -> node tree -> wire structs -> checked model.

mod condition_check;
mod conditions;
mod decode;
mod definitions;
mod diagnostic;
mod ladder;
mod load;
mod mcp;
mod model;
mod node;
mod oauth_check;
mod output_schema;
mod rates;
mod rungs;
mod schema;
mod sections;
mod spec;
mod tools;
mod tools_check;
mod types;
mod validate;
mod variant_rules;
mod variants;
mod wire;
mod yaml;
mod yaml_events;

use std::path::Path;

pub(crate) use decode::{resolve_field, resolved_ty, section};
pub use decode::{Decoder, FromNode, Resolve};
pub use definitions::{AgentKeys, Coordination, DepartmentKeys, SchemaSource};
pub use diagnostic::{suggestion, Diagnostic, Severity};
pub use load::{locate_root, parse_document, ConfigFiles};
pub use mcp::Pairs;
pub use model::{Agent, AgentKey, Config, Department, ProviderSettings};
pub use node::{At, Node, Pos};
pub use node::{Key as NodeKey, Value as NodeValue};
pub use output_schema::compile as compile_output_schema;
pub use rates::{learn_success_rates, LearnedRate, RatesError, SuccessRates};
pub use schema::{definition_file as definition_file_schema, object as object_schema};
pub use sections::{Aggregation, Defaults, Grading, Http, Limits, Price, Routing, SettingsWire, Tokens, Weights};
#[cfg(test)]
pub use sections::{DEFAULT_COMPLEX_TERMS, DEFAULT_URGENT_TERMS};
pub use spec::{KeySpec, Rule};
pub use tools::{secret_variables, Approve, McpServer, McpTransport, OAuthGrant, OAuthSettings, ToolUse};
pub use types::{
    seconds, CacheTtl, GradingMethod, GradingScale, PromptCache, ProviderKind, Role, RoutingMethod, StructuredOutput,
    SuccessRateSource, TokenField, DEFAULT_CONTEXT_TOKENS,
};
pub use variants::{Assigned, Variant, VariantRate, BASIS, CONTROL};

/// A config that cannot be used, with every problem found.
#[derive(Debug, thiserror::Error)]
#[error("{}", summary(.diagnostics))]
pub struct ConfigError {
    /// All problems, errors first.
    pub diagnostics: Vec<Diagnostic>,
}

fn summary(diags: &[Diagnostic]) -> String {
    let errors: Vec<&Diagnostic> = diags.iter().filter(|d| d.is_error()).collect();
    match errors.as_slice() {
        [missing, ..] if missing.is_missing_config() => missing.message.clone(),
        [one] => format!("invalid config: {one}"),
        [first, ..] => format!(
            "invalid config: {first} (and {} more; run `orch validate`)",
            errors.len() - 1
        ),
        [] => "invalid config".into(),
    }
}

/// Everything `orch validate` needs: all diagnostics, sorted by file and position.
pub fn diagnose(root: &Path) -> Vec<Diagnostic> {
    let loaded = load::read(root);
    let mut diags = loaded.diagnostics;
    if !diags.iter().any(|d| d.is_missing_config()) {
        diags.extend(validate::check(&loaded.wire, &loaded.settings_file));
    }
    diags.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    diags
}

/// Loads a config root for `run` / `explain`: the model, or every error found.
/// Warnings are returned beside the model.
pub fn load(root: &Path) -> Result<(Config, Vec<Diagnostic>), ConfigError> {
    let loaded = load::read(root);
    let mut diags = loaded.diagnostics;
    diags.extend(validate::check(&loaded.wire, &loaded.settings_file));
    if diags.iter().any(Diagnostic::is_error) {
        diags.sort_by_key(|d| d.severity);
        return Err(ConfigError { diagnostics: diags });
    }
    let mut config = Config::resolve(root.to_path_buf(), &loaded.wire);
    config.files = loaded.files;
    Ok((config, diags))
}

/// Loads a config held in one string, as if it were a single-file config (tests).
#[cfg(test)]
pub fn load_str(text: &str, toml: bool) -> Result<Config, ConfigError> {
    let name = if toml { "orch.toml" } else { "orch.yaml" };
    let loaded = load::read_text(name, text.as_bytes(), toml);
    let mut diags = loaded.diagnostics;
    diags.extend(validate::check(&loaded.wire, name));
    if diags.iter().any(Diagnostic::is_error) {
        return Err(ConfigError { diagnostics: diags });
    }
    Ok(Config::resolve(Path::new(name).to_path_buf(), &loaded.wire))
}
