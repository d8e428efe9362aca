//! A case's expectations as written: what a results line carries as `"expect"`,
//! so `orch tune` learns from the runs without the suite file. Keys as the suite spells
//! them, in the documented order (docs/ci.md); a regex as its pattern; absent keys left out.

use serde_json::{json, Map, Value};

use super::file::Expect;

impl Expect {
    /// The expectations as a JSON mapping, or `None` when the case has none.
    pub fn written(&self) -> Option<Value> {
        let mut map = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                map.insert(key.into(), v);
            }
        };
        let list = |items: &[String]| (!items.is_empty()).then(|| json!(items));
        put("status", self.status.map(|s| json!(s.to_string())));
        put("primary", self.primary.as_ref().map(|p| json!(p)));
        put("departments", self.departments.as_ref().map(|d| json!(d)));
        put("include", list(&self.include));
        put("exclude", list(&self.exclude));
        put("minQuality", self.min_quality.map(|q| json!(q)));
        put("graded", self.graded.map(|b| json!(b)));
        put("maxCalls", self.max_calls.map(|n| json!(n)));
        put("maxCostUsd", self.max_cost_usd.map(|c| json!(c)));
        put("toolsCalled", list(&self.tools.called));
        put("toolsNotCalled", list(&self.tools.not_called));
        put("maxToolCalls", self.tools.max_calls.map(|n| json!(n)));
        put("contains", list(&self.contains));
        put("notContains", list(&self.not_contains));
        let patterns: Vec<&str> = self.matches.iter().map(regex::Regex::as_str).collect();
        put("matches", (!patterns.is_empty()).then(|| json!(patterns)));
        put("maxEscalations", self.max_escalations.map(|n| json!(n)));
        put("economy", self.economy.map(|b| json!(b)));
        put("asks", self.asks.map(|b| json!(b)));
        let (min, max) = self.urgency;
        let mut urgency = Map::new();
        urgency.extend(min.map(|m| ("min".to_string(), json!(m))));
        urgency.extend(max.map(|m| ("max".to_string(), json!(m))));
        put("urgency", (!urgency.is_empty()).then_some(Value::Object(urgency)));
        (!map.is_empty()).then_some(Value::Object(map))
    }
}
