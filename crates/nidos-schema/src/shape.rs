//! The shape checks every part of the structure check shares: known keys, level and
//! severity words, issue objects.

use serde_json::Value;

use crate::error::{ErrorKind, SchemaError};
use crate::model::{Level, Severity};

const ISSUE_KEYS: &[&str] = &["code", "message", "level"];

/// Collects structure findings.
pub(crate) struct Checker {
    pub out: Vec<SchemaError>,
    /// Levels must be exactly one of the words (YAML trees), not prose.
    pub exact_levels: bool,
}

/// What a value is, in words (`a mapping`, `a list`, …), for messages.
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

pub(crate) fn children<'a>(v: &'a Value) -> Box<dyn Iterator<Item = (&'a String, &'a Value)> + 'a> {
    match v.as_object() {
        Some(m) => Box::new(m.iter()),
        None => Box::new(std::iter::empty()),
    }
}

impl Checker {
    pub(crate) fn unknown(&mut self, key: String, allowed: &[&str]) {
        self.out.push(SchemaError::new(
            ErrorKind::UnknownKey,
            key,
            format!("unknown key (expected one of: {})", allowed.join(", ")),
        ));
    }

    pub(crate) fn keys(&mut self, v: &Value, at: &str, allowed: &[&str]) {
        self.keys_of(v, at, &[allowed]);
    }

    /// [`Checker::keys`] with the allowed keys in several lists.
    pub(crate) fn keys_of(&mut self, v: &Value, at: &str, allowed: &[&[&str]]) {
        match v {
            Value::Object(m) => {
                for k in m.keys() {
                    if !allowed.iter().any(|a| a.contains(&k.as_str())) {
                        self.unknown(format!("{at}.{k}"), &allowed.concat());
                    }
                }
            }
            Value::Null => {}
            other => self.out.push(SchemaError::new(
                ErrorKind::Structure,
                at,
                format!("expected a mapping, found {}", kind_of(other)),
            )),
        }
    }

    /// Each entry of the mapping `v` has only keys of the `allowed` lists.
    pub(crate) fn table(&mut self, v: &Value, at: &str, allowed: &[&[&str]]) {
        for (k, x) in children(v) {
            self.keys_of(x, &format!("{at}.{k}"), allowed);
        }
    }

    pub(crate) fn level(&mut self, v: &Value, at: &str) {
        match v.as_str() {
            Some(s) if Level::is_exact(s) => {}
            Some(s) if !self.exact_levels && Level::parse(s).is_some() => {}
            Some(s) => self.out.push(SchemaError::new(
                ErrorKind::BadLevel,
                at,
                format!("bad level `{}` (expected required, recommended, optional, deprecated or prohibited)", s.trim()),
            )),
            None => self.out.push(SchemaError::new(ErrorKind::BadLevel, at, "a level must be a string")),
        }
    }

    pub(crate) fn severity(&mut self, v: Option<&Value>, at: &str) {
        if let Some(v) = v {
            if v.as_str().and_then(Severity::parse).is_none() {
                self.out.push(SchemaError::new(
                    ErrorKind::BadLevel,
                    at,
                    format!("bad severity {v} (expected error, warning or ignore)"),
                ));
            }
        }
    }

    pub(crate) fn issue(&mut self, v: &Value, at: &str) {
        self.keys(v, at, ISSUE_KEYS);
        self.severity(v.get("level"), &format!("{at}.level"));
    }
}
