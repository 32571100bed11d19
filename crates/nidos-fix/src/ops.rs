//! The edits a fix makes to a JSON object, each one idempotent: when the object already
//! has the wanted form the edit reports [`Outcome::Unchanged`].

use serde_json::{Map, Value};

/// What one edit did.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// The object changed; the text describes how.
    Changed(String),
    /// Nothing to do.
    Unchanged,
    /// The edit cannot be made safely; the text says why.
    Refused(String),
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        let head: String = s.chars().take(57).collect();
        format!("{head}…")
    } else {
        s
    }
}

/// `key` takes `value`.
pub(crate) fn set(map: &mut Map<String, Value>, key: &str, value: &Value) -> Outcome {
    if map.get(key) == Some(value) {
        return Outcome::Unchanged;
    }
    map.insert(key.to_owned(), value.clone());
    Outcome::Changed(format!("set {key} to {}", show(value)))
}

/// Renames `from` to `to` at the same position.
pub(crate) fn rename(map: &mut Map<String, Value>, from: &str, to: &str, as_list: bool) -> Outcome {
    if !map.contains_key(from) {
        return Outcome::Unchanged;
    }
    if map.contains_key(to) {
        return Outcome::Refused(format!("both {from} and {to} are set"));
    }
    let old = std::mem::take(map);
    for (k, v) in old {
        if k == from {
            let v = match v {
                Value::Array(_) => v,
                other if as_list => Value::Array(vec![other]),
                other => other,
            };
            map.insert(to.to_owned(), v);
        } else {
            map.insert(k, v);
        }
    }
    Outcome::Changed(format!("renamed {from} to {to}"))
}

/// Where a key of `keys` holds `from`, writes `to`.
pub(crate) fn replace(
    map: &mut Map<String, Value>,
    keys: &[String],
    from: &Value,
    to: &Value,
) -> Outcome {
    let mut done = Vec::new();
    for k in keys {
        if let Some(v) = map.get_mut(k) {
            if v == from {
                *v = to.clone();
                done.push(k.as_str());
            }
        }
    }
    if done.is_empty() {
        Outcome::Unchanged
    } else {
        Outcome::Changed(format!("{} {} → {}", done.join(", "), show(from), show(to)))
    }
}

/// A string value (or each string of a list) that matches `pattern` is rewritten by
/// `template`: `$1`…`$9` are the match's groups, `{scheme}` is `scheme`.
pub(crate) fn reformat(
    map: &mut Map<String, Value>,
    key: &str,
    pattern: &str,
    template: &str,
    scheme: &str,
) -> Outcome {
    let re = match regress::Regex::new(pattern) {
        Ok(re) => re,
        Err(e) => return Outcome::Refused(format!("bad pattern {pattern:?}: {e}")),
    };
    let rewrite = |s: &str| -> Option<String> {
        let m = re.find(s)?;
        Some(expand(template, scheme, |i| {
            m.group(i).map(|r| &s[r]).unwrap_or("")
        }))
    };
    let Some(v) = map.get_mut(key) else {
        return Outcome::Unchanged;
    };
    let before = v.clone();
    match v {
        Value::String(s) => {
            if let Some(new) = rewrite(s) {
                *s = new;
            }
        }
        Value::Array(items) => {
            for it in items {
                if let Value::String(s) = it {
                    if let Some(new) = rewrite(s) {
                        *s = new;
                    }
                }
            }
        }
        _ => {}
    }
    if *v == before {
        Outcome::Unchanged
    } else {
        Outcome::Changed(format!("{key} {} → {}", show(&before), show(v)))
    }
}

/// Fills a template: `$N` (one digit) by group N, `{scheme}` by the URI scheme.
fn expand<'a>(template: &str, scheme: &str, group: impl Fn(usize) -> &'a str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("{scheme}") {
            out.push_str(scheme);
            rest = after;
            continue;
        }
        if c == '$' {
            if let Some(d) = rest[1..].chars().next().and_then(|d| d.to_digit(10)) {
                out.push_str(group(d as usize));
                rest = &rest[2..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Adds the version key after `Name` (or first) when it is missing.
pub(crate) fn add_version(map: &mut Map<String, Value>, key: &str, version: &str) -> Outcome {
    if map.contains_key(key) {
        return Outcome::Unchanged;
    }
    let at = map.keys().position(|k| k == "Name").map_or(0, |i| i + 1);
    map.shift_insert(at, key.to_owned(), Value::String(version.to_owned()));
    Outcome::Changed(format!("added {key} {version:?}"))
}

/// Adds `text` to `key` of the column's entry of a table's sidecar.
pub(crate) fn note_column(
    map: &mut Map<String, Value>,
    column: &str,
    key: &str,
    text: &str,
) -> Outcome {
    let entry = map
        .entry(column.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(entry) = entry else {
        return Outcome::Refused(format!("the sidecar's {column} is not an object"));
    };
    match entry.get_mut(key) {
        None => {
            entry.insert(key.to_owned(), Value::String(text.to_owned()));
        }
        Some(Value::String(s)) if s.contains(text) => return Outcome::Unchanged,
        Some(Value::String(s)) => {
            if !s.is_empty() && !s.ends_with(' ') {
                s.push(' ');
            }
            s.push_str(text);
        }
        Some(_) => {
            return Outcome::Refused(format!("the sidecar's {column}.{key} is not a string"))
        }
    }
    Outcome::Changed(format!("noted in {column}.{key}: {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn rename_keeps_the_position_and_wraps_a_value() {
        let mut m = obj(json!({"A": 1, "BasedOn": "x.nii", "Z": 2}));
        assert!(matches!(
            rename(&mut m, "BasedOn", "Sources", true),
            Outcome::Changed(_)
        ));
        assert_eq!(
            Value::Object(m.clone()).to_string(),
            r#"{"A":1,"Sources":["x.nii"],"Z":2}"#
        );
        assert_eq!(
            rename(&mut m, "BasedOn", "Sources", true),
            Outcome::Unchanged
        );
        let mut both = obj(json!({"BasedOn": [], "Sources": []}));
        assert!(matches!(
            rename(&mut both, "BasedOn", "Sources", true),
            Outcome::Refused(_)
        ));
    }

    #[test]
    fn reformat_is_idempotent() {
        let mut m = obj(json!({"DatasetDOI": "10.1/x"}));
        let op =
            |m: &mut Map<String, Value>| reformat(m, "DatasetDOI", "^(10\\..*)$", "doi:$1", "std");
        assert!(matches!(op(&mut m), Outcome::Changed(_)));
        assert_eq!(m["DatasetDOI"], "doi:10.1/x");
        assert_eq!(op(&mut m), Outcome::Unchanged);
        let mut e = obj(json!({"R": ["/sub-a/x.fif", "bids::y"]}));
        reformat(&mut e, "R", "^/?([^:]+)$", "{scheme}::$1", "std");
        assert_eq!(e["R"], json!(["std::sub-a/x.fif", "bids::y"]));
    }

    #[test]
    fn version_goes_after_the_name() {
        let mut m = obj(json!({"Name": "n", "Authors": []}));
        add_version(&mut m, "StdVersion", "1.11.1");
        assert_eq!(
            m.keys().collect::<Vec<_>>(),
            ["Name", "StdVersion", "Authors"]
        );
        assert_eq!(add_version(&mut m, "StdVersion", "2"), Outcome::Unchanged);
    }

    #[test]
    fn notes_are_added_once() {
        let mut m = obj(json!({"age": {"Description": "Age", "Units": "year"}}));
        note_column(&mut m, "age", "Description", "Capped.");
        assert_eq!(m["age"]["Description"], "Age Capped.");
        assert_eq!(
            note_column(&mut m, "age", "Description", "Capped."),
            Outcome::Unchanged
        );
    }
}
