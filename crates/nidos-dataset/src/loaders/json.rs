//! JSON files: sidecars, `dataset_description.json`, and any `.json` the rules read.
//!
//! The standard requires UTF-8 without a byte-order mark, and a top-level object.

use serde_json::{Map, Value as Json};

use super::text::{check_utf8, sniff_wide_encoding, UTF8_BOM};
use super::{LoadIssue, Loaded};

/// Text is not UTF-8 (UTF-16, Latin-1…), or starts with a byte-order mark.
pub const INVALID_JSON_ENCODING: &str = "INVALID_JSON_ENCODING";
/// The text is not valid JSON.
pub const JSON_INVALID: &str = "JSON_INVALID";
/// Valid JSON, but the top-level value is not an object.
pub const JSON_NOT_AN_OBJECT: &str = "JSON_NOT_AN_OBJECT";

/// Parses a JSON file that must hold one object.
///
/// A UTF-8 byte-order mark is reported (`INVALID_JSON_ENCODING`, error level, as the reference
/// validator rates it) in [`Loaded::issues`], and the object after it is still returned so
/// rules can run. Any other encoding problem, malformed JSON, or a non-object top level is fatal.
pub fn read_json_object(bytes: &[u8]) -> Result<Loaded<Map<String, Json>>, LoadIssue> {
    let mut issues = Vec::new();
    let body = match bytes.strip_prefix(UTF8_BOM) {
        Some(rest) => {
            issues.push(
                LoadIssue::error(
                    INVALID_JSON_ENCODING,
                    "the file starts with a UTF-8 byte-order mark; JSON files must not have one",
                )
                .at(1, 1),
            );
            rest
        }
        None => bytes,
    };
    if let Some(enc) = sniff_wide_encoding(body) {
        return Err(LoadIssue::error(
            INVALID_JSON_ENCODING,
            format!("the file appears to be {enc}; JSON files must be UTF-8"),
        )
        .at(1, 1));
    }
    let text = check_utf8(body).map_err(|(message, line, column)| {
        LoadIssue::error(INVALID_JSON_ENCODING, message).at(line, column)
    })?;
    let value: Json = serde_json::from_str(text).map_err(|e| {
        let issue = LoadIssue::error(JSON_INVALID, format!("not valid JSON: {e}"));
        if e.line() > 0 {
            issue.at(e.line(), e.column().max(1))
        } else {
            issue
        }
    })?;
    match value {
        Json::Object(map) => Ok(Loaded { value: map, issues }),
        other => {
            let text = text.trim();
            let mut head: String = text.chars().take(10).collect();
            if text.chars().nth(10).is_some() {
                head.push_str("...");
            }
            Err(LoadIssue::error(
                JSON_NOT_AN_OBJECT,
                format!(
                    "the top-level value must be an object, found {} ({head})",
                    json_type_name(&other)
                ),
            ))
        }
    }
}

/// Converts a loaded object to the expression language's value (the `json` / `sidecar`
/// context fields).
pub fn to_value(map: &Map<String, Json>) -> nidos_expr::Value {
    nidos_expr::Value::object(
        map.iter()
            .map(|(k, v)| (k.clone(), nidos_expr::Value::from(v)))
            .collect(),
    )
}

fn json_type_name(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}
