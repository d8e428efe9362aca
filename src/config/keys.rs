//! Every key orch accepts, by mapping: the config reference in code. Anything else is
//! an `unknown-key` error with a "did you mean" suggestion.

/// Keys of `orch.toml` / `orch.yaml` at the top level.
pub const SETTINGS_KEYS: &[&str] = &[
    "defaults",
    "routing",
    "grading",
    "limits",
    "aggregation",
    "http",
    "providers",
    "departments",
    "agents",
];
/// Keys accepted in defaults mappings.
pub const DEFAULTS_KEYS: &[&str] = &[
    "passingThreshold",
    "maxRetries",
    "timeout",
    "temperature",
    "provider",
    "model",
];
/// Keys accepted in routing mappings.
pub const ROUTING_KEYS: &[&str] = &[
    "supportingThreshold",
    "keywordWeight",
    "fallbackDepartment",
    "complexTerms",
];
/// Keys accepted in grading mappings.
pub const GRADING_KEYS: &[&str] = &["method", "judge", "weights"];
/// Keys accepted in weight mappings.
pub const WEIGHT_KEYS: &[&str] = &["quality", "relevance", "consistency"];
/// Keys accepted in limits mappings.
pub const LIMITS_KEYS: &[&str] = &["maxCalls", "maxTokens", "maxConcurrency"];
/// Keys accepted in aggregation mappings.
pub const AGGREGATION_KEYS: &[&str] = &["synthesize", "masterAgent"];
/// Keys accepted in http mappings.
pub const HTTP_KEYS: &[&str] = &["maxRetries", "backoffBase", "backoffCap"];
/// Keys accepted in provider mappings.
pub const PROVIDER_KEYS: &[&str] = &["kind", "baseUrl", "apiKeyEnv", "model", "requestsPerMinute"];
/// Keys accepted in department mappings.
pub const DEPARTMENT_KEYS: &[&str] = &[
    "id",
    "name",
    "description",
    "keywords",
    "priority",
    "head",
    "dependsOn",
    "coordinationSettings",
];
/// Keys accepted in coordination mappings.
pub const COORDINATION_KEYS: &[&str] = &["minQualityThreshold", "maxRetries", "allowParallelExecution"];
/// Keys accepted in agent mappings.
pub const AGENT_KEYS: &[&str] = &[
    "id",
    "name",
    "department",
    "role",
    "specialization",
    "skills",
    "passingThreshold",
    "isActive",
    "successRate",
    "provider",
    "model",
    "executionSettings",
    "instructions",
];
/// Keys accepted in execution mappings.
pub const EXECUTION_KEYS: &[&str] = &["maxRetries", "timeout", "temperature"];
