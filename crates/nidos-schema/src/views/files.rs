//! File rules (their name patterns) and tabular rules (columns of TSV files).

use indexmap::IndexMap;
use serde_json::Value;

use super::*;

impl Builder {
    pub(super) fn check_patterns(&mut self, v: &Value, id: &str) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if k == "pattern" {
                        if let Some(p) = x.as_str() {
                            if let Err(e) = regress::Regex::new(p) {
                                self.err(
                                    ErrorKind::Regex,
                                    format!("{id}.pattern"),
                                    format!("invalid ECMAScript pattern `{p}`: {e}"),
                                );
                            }
                        }
                    } else if matches!(x, Value::Object(_) | Value::Array(_)) {
                        self.check_patterns(x, &format!("{id}.{k}"));
                    }
                }
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    self.check_patterns(x, &format!("{id}[{i}]"));
                }
            }
            _ => {}
        }
    }

    pub(super) fn file_rule(
        &mut self,
        v: &Value,
        id: &str,
        cat: &str,
        group: &str,
        name: &str,
    ) -> FileRule {
        let mut entities = IndexMap::new();
        if let Some(m) = v.get("entities").and_then(Value::as_object) {
            for (ek, ev) in m {
                let eid = format!("{id}.entities.{ek}");
                let rule = match ev {
                    Value::String(s) => EntityRule {
                        level: self.level(s, &eid),
                        r#enum: None,
                    },
                    Value::Object(_) => {
                        let lv = ev.get("level").and_then(Value::as_str).unwrap_or("");
                        let level = self.level(lv, &format!("{eid}.level"));
                        let en = ev
                            .get("enum")
                            .map(|e| self.str_list(Some(e), &format!("{eid}.enum")));
                        EntityRule { level, r#enum: en }
                    }
                    other => {
                        self.err(
                            ErrorKind::Structure,
                            &eid,
                            format!(
                                "expected a level or {{level, enum}}, found {}",
                                kind_of(other)
                            ),
                        );
                        continue;
                    }
                };
                entities.insert(ek.clone(), rule);
            }
        }
        let level = v
            .get("level")
            .and_then(Value::as_str)
            .map(|s| self.level(s, &format!("{id}.level")));
        FileRule {
            id: id.to_owned(),
            category: cat.to_owned(),
            group: group.to_owned(),
            name: name.to_owned(),
            selectors: self.expressions(v.get("selectors"), &format!("{id}.selectors")),
            suffixes: self.str_list(v.get("suffixes"), &format!("{id}.suffixes")),
            extensions: self.str_list(v.get("extensions"), &format!("{id}.extensions")),
            datatypes: self.str_list(v.get("datatypes"), &format!("{id}.datatypes")),
            entities,
            level,
            path: opt_str(v, "path"),
            stem: opt_str(v, "stem"),
        }
    }

    pub(super) fn tabular_rule(
        &mut self,
        v: &Value,
        id: &str,
        column_defs: &IndexMap<String, Definition>,
    ) -> TabularRule {
        let selectors = self.expressions(v.get("selectors"), &format!("{id}.selectors"));
        let mut columns = IndexMap::new();
        if let Some(m) = v.get("columns").and_then(Value::as_object) {
            for (k, cv) in m {
                let cid = format!("{id}.columns.{k}");
                let name = column_defs
                    .get(k)
                    .map(|d| d.name.clone())
                    .unwrap_or_else(|| k.clone());
                let (level_raw, addendum, desc, definition) = match cv {
                    Value::String(s) => (s.clone(), None, None, None),
                    Value::Object(_) => (
                        cv.get("level")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        opt_str(cv, "level_addendum"),
                        opt_str(cv, "description_addendum"),
                        cv.get("definition").cloned(),
                    ),
                    other => {
                        self.err(
                            ErrorKind::Structure,
                            &cid,
                            format!("expected a level or {{level, …}}, found {}", kind_of(other)),
                        );
                        continue;
                    }
                };
                let level = self.level(&level_raw, &cid);
                // A column with a definition of its own may take its name from it.
                let name = definition
                    .as_ref()
                    .and_then(|d| opt_str(d, "name"))
                    .unwrap_or(name);
                columns.insert(
                    k.clone(),
                    ColumnReq {
                        key: k.clone(),
                        name,
                        level,
                        level_raw,
                        level_addendum: addendum,
                        description_addendum: desc,
                        definition,
                    },
                );
            }
        }
        TabularRule {
            id: id.to_owned(),
            selectors,
            columns,
            initial_columns: self
                .str_list(v.get("initial_columns"), &format!("{id}.initial_columns")),
            index_columns: self.str_list(v.get("index_columns"), &format!("{id}.index_columns")),
            additional_columns: opt_str(v, "additional_columns"),
        }
    }
}
