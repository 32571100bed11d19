//! Checks a JSON value against a metadata definition of the schema.
//!
//! Metadata and column definitions use a small subset of JSON Schema (type, enum,
//! anyOf, items, min/maxItems, minimum/maximum and their exclusive forms, pattern,
//! format, properties, required, additionalProperties). Formats are the schema's own
//! named ECMAScript patterns, supplied by the caller.

use serde_json::Value as Json;

/// Looks up a named format and tests a string against it (anchored).
pub trait FormatCheck {
    /// `None` when the format is unknown (the value then passes).
    fn check(&self, format: &str, value: &str) -> Option<bool>;
}

/// One reason a value does not fit its definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// JSON pointer-like path inside the value (`""` for the value itself, `/0/Name`…).
    pub at: String,
    pub message: String,
}

/// Checks `value` against `def`; returns every violation (empty when valid).
pub fn check(value: &Json, def: &Json, formats: &dyn FormatCheck) -> Vec<Violation> {
    let mut out = Vec::new();
    check_into(value, def, formats, "", &mut out);
    out
}

fn json_type_matches(value: &Json, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value
            .as_f64()
            .is_some_and(|n| n.fract() == 0.0 && n.is_finite()),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn describe(value: &Json) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn check_into(
    value: &Json,
    def: &Json,
    formats: &dyn FormatCheck,
    at: &str,
    out: &mut Vec<Violation>,
) {
    let Some(def) = def.as_object() else {
        return;
    };
    let mut push = |message: String| {
        out.push(Violation {
            at: at.to_string(),
            message,
        })
    };

    if let Some(ty) = def.get("type") {
        let ok = match ty {
            Json::String(t) => json_type_matches(value, t),
            Json::Array(ts) => ts
                .iter()
                .filter_map(Json::as_str)
                .any(|t| json_type_matches(value, t)),
            _ => true,
        };
        if !ok {
            push(format!(
                "must be of type {}, found {}",
                ty_text(ty),
                describe(value)
            ));
            return;
        }
    }
    if let Some(Json::Array(options)) = def.get("enum") {
        if !options.iter().any(|o| json_eq(o, value)) {
            let list: Vec<String> = options.iter().map(describe).collect();
            push(format!(
                "must be one of [{}], found {}",
                list.join(", "),
                describe(value)
            ));
        }
    }
    if let Some(Json::Array(alternatives)) = def.get("anyOf") {
        let mut all = Vec::new();
        let mut matched = false;
        for alt in alternatives {
            let mut sub = Vec::new();
            check_into(value, alt, formats, at, &mut sub);
            if sub.is_empty() {
                matched = true;
                break;
            }
            all.extend(sub);
        }
        if !matched {
            let reasons: Vec<String> = all.iter().map(|v| v.message.clone()).collect();
            push(format!(
                "must match one of the allowed forms ({})",
                reasons.join("; ")
            ));
        }
    }
    if let Some(n) = value.as_f64() {
        bound(def, "minimum", n, |n, b| n >= b, ">=", &mut push);
        bound(def, "maximum", n, |n, b| n <= b, "<=", &mut push);
        bound(def, "exclusiveMinimum", n, |n, b| n > b, ">", &mut push);
        bound(def, "exclusiveMaximum", n, |n, b| n < b, "<", &mut push);
    }
    if let Some(s) = value.as_str() {
        if let Some(Json::String(format)) = def.get("format") {
            if formats.check(format, s) == Some(false) {
                push(format!(
                    "must match format \"{format}\", found {}",
                    describe(value)
                ));
            }
        }
        if let Some(Json::String(pattern)) = def.get("pattern") {
            if let Ok(re) = regress::Regex::new(pattern) {
                if re.find(s).is_none() {
                    push(format!(
                        "must match pattern \"{pattern}\", found {}",
                        describe(value)
                    ));
                }
            }
        }
    }
    if let Some(items) = value.as_array() {
        if let Some(min) = def.get("minItems").and_then(Json::as_u64) {
            if (items.len() as u64) < min {
                push(format!(
                    "must have at least {min} items, found {}",
                    items.len()
                ));
            }
        }
        if let Some(max) = def.get("maxItems").and_then(Json::as_u64) {
            if (items.len() as u64) > max {
                push(format!(
                    "must have at most {max} items, found {}",
                    items.len()
                ));
            }
        }
        if let Some(item_def) = def.get("items") {
            for (i, item) in items.iter().enumerate() {
                check_into(item, item_def, formats, &format!("{at}/{i}"), out);
            }
        }
    }
    if let Some(obj) = value.as_object() {
        if let Some(Json::Array(required)) = def.get("required") {
            for key in required.iter().filter_map(Json::as_str) {
                if !obj.contains_key(key) {
                    out.push(Violation {
                        at: at.to_string(),
                        message: format!("must have required property \"{key}\""),
                    });
                }
            }
        }
        let props = def.get("properties").and_then(Json::as_object);
        for (key, v) in obj {
            let sub_at = format!("{at}/{key}");
            match props.and_then(|p| p.get(key)) {
                Some(prop_def) => check_into(v, prop_def, formats, &sub_at, out),
                None => match def.get("additionalProperties") {
                    Some(Json::Bool(false)) => out.push(Violation {
                        at: at.to_string(),
                        message: format!("must not have additional property \"{key}\""),
                    }),
                    Some(extra @ Json::Object(_)) => check_into(v, extra, formats, &sub_at, out),
                    _ => {}
                },
            }
        }
    }
}

fn bound(
    def: &serde_json::Map<String, Json>,
    key: &str,
    n: f64,
    ok: impl Fn(f64, f64) -> bool,
    op: &str,
    push: &mut impl FnMut(String),
) {
    if let Some(b) = def.get(key).and_then(Json::as_f64) {
        if !ok(n, b) {
            push(format!("must be {op} {b}, found {n}"));
        }
    }
}

fn ty_text(ty: &Json) -> String {
    match ty {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Equality with JSON number semantics (1 == 1.0).
pub fn json_eq(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}
