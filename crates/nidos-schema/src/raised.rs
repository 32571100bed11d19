//! The field requirements a YAML rule tree read from disk raises to `required` where
//! the bundled rules (at the same brand and version) do not require the field in that
//! rule: what an edited tree asks for more strongly than the rules it was made from.
//! The validator reports a key such a requirement asks for once, as required, even
//! when another rule still recommends it (see `docs/divergences.md`); a key two rules
//! of the bundled or upstream rules ask for at two levels is reported at both, as the
//! reference validator does.

use std::collections::{BTreeSet, HashMap};

use crate::model::{FieldRule, Level};
use crate::{LoadOptions, Schema};

/// `(rule id, field key)` of every field `schema` requires in a sidecar or JSON rule
/// that the embedded rules loaded with `opts` do not require in the rule of that id.
/// Empty when the embedded rules do not load with `opts` (a version or brand they do
/// not have): nothing is then known to be raised.
pub(crate) fn raised_fields(schema: &Schema, opts: &LoadOptions) -> BTreeSet<(String, String)> {
    let Ok(bundled) = crate::embedded_load(opts) else {
        return BTreeSet::new();
    };
    let required = |rules: &[FieldRule]| -> HashMap<String, Vec<String>> {
        rules
            .iter()
            .map(|r| {
                let keys = r
                    .fields
                    .iter()
                    .filter(|(_, req)| req.level == Level::Required)
                    .map(|(k, _)| k.clone())
                    .collect();
                (r.id.clone(), keys)
            })
            .collect()
    };
    let mut before = required(&bundled.sidecar_rules);
    before.extend(required(&bundled.json_rules));
    let mut out = BTreeSet::new();
    for rule in schema.sidecar_rules.iter().chain(&schema.json_rules) {
        let was = before.get(&rule.id);
        for (key, req) in &rule.fields {
            if req.level == Level::Required && !was.is_some_and(|w| w.contains(key)) {
                out.insert((rule.id.clone(), key.clone()));
            }
        }
    }
    out
}
