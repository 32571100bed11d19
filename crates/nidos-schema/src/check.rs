//! Structural checks of a schema: unknown keys, level words, duplicate issue codes.
//!
//! YAML trees (our own format) must pass the unknown-key and level checks to load;
//! for compiled upstream JSON the same findings are only warnings (upstream schemas
//! carry a few quirks). `nidos schema check` reports all of them.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{ErrorKind, SchemaError, SchemaErrors};
use crate::model::{Level, Severity};
use crate::views::{
    rule_nodes, CHECK_RULE_MARKERS, FIELD_RULE_MARKERS, FILE_RULE_MARKERS, TABULAR_RULE_MARKERS,
};
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
const RULE_KINDS: &[&str] = &[
    "checks",
    "citation",
    "common_principles",
    "dataset_metadata",
    "directories",
    "entities",
    "errors",
    "files",
    "json",
    "metaentities",
    "modalities",
    "sidecars",
    "tabular_data",
];
const META_KEYS: &[&str] = &[
    "associations",
    "brand",
    "brands",
    "context",
    "expression_tests",
    "templates",
    "versions",
];

const TERM_KEYS: &[&str] = &["value", "display_name", "description"];
const SUFFIX_KEYS: &[&str] = &[
    "value",
    "display_name",
    "description",
    "unit",
    "anyOf",
    "minValue",
    "maxValue",
];
const ENTITY_KEYS: &[&str] = &[
    "name",
    "display_name",
    "description",
    "type",
    "format",
    "enum",
];
const FORMAT_KEYS: &[&str] = &["display_name", "description", "pattern"];
const NAMED_KEYS: &[&str] = &["name", "display_name", "description"];
const FILE_OBJ_KEYS: &[&str] = &["display_name", "description", "file_type"];
const ENUM_KEYS: &[&str] = &[
    "value",
    "display_name",
    "description",
    "type",
    "enum",
    "tags",
];
const DEFINITION_KEYS: &[&str] = &[
    "name",
    "display_name",
    "description",
    "type",
    "format",
    "enum",
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
const FILE_RULE_KEYS: &[&str] = &[
    "selectors",
    "suffixes",
    "extensions",
    "datatypes",
    "entities",
    "level",
    "path",
    "stem",
];
const FIELD_RULE_KEYS: &[&str] = &["selectors", "fields"];
const FIELD_KEYS: &[&str] = &[
    "level",
    "level_addendum",
    "level_if",
    "description_addendum",
    "issue",
    "fix",
];
const ISSUE_KEYS: &[&str] = &["code", "message", "level"];
const LEVEL_IF_KEYS: &[&str] = &["key", "is", "level"];
/// Keys a column definition may have beyond [`DEFINITION_KEYS`].
const COLUMN_ONLY_KEYS: &[&str] = &["deprecated_values"];
const DEPRECATED_VALUE_KEYS: &[&str] = &["value", "issue"];
const TABULAR_KEYS: &[&str] = &[
    "selectors",
    "columns",
    "initial_columns",
    "index_columns",
    "additional_columns",
];
const COLUMN_KEYS: &[&str] = &[
    "level",
    "level_addendum",
    "description_addendum",
    "definition",
];
const CHECK_KEYS: &[&str] = &["selectors", "checks", "issue", "fix"];
const ERROR_KEYS: &[&str] = &["code", "message", "level", "selectors", "fix"];
const DIRECTORY_KEYS: &[&str] = &["name", "value", "entity", "level", "opaque", "subdirs"];
const ASSOCIATION_KEYS: &[&str] = &["selectors", "target", "inherit", "reverse"];
const TARGET_KEYS: &[&str] = &["suffix", "extension", "entities"];
const ENTITY_REQ_KEYS: &[&str] = &["level", "enum"];
const ADDITIONAL_COLUMNS: &[&str] = &["allowed", "allowed_if_defined", "not_allowed", "n/a"];

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

struct Checker {
    out: Vec<SchemaError>,
    /// Levels must be exactly one of the words (YAML trees), not prose.
    exact_levels: bool,
}

fn children<'a>(v: &'a Value) -> Box<dyn Iterator<Item = (&'a String, &'a Value)> + 'a> {
    match v.as_object() {
        Some(m) => Box::new(m.iter()),
        None => Box::new(std::iter::empty()),
    }
}

impl Checker {
    fn unknown(&mut self, key: String, allowed: &[&str]) {
        self.out.push(SchemaError::new(
            ErrorKind::UnknownKey,
            key,
            format!("unknown key (expected one of: {})", allowed.join(", ")),
        ));
    }

    fn keys(&mut self, v: &Value, at: &str, allowed: &[&str]) {
        self.keys_of(v, at, &[allowed]);
    }

    /// [`Checker::keys`] with the allowed keys in several lists.
    fn keys_of(&mut self, v: &Value, at: &str, allowed: &[&[&str]]) {
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
                format!("expected a mapping, found {}", crate::views::kind_of(other)),
            )),
        }
    }

    fn table(&mut self, v: &Value, at: &str, allowed: &[&str]) {
        for (k, x) in children(v) {
            self.keys(x, &format!("{at}.{k}"), allowed);
        }
    }

    fn level(&mut self, v: &Value, at: &str) {
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

    fn severity(&mut self, v: Option<&Value>, at: &str) {
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

    fn issue(&mut self, v: &Value, at: &str) {
        self.keys(v, at, ISSUE_KEYS);
        self.severity(v.get("level"), &format!("{at}.level"));
    }

    fn fields(&mut self, rule: &Value, at: &str) {
        self.keys(rule, at, FIELD_RULE_KEYS);
        for (f, fv) in children(rule.get("fields").unwrap_or(&Value::Null)) {
            let fat = format!("{at}.fields.{f}");
            if fv.is_string() {
                self.level(fv, &fat);
            } else {
                self.keys(fv, &fat, FIELD_KEYS);
                self.level(
                    fv.get("level").unwrap_or(&Value::Null),
                    &format!("{fat}.level"),
                );
                if let Some(i) = fv.get("issue") {
                    self.issue(i, &format!("{fat}.issue"));
                }
                if let Some(cond) = fv.get("level_if") {
                    let cat = format!("{fat}.level_if");
                    self.keys(cond, &cat, LEVEL_IF_KEYS);
                    self.level(
                        cond.get("level").unwrap_or(&Value::Null),
                        &format!("{cat}.level"),
                    );
                }
            }
        }
    }

    /// `objects.columns`: definitions, with the values each deprecates.
    fn columns(&mut self, table: &Value) {
        for (k, def) in children(table) {
            let at = format!("objects.columns.{k}");
            self.keys_of(def, &at, &[DEFINITION_KEYS, COLUMN_ONLY_KEYS]);
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
            let allowed = match t.as_str() {
                "datatypes" | "extensions" => TERM_KEYS,
                "suffixes" => SUFFIX_KEYS,
                "entities" => ENTITY_KEYS,
                "formats" => FORMAT_KEYS,
                "common_principles" | "modalities" | "metaentities" => NAMED_KEYS,
                "files" => FILE_OBJ_KEYS,
                "enums" => ENUM_KEYS,
                "metadata" => DEFINITION_KEYS,
                "columns" => {
                    self.columns(tv);
                    continue;
                }
                _ => continue,
            };
            self.table(tv, &at, allowed);
        }

        let rules = raw.get("rules").unwrap_or(&Value::Null);
        self.keys(rules, "rules", RULE_KINDS);
        let node = |k: &str| rules.get(k).unwrap_or(&Value::Null);
        for (at, r) in rule_nodes(node("files"), "rules.files", FILE_RULE_MARKERS) {
            self.keys(r, &at, FILE_RULE_KEYS);
            if let Some(l) = r.get("level") {
                self.level(l, &format!("{at}.level"));
            }
            for (e, ev) in children(r.get("entities").unwrap_or(&Value::Null)) {
                let eat = format!("{at}.entities.{e}");
                if ev.is_string() {
                    self.level(ev, &eat);
                } else {
                    self.keys(ev, &eat, ENTITY_REQ_KEYS);
                    self.level(
                        ev.get("level").unwrap_or(&Value::Null),
                        &format!("{eat}.level"),
                    );
                }
            }
        }
        for kind in ["sidecars", "json", "dataset_metadata"] {
            for (at, r) in rule_nodes(node(kind), &format!("rules.{kind}"), FIELD_RULE_MARKERS) {
                self.fields(r, &at);
            }
        }
        for (at, r) in rule_nodes(
            node("tabular_data"),
            "rules.tabular_data",
            TABULAR_RULE_MARKERS,
        ) {
            self.keys(r, &at, TABULAR_KEYS);
            for (c, cv) in children(r.get("columns").unwrap_or(&Value::Null)) {
                let cat = format!("{at}.columns.{c}");
                if cv.is_string() {
                    self.level(cv, &cat);
                } else {
                    self.keys(cv, &cat, COLUMN_KEYS);
                    self.level(
                        cv.get("level").unwrap_or(&Value::Null),
                        &format!("{cat}.level"),
                    );
                }
            }
            if let Some(a) = r.get("additional_columns") {
                if !a.as_str().is_some_and(|s| ADDITIONAL_COLUMNS.contains(&s)) {
                    self.out.push(SchemaError::new(
                        ErrorKind::BadLevel,
                        format!("{at}.additional_columns"),
                        format!(
                            "bad value {a} (expected one of: {})",
                            ADDITIONAL_COLUMNS.join(", ")
                        ),
                    ));
                }
            }
        }
        for (at, r) in rule_nodes(node("checks"), "rules.checks", CHECK_RULE_MARKERS) {
            self.keys(r, &at, CHECK_KEYS);
            if let Some(i) = r.get("issue") {
                self.issue(i, &format!("{at}.issue"));
            }
        }
        for (n, r) in children(rules.get("errors").unwrap_or(&Value::Null)) {
            let at = format!("rules.errors.{n}");
            self.keys(r, &at, ERROR_KEYS);
            self.severity(r.get("level"), &format!("{at}.level"));
        }
        for (l, es) in children(rules.get("directories").unwrap_or(&Value::Null)) {
            for (n, r) in children(es) {
                let at = format!("rules.directories.{l}.{n}");
                self.keys(r, &at, DIRECTORY_KEYS);
                if let Some(lv) = r.get("level") {
                    self.level(lv, &format!("{at}.level"));
                }
            }
        }
        self.table(
            rules.get("modalities").unwrap_or(&Value::Null),
            "rules.modalities",
            &["datatypes"],
        );

        let meta = raw.get("meta").unwrap_or(&Value::Null);
        self.keys(meta, "meta", META_KEYS);
        for (n, a) in children(meta.get("associations").unwrap_or(&Value::Null)) {
            let at = format!("meta.associations.{n}");
            self.keys(a, &at, ASSOCIATION_KEYS);
            if let Some(t) = a.get("target") {
                self.keys(t, &format!("{at}.target"), TARGET_KEYS);
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
    let rules = raw.get("rules").unwrap_or(&Value::Null);
    let mut sink = Vec::new();
    for kind in [
        "checks",
        "sidecars",
        "json",
        "dataset_metadata",
        "tabular_data",
    ] {
        if let Some(v) = rules.get(kind) {
            walk(v, &format!("rules.{kind}"), &mut |c, m, at| {
                visit(c, m, at, &mut sink)
            });
        }
    }
    for (n, e) in rules
        .get("errors")
        .and_then(Value::as_object)
        .unwrap_or(&Map::new())
    {
        let code = e.get("code").and_then(Value::as_str).unwrap_or("");
        let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
        visit(code, msg, format!("rules.errors.{n}.code"), &mut sink);
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
