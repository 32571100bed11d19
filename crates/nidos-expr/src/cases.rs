//! Data-driven expression cases: `{expression, result[, context][, exists]}` entries
//! as found in `tests/expr/*.yaml` and the standard's `expression_tests`. Shared by
//! the crate's test harness and `nidos eval --test`.
//!
//! `context` is the root scope as a JSON object. `exists` maps a rule (`dataset`,
//! `subject`, `bids-uri`, …) to the paths that exist under it, backing `exists()`.

use indexmap::IndexMap;

use crate::context::{Context, ObjectContext};
use crate::value::Value;

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    pub expression: String,
    pub result: Value,
    pub context: serde_json::Value,
    pub exists: IndexMap<String, Vec<String>>,
}

/// A case's outcome.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Pass,
    /// Evaluated to something else.
    Wrong {
        got: Value,
    },
    /// Did not parse.
    ParseError {
        message: String,
    },
}

/// A context for cases: a JSON root scope plus a fixed table of existing paths.
#[derive(Clone, Debug, Default)]
pub struct CaseContext {
    pub scope: ObjectContext,
    pub exists: IndexMap<String, Vec<String>>,
}

impl Context for CaseContext {
    fn lookup(&self, name: &str) -> std::borrow::Cow<'_, Value> {
        self.scope.lookup(name)
    }
    fn exists(&self, rule: &str, path: &str) -> Option<bool> {
        self.exists
            .get(rule)
            .map(|paths| paths.iter().any(|p| p == path))
    }
    fn names(&self) -> Vec<String> {
        self.scope.names()
    }
}

impl Case {
    /// Reads a list of cases from a parsed YAML/JSON document (a list of mappings).
    pub fn list_from_json(doc: &serde_json::Value) -> Result<Vec<Case>, String> {
        let items = doc.as_array().ok_or_else(|| {
            "a case file must be a list of {expression, result} entries".to_string()
        })?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| Case::from_json(item).map_err(|e| format!("case {}: {e}", i + 1)))
            .collect()
    }

    /// Reads one case.
    pub fn from_json(item: &serde_json::Value) -> Result<Case, String> {
        let obj = item
            .as_object()
            .ok_or_else(|| "expected a mapping".to_string())?;
        let expression = match obj.get("expression") {
            Some(serde_json::Value::String(s)) => s.clone(),
            _ => return Err("missing `expression` string".into()),
        };
        if !obj.contains_key("result") {
            return Err(format!("`{expression}`: missing `result`"));
        }
        let result = Value::from(obj.get("result").unwrap_or(&serde_json::Value::Null));
        let context = obj
            .get("context")
            .cloned()
            .unwrap_or(serde_json::Value::Object(Default::default()));
        let mut exists = IndexMap::new();
        if let Some(table) = obj.get("exists") {
            let table = table
                .as_object()
                .ok_or_else(|| format!("`{expression}`: `exists` must map rules to path lists"))?;
            for (rule, paths) in table {
                let paths = paths
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|p| p.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                exists.insert(rule.clone(), paths);
            }
        }
        Ok(Case {
            expression,
            result,
            context,
            exists,
        })
    }

    /// The context this case evaluates against.
    pub fn context(&self) -> CaseContext {
        CaseContext {
            scope: ObjectContext::from_json(&self.context),
            exists: self.exists.clone(),
        }
    }

    /// Parses and evaluates the case, comparing structurally (`1 == 1.0`).
    pub fn run(&self) -> Outcome {
        match crate::parse(&self.expression) {
            Err(e) => Outcome::ParseError {
                message: e.to_string(),
            },
            Ok(expr) => {
                let got = crate::eval(&expr, &self.context());
                if same(&got, &self.result) {
                    Outcome::Pass
                } else {
                    Outcome::Wrong { got }
                }
            }
        }
    }
}

/// Equality of results as JSON would show them (NaN and infinities are null).
fn same(a: &Value, b: &Value) -> bool {
    a.to_json() == b.to_json() || a == b
}
