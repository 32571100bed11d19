//! The rule data a run precomputes once per schema: issue texts of field rules, column
//! value plans, compiled formats and patterns, which rules name derivative datasets.
//!
//! The rule applications (`apply/`) read the schema through this struct, never through
//! the engine: the engine depends on `apply`, not the other way round.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use nidos_expr::Value;
use nidos_schema::{ColumnReq, Definition, DeprecatedValue, FieldRule, Schema};

use super::patterns::Patterns;
use super::signature::{RawSignature, Signature};
use crate::issue::Sym;

/// Precomputed rule data, shared read-only by every worker of a run.
pub(crate) struct Prepared<'s> {
    pub schema: &'s Schema,
    /// Formats and column-value patterns, compiled.
    pub patterns: Patterns,
    /// Sidecar and JSON rules whose selectors name derivative datasets explicitly.
    derivative_rules: HashSet<String>,
    /// The issue texts of each sidecar and JSON rule (as `schema` lists them).
    pub sidecar_texts: Vec<FieldRuleTexts<'s>>,
    pub json_texts: Vec<FieldRuleTexts<'s>>,
    pub missing_key_codes: MissingKeyCodes,
    /// Per tabular rule, per column: its schema-given constraint, on first use.
    pub column_plans: Vec<Vec<OnceLock<ColumnPlan>>>,
    /// Column name → the values its definition deprecates (only names that have some).
    deprecated_values: HashMap<&'s str, &'s [DeprecatedValue]>,
    /// `(rule id, field name)` of the fields an edited rule tree raised to required
    /// (`Schema::raised_fields`, keys turned into the names files use).
    raised: HashSet<(String, String)>,
}

impl<'s> Prepared<'s> {
    pub(crate) fn new(schema: &'s Schema) -> Prepared<'s> {
        let derivative_rules = schema
            .sidecar_rules
            .iter()
            .chain(&schema.json_rules)
            .filter(|r| {
                r.selectors
                    .iter()
                    .any(|s| s.parsed.as_deref().is_some_and(names_derivative))
            })
            .map(|r| r.id.clone())
            .collect();
        let texts = |rules: &[nidos_schema::FieldRule]| {
            rules
                .iter()
                .map(|r| FieldRuleTexts::new(schema, r))
                .collect()
        };
        let mut deprecated_values = HashMap::new();
        for def in schema.columns.values() {
            if !def.deprecated_values.is_empty() {
                deprecated_values
                    .entry(def.name.as_str())
                    .or_insert(def.deprecated_values.as_slice());
            }
        }
        let raised = schema
            .raised_fields
            .iter()
            .map(|(rule, key)| {
                let name = schema
                    .metadata_def(key)
                    .map_or(key.as_str(), |d| d.name.as_str());
                (rule.clone(), name.to_string())
            })
            .collect();
        Prepared {
            schema,
            deprecated_values,
            raised,
            patterns: Patterns::new(schema),
            derivative_rules,
            sidecar_texts: texts(&schema.sidecar_rules),
            json_texts: texts(&schema.json_rules),
            missing_key_codes: MissingKeyCodes::default(),
            column_plans: schema
                .tabular_rules
                .iter()
                .map(|r| r.columns.values().map(|_| OnceLock::new()).collect())
                .collect(),
        }
    }

    /// The values the definition of the column named `name` deprecates.
    pub(crate) fn deprecated_values(&self, name: &str) -> &'s [DeprecatedValue] {
        self.deprecated_values
            .get(name)
            .copied()
            .unwrap_or_default()
    }

    /// Whether the rule `rule_id` requires the field `name` where the bundled rules do
    /// not: an edited rule tree raised it (see `keep_strongest_missing`).
    pub(crate) fn raised(&self, rule_id: &str, name: &str) -> bool {
        !self.raised.is_empty()
            && self
                .raised
                .contains(&(rule_id.to_string(), name.to_string()))
    }

    /// Whether the rule's selectors name derivative datasets (then its missing keys are
    /// reported in a derivative dataset too).
    pub(crate) fn selects_derivatives(&self, rule_id: &str) -> bool {
        self.derivative_rules.contains(rule_id)
    }
}

/// What issues of a field rule name, resolved once per schema: a run reports hundreds
/// of thousands of missing keys, each sharing these texts instead of looking them up.
pub(crate) struct FieldRuleTexts<'s> {
    pub rule: Sym,
    /// Per field of the rule, in order.
    pub fields: Vec<FieldTexts<'s>>,
}

pub(crate) struct FieldTexts<'s> {
    /// The key as written in the JSON file.
    pub name: Sym,
    pub def: Option<&'s Definition>,
    /// The code the rule gives a missing key, when it names one.
    pub code: Option<Sym>,
}

impl<'s> FieldRuleTexts<'s> {
    pub(crate) fn new(schema: &'s nidos_schema::Schema, rule: &FieldRule) -> FieldRuleTexts<'s> {
        let fields = rule
            .fields
            .iter()
            .map(|(key, req)| {
                let def = schema.metadata_def(key);
                FieldTexts {
                    name: Sym::from(def.map_or(key.as_str(), |d| d.name.as_str())),
                    def,
                    code: req
                        .issue
                        .as_ref()
                        .filter(|spec| !spec.code.is_empty())
                        .map(|spec| Sym::from(spec.code.as_str())),
                }
            })
            .collect();
        FieldRuleTexts {
            rule: Sym::from(rule.id.as_str()),
            fields,
        }
    }
}

/// The codes of a missing key when its rule names none, by (sidecar rule, error).
pub(crate) struct MissingKeyCodes([Sym; 4]);

impl Default for MissingKeyCodes {
    fn default() -> MissingKeyCodes {
        MissingKeyCodes([
            Sym::from("JSON_KEY_RECOMMENDED"),
            Sym::from("JSON_KEY_REQUIRED"),
            Sym::from("SIDECAR_KEY_RECOMMENDED"),
            Sym::from("SIDECAR_KEY_REQUIRED"),
        ])
    }
}

impl MissingKeyCodes {
    pub(super) fn get(&self, sidecar_rule: bool, error: bool) -> &Sym {
        &self.0[usize::from(sidecar_rule) * 2 + usize::from(error)]
    }
}

/// The value constraint of a rule's column as the schema alone gives it, worked out on
/// first use and shared by every table without a sidecar definition of the column.
pub(crate) struct ColumnPlan {
    /// The schema gives a `definition` a sidecar replaces whole (else a sidecar's
    /// definition can only narrow the schema's).
    pub(super) overridable: bool,
    pub(super) raw: RawSignature,
    pub(super) compiled: Option<Signature>,
}

impl ColumnPlan {
    pub(super) fn new(schema: &Schema, patterns: &Patterns, req: &ColumnReq) -> ColumnPlan {
        let schema_def = match &req.definition {
            Some(d) => Some(d),
            None => schema.column_def(&req.key).map(|d| &*d.def),
        };
        let overridable = schema_def.and_then(|d| d.get("definition"));
        let raw = match (overridable, schema_def) {
            (Some(o), _) => RawSignature::from_column_definition(&Value::from(o)),
            (None, Some(d)) => RawSignature::from_schema_def(d),
            (None, None) => RawSignature::from_schema_def(&serde_json::Value::Null),
        };
        ColumnPlan {
            overridable: overridable.is_some(),
            compiled: Signature::compile(&raw, schema, patterns),
            raw,
        }
    }
}

/// Whether a selector compares `….DatasetType` with the string `"derivative"` (either
/// side, anywhere in the expression): its rule is meant for derivative datasets.
fn names_derivative(e: &nidos_expr::Expr) -> bool {
    use nidos_expr::{Expr, Value};
    let dataset_type = |e: &Expr| matches!(e, Expr::Member(_, n) if n.as_ref() == "DatasetType");
    let derivative =
        |e: &Expr| matches!(e, Expr::Literal(Value::String(v)) if v.as_ref() == "derivative");
    match e {
        Expr::Call(c) => {
            let here = c.name.as_ref() == "_==_"
                && matches!(&c.args[..], [a, b]
                    if (dataset_type(a) && derivative(b)) || (derivative(a) && dataset_type(b)));
            here || c.args.iter().any(names_derivative)
        }
        Expr::Member(inner, _) => names_derivative(inner),
        Expr::Index(a, b) => names_derivative(a) || names_derivative(b),
        Expr::Array(items) => items.iter().any(names_derivative),
        Expr::Literal(_) | Expr::Name(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::names_derivative;

    #[test]
    fn derivative_selectors_are_recognised_from_the_parsed_tree() {
        for (src, want) in [
            (
                "dataset.dataset_description.DatasetType == \"derivative\"",
                true,
            ),
            (
                "'derivative'==dataset.dataset_description.DatasetType",
                true,
            ),
            (
                "suffix == 'bold' && dataset.dataset_description.DatasetType == 'derivative'",
                true,
            ),
            (
                "dataset.dataset_description.DatasetType != 'derivative'",
                false,
            ),
            ("dataset.dataset_description.DatasetType == 'raw'", false),
            ("sidecar.Note == 'DatasetType==\"derivative\"'", false),
        ] {
            let e = nidos_expr::parse(src).unwrap();
            assert_eq!(names_derivative(&e), want, "{src}");
        }
    }
}
