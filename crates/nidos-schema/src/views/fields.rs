//! Field rules (sidecar, JSON and dataset-metadata fields, with their requirement
//! levels) and the term and definition tables of `objects`.

use indexmap::IndexMap;
use serde_json::Value;

use super::*;

impl Builder {
    pub(super) fn field_req(&mut self, v: &Value, id: &str) -> Option<FieldReq> {
        match v {
            Value::String(s) => Some(FieldReq {
                level: self.level(s, id),
                level_raw: s.clone(),
                level_addendum: None,
                level_if: None,
                description_addendum: None,
                issue: None,
                fix: None,
            }),
            Value::Object(m) => {
                let level_raw = m
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let level = self.level(&level_raw, &format!("{id}.level"));
                let issue = match m.get("issue") {
                    Some(i) => self.issue(i, &format!("{id}.issue")),
                    None => None,
                };
                let fix = m.get("fix").and_then(|f| self.fix(f, id));
                let level_if = m
                    .get("level_if")
                    .and_then(|c| self.level_condition(c, &format!("{id}.level_if")));
                Some(FieldReq {
                    level,
                    level_raw,
                    level_addendum: opt_str(v, "level_addendum"),
                    level_if,
                    description_addendum: opt_str(v, "description_addendum"),
                    issue,
                    fix,
                })
            }
            other => {
                self.err(
                    ErrorKind::Structure,
                    id,
                    format!("expected a level or {{level, …}}, found {}", kind_of(other)),
                );
                None
            }
        }
    }

    fn level_condition(&mut self, v: &Value, id: &str) -> Option<LevelCondition> {
        let text = |k: &str| v.get(k).and_then(Value::as_str);
        match (text("key"), text("is"), text("level")) {
            (Some(key), Some(is), Some(level)) => Some(LevelCondition {
                key: key.to_owned(),
                is: is.to_owned(),
                level: self.level(level, &format!("{id}.level")),
            }),
            _ => {
                self.err(
                    ErrorKind::Structure,
                    id,
                    "expected {key, is, level}, each a string",
                );
                None
            }
        }
    }

    /// A column definition's `deprecated_values`: a list of `{value, issue}`.
    fn deprecated_values(&mut self, v: Option<&Value>, id: &str) -> Vec<DeprecatedValue> {
        let Some(v) = v else {
            return Vec::new();
        };
        let Some(items) = v.as_array() else {
            self.err(
                ErrorKind::Structure,
                id,
                format!("expected a list of {{value, issue}}, found {}", kind_of(v)),
            );
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("{id}[{i}]");
            let value = item.get("value").and_then(Value::as_str);
            let issue = item.get("issue");
            match (value, issue) {
                (Some(value), Some(issue)) => {
                    if let Some(issue) = self.issue(issue, &format!("{at}.issue")) {
                        out.push(DeprecatedValue {
                            value: value.to_owned(),
                            issue,
                        });
                    }
                }
                _ => self.err(
                    ErrorKind::Structure,
                    at,
                    "expected {value, issue} with a string value",
                ),
            }
        }
        out
    }

    pub(super) fn field_rule(&mut self, v: &Value, id: &str) -> FieldRule {
        let selectors = self.expressions(v.get("selectors"), &format!("{id}.selectors"));
        let mut fields = IndexMap::new();
        if let Some(m) = v.get("fields").and_then(Value::as_object) {
            for (k, fv) in m {
                if let Some(f) = self.field_req(fv, &format!("{id}.fields.{k}")) {
                    fields.insert(k.clone(), f);
                }
            }
        }
        FieldRule {
            id: id.to_owned(),
            selectors,
            fields,
        }
    }

    pub(super) fn terms(&mut self, raw: &Value, table: &str) -> IndexMap<String, Term> {
        let mut out = IndexMap::new();
        for (k, v) in map_at(raw, &["objects", table]) {
            let value = opt_str(v, "value").unwrap_or_else(|| k.clone());
            let display_name = opt_str(v, "display_name").unwrap_or_default();
            out.insert(
                k.clone(),
                Term {
                    key: k.clone(),
                    value,
                    display_name,
                    description: opt_str(v, "description").unwrap_or_default(),
                },
            );
        }
        out
    }

    pub(super) fn definitions(&mut self, raw: &Value, table: &str) -> IndexMap<String, Definition> {
        let mut out = IndexMap::new();
        for (k, v) in map_at(raw, &["objects", table]) {
            let name = opt_str(v, "name").unwrap_or_else(|| k.clone());
            let deprecated_values = if table == "columns" {
                self.deprecated_values(
                    v.get("deprecated_values"),
                    &format!("objects.columns.{k}.deprecated_values"),
                )
            } else {
                Vec::new()
            };
            out.insert(
                k.clone(),
                Definition {
                    key: k.clone(),
                    name,
                    def: crate::raw::Raw::new(v.clone()),
                    deprecated_values,
                },
            );
        }
        out
    }
}
