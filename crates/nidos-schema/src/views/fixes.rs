//! The `fix:` of a rule: declarative repairs (set, rename, replace, … a key or cell).

use serde_json::Value;

use super::*;

impl Builder {
    /// A `fix:` entry (see [`FixOp`]): a bare edit name (`remove_bom`) or a mapping
    /// with one edit key and an optional `suggestion`.
    pub(super) fn fix(&mut self, v: &Value, rule: &str) -> Option<Fix> {
        let id = format!("{rule}.fix");
        let (name, args, suggestion) = match v {
            Value::String(s) => (s.as_str(), &NULL, None),
            Value::Object(m) => {
                let mut edits = m.iter().filter(|(k, _)| k.as_str() != "suggestion");
                let Some((name, args)) = edits.next() else {
                    self.err(ErrorKind::Structure, &id, "a fix names no edit");
                    return None;
                };
                if let Some((extra, _)) = edits.next() {
                    self.err(
                        ErrorKind::Structure,
                        &id,
                        format!("a fix makes one edit; found `{name}` and `{extra}`"),
                    );
                    return None;
                }
                (name.as_str(), args, opt_str(v, "suggestion"))
            }
            other => {
                self.err(
                    ErrorKind::Structure,
                    &id,
                    format!("expected an edit name or mapping, found {}", kind_of(other)),
                );
                return None;
            }
        };
        let at = format!("{id}.{name}");
        let op = self.fix_op(name, args, &at)?;
        let suggestion = match (&op, suggestion) {
            (FixOp::Suggest, _) => args.as_str().map(str::to_owned),
            (_, s) => s,
        };
        Some(Fix {
            id: rule.to_owned(),
            op,
            suggestion,
        })
    }

    pub(super) fn fix_op(&mut self, name: &str, args: &Value, at: &str) -> Option<FixOp> {
        let text = |b: &mut Builder, key: &str| -> Option<String> {
            match args.get(key).and_then(Value::as_str) {
                Some(s) if !s.is_empty() => Some(s.to_owned()),
                _ => {
                    b.err(
                        ErrorKind::Structure,
                        format!("{at}.{key}"),
                        "missing or not a non-empty string",
                    );
                    None
                }
            }
        };
        let op = match name {
            "remove_bom" => FixOp::RemoveBom,
            "normalize_lines" => FixOp::NormalizeLines,
            "add_version" => FixOp::AddVersion,
            "suggest" => {
                if args.as_str().is_none_or(str::is_empty) {
                    self.err(ErrorKind::Structure, at, "suggest takes the text to show");
                    return None;
                }
                FixOp::Suggest
            }
            "set" => FixOp::Set {
                key: text(self, "key")?,
                value: args.get("value").cloned().unwrap_or(Value::Null),
            },
            "rename" => FixOp::Rename {
                from: text(self, "from")?,
                to: text(self, "to")?,
                as_list: args
                    .get("as_list")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
            "replace" => {
                let keys = self.str_list(args.get("keys"), &format!("{at}.keys"));
                if keys.is_empty() {
                    self.err(ErrorKind::Structure, format!("{at}.keys"), "no keys");
                    return None;
                }
                FixOp::Replace {
                    keys,
                    from: args.get("from").cloned().unwrap_or(Value::Null),
                    to: args.get("to").cloned().unwrap_or(Value::Null),
                }
            }
            "reformat" => {
                let key = text(self, "key")?;
                let pattern = text(self, "match")?;
                let to = text(self, "to")?;
                if let Err(e) = regress::Regex::new(&pattern) {
                    self.err(
                        ErrorKind::Regex,
                        format!("{at}.match"),
                        format!("invalid ECMAScript pattern `{pattern}`: {e}"),
                    );
                    return None;
                }
                FixOp::Reformat { key, pattern, to }
            }
            "replace_cell" => {
                let note = match args.get("note") {
                    None => None,
                    Some(n) => {
                        let key = n.get("key").and_then(Value::as_str);
                        let txt = n.get("text").and_then(Value::as_str);
                        match (key, txt) {
                            (Some(k), Some(t)) => Some((k.to_owned(), t.to_owned())),
                            _ => {
                                self.err(
                                    ErrorKind::Structure,
                                    format!("{at}.note"),
                                    "expected {key, text}",
                                );
                                return None;
                            }
                        }
                    }
                };
                FixOp::ReplaceCell {
                    column: text(self, "column")?,
                    from: text(self, "from")?,
                    to: text(self, "to")?,
                    note,
                }
            }
            other => {
                self.err(
                    ErrorKind::Structure,
                    at,
                    format!(
                        "unknown edit `{other}` (known: set, rename, replace, reformat, \
                         replace_cell, remove_bom, normalize_lines, add_version, suggest)"
                    ),
                );
                return None;
            }
        };
        Some(op)
    }
}
