//! Structural checks of a schema: unknown keys, level words, duplicate issue codes.
//!
//! YAML trees (our own format) must pass the unknown-key and level checks to load;
//! for compiled upstream JSON the same findings are only warnings (upstream schemas
//! carry a few quirks). `nidos schema check` reports all of them.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{ErrorKind, SchemaError, SchemaErrors};
use crate::shape::{children, Checker};
use crate::views::{Codes, RULE_KINDS};
use crate::{load_path_with, LoadOptions};

const OBJECT_TABLES: &[&str] = &[
    "columns",
    "common_principles",
    "datatypes",
    "entities",
    "enums",
    "extensions",
    "files",
    "formats",
    "metadata",
    "metaentities",
    "modalities",
    "suffixes",
];
/// Keys of `rules` besides the nodes of the rule kinds ([`RULE_KINDS`]).
const OTHER_RULE_NODES: &[&str] = &[
    "citation",
    "common_principles",
    "entities",
    "metaentities",
    "modalities",
];
/// Keys of `meta` besides the nodes of the rule kinds.
const OTHER_META_KEYS: &[&str] = &[
    "brand",
    "brands",
    "context",
    "expression_tests",
    "templates",
    "versions",
];

const TERM_KEYS: &[&str] = &["value", "display_name", "description"];
const NAMED_KEYS: &[&str] = &["name", "display_name", "description"];
/// What an entity adds to [`NAMED_KEYS`]; a metadata or column definition adds
/// [`SCHEMA_KEYS`] to both.
const TYPED_KEYS: &[&str] = &["type", "format", "enum"];
const SCHEMA_KEYS: &[&str] = &[
    "anyOf",
    "oneOf",
    "allOf",
    "items",
    "properties",
    "additionalProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "unit",
    "pattern",
    "definition",
    "required",
    "recommended",
    "required_fields",
    "recommended_fields",
];
/// What a suffix adds to [`TERM_KEYS`].
const SUFFIX_ONLY_KEYS: &[&str] = &["unit", "anyOf", "minValue", "maxValue"];
/// What an enum value adds to [`TERM_KEYS`].
const ENUM_ONLY_KEYS: &[&str] = &["type", "enum", "tags"];
const FORMAT_KEYS: &[&str] = &["display_name", "description", "pattern"];
const FILE_OBJ_KEYS: &[&str] = &["display_name", "description", "file_type"];
/// Keys a column definition may have beyond a metadata definition's.
const COLUMN_ONLY_KEYS: &[&str] = &["deprecated_values"];
const DEPRECATED_VALUE_KEYS: &[&str] = &["value", "issue"];

/// The result of checking a schema.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    pub errors: Vec<SchemaError>,
    pub warnings: Vec<SchemaError>,
}

impl CheckReport {
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

impl Checker {
    /// `objects.columns`: definitions, with the values each deprecates.
    fn columns(&mut self, table: &Value) {
        for (k, def) in children(table) {
            let at = format!("objects.columns.{k}");
            self.keys_of(
                def,
                &at,
                &[NAMED_KEYS, TYPED_KEYS, SCHEMA_KEYS, COLUMN_ONLY_KEYS],
            );
            let Some(list) = def.get("deprecated_values") else {
                continue;
            };
            let dat = format!("{at}.deprecated_values");
            let Some(items) = list.as_array() else {
                self.out.push(SchemaError::new(
                    ErrorKind::Structure,
                    dat,
                    "expected a list of {value, issue}",
                ));
                continue;
            };
            for (i, item) in items.iter().enumerate() {
                let iat = format!("{dat}[{i}]");
                self.keys(item, &iat, DEPRECATED_VALUE_KEYS);
                if let Some(issue) = item.get("issue") {
                    self.issue(issue, &format!("{iat}.issue"));
                }
            }
        }
    }

    fn run(&mut self, raw: &Value) {
        self.keys(
            raw,
            "",
            &["version", "schema_version", "objects", "rules", "meta"],
        );
        // `keys` with an empty prefix yields ".x": tidy it.
        for e in &mut self.out {
            if let Some(k) = e.key.strip_prefix('.') {
                e.key = k.to_owned();
            }
        }
        let objects = raw.get("objects").unwrap_or(&Value::Null);
        self.keys(objects, "objects", OBJECT_TABLES);
        for (t, tv) in children(objects) {
            let at = format!("objects.{t}");
            let allowed: &[&[&str]] = match t.as_str() {
                "datatypes" | "extensions" => &[TERM_KEYS],
                "suffixes" => &[TERM_KEYS, SUFFIX_ONLY_KEYS],
                "entities" => &[NAMED_KEYS, TYPED_KEYS],
                "formats" => &[FORMAT_KEYS],
                "common_principles" | "modalities" | "metaentities" => &[NAMED_KEYS],
                "files" => &[FILE_OBJ_KEYS],
                "enums" => &[TERM_KEYS, ENUM_ONLY_KEYS],
                "metadata" => &[NAMED_KEYS, TYPED_KEYS, SCHEMA_KEYS],
                "columns" => {
                    self.columns(tv);
                    continue;
                }
                _ => continue,
            };
            self.table(tv, &at, allowed);
        }

        let rules = raw.get("rules").unwrap_or(&Value::Null);
        self.keys_of(rules, "rules", &Self::nodes("rules", OTHER_RULE_NODES));
        self.kinds(raw, "rules");
        self.table(
            rules.get("modalities").unwrap_or(&Value::Null),
            "rules.modalities",
            &[&["datatypes"]],
        );

        let meta = raw.get("meta").unwrap_or(&Value::Null);
        self.keys_of(meta, "meta", &Self::nodes("meta", OTHER_META_KEYS));
        self.kinds(raw, "meta");
    }

    /// The keys allowed under `root`: `other`, then the nodes of its rule kinds.
    fn nodes(root: &str, other: &'static [&'static str]) -> Vec<&'static [&'static str]> {
        let mut nodes = vec![other];
        nodes.extend(
            RULE_KINDS
                .iter()
                .filter(|k| k.root == root)
                .map(|k| k.nodes),
        );
        nodes
    }

    /// The keys and shape of every rule of the kinds under `root`.
    fn kinds(&mut self, raw: &Value, root: &str) {
        for kind in RULE_KINDS.iter().filter(|k| k.root == root) {
            for (at, r) in kind.rules(raw) {
                self.keys(r, &at, kind.keys);
                (kind.check)(self, r, &at);
            }
        }
    }
}

/// Unknown keys and bad levels in a resolved (raw) tree. With `exact_levels`, a level
/// must be exactly one of the words; otherwise prose after the word is tolerated.
pub fn structure_findings(raw: &Value, exact_levels: bool) -> Vec<SchemaError> {
    let mut c = Checker {
        out: Vec::new(),
        exact_levels,
    };
    c.run(raw);
    c.out
}

/// Issue codes used with different messages, each reported at its second use.
pub fn duplicate_codes(raw: &Value) -> Vec<SchemaError> {
    let mut seen: HashMap<String, (String, String)> = HashMap::new();
    let mut out = Vec::new();
    let mut visit = |code: &str, msg: &str, at: String, out: &mut Vec<SchemaError>| {
        if code.is_empty() {
            return;
        }
        match seen.get(code) {
            Some((m, first)) if m.trim() != msg.trim() => out.push(SchemaError::new(
                ErrorKind::DuplicateCode,
                at,
                format!("issue code {code} is also used at {first} with a different message"),
            )),
            Some(_) => {}
            None => {
                seen.insert(code.to_owned(), (msg.to_owned(), at));
            }
        }
    };
    fn walk(v: &Value, at: &str, f: &mut dyn FnMut(&str, &str, String)) {
        if let Value::Object(m) = v {
            if let Some(Value::Object(issue)) = m.get("issue") {
                let code = issue.get("code").and_then(Value::as_str).unwrap_or("");
                let msg = issue.get("message").and_then(Value::as_str).unwrap_or("");
                f(code, msg, format!("{at}.issue.code"));
            }
            for (k, x) in m {
                if k != "issue" {
                    walk(x, &format!("{at}.{k}"), f);
                }
            }
        }
    }
    let mut sink = Vec::new();
    for kind in RULE_KINDS.iter().filter(|k| k.codes == Codes::Issues) {
        let root = raw.get(kind.root).unwrap_or(&Value::Null);
        for node in kind.nodes {
            if let Some(v) = root.get(*node) {
                walk(v, &format!("{}.{node}", kind.root), &mut |c, m, at| {
                    visit(c, m, at, &mut sink)
                });
            }
        }
    }
    for kind in RULE_KINDS.iter().filter(|k| k.codes == Codes::Own) {
        for (at, e) in kind.rules(raw) {
            let code = e.get("code").and_then(Value::as_str).unwrap_or("");
            let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
            visit(code, msg, format!("{at}.code"), &mut sink);
        }
    }
    out.append(&mut sink);
    out
}

/// Checks a resolved tree without loading it: structure and duplicate codes.
/// `strict` = our YAML format (exact levels); errors are what `nidos schema check`
/// fails on.
pub fn check_value(raw: &Value, strict: bool) -> CheckReport {
    let mut r = CheckReport::default();
    r.errors.extend(structure_findings(raw, strict));
    r.errors.extend(duplicate_codes(raw));
    r
}

/// Everything `nidos schema check PATH` reports for a YAML tree or a compiled JSON:
/// load errors (YAML syntax, dangling references, cycles, bad regexes, unparsable
/// expressions, bad levels, unknown keys) plus duplicate issue codes, each with its
/// file and key. Warnings include unknown functions.
pub fn check_path(path: &Path) -> CheckReport {
    let mut report = CheckReport::default();
    let opts = LoadOptions::default();
    match load_path_with(path, &opts) {
        Ok(schema) => {
            // Upstream quirks that only warn at load are errors for `check`.
            let (errs, warns): (Vec<_>, Vec<_>) = schema.warnings.into_iter().partition(|w| {
                matches!(
                    w.kind,
                    ErrorKind::UnknownKey | ErrorKind::BadLevel | ErrorKind::DuplicateCode
                )
            });
            report.errors.extend(errs);
            report.warnings.extend(warns);
        }
        Err(SchemaErrors(errs)) => report.errors.extend(errs),
    }
    report
}
