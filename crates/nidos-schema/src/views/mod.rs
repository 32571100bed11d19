//! Builds the typed views of [`crate::Schema`] from the normalised raw tree.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::error::{ErrorKind, SchemaError, Warning};
use crate::model::*;
pub(crate) use crate::shape::kind_of;

mod calls;
mod fields;
mod files;
mod fixes;
mod kinds;
mod prose;

pub use calls::called_functions;
pub use kinds::{rule_kind, rule_markers, Codes, Layout, RuleAt, RuleKind, RULE_KINDS};
pub(crate) use prose::structure_prose;

/// The rules under a rule-kind node, with their dotted paths. Groups nest to any depth
/// (upstream puts derivative rules one level deeper: `rules.sidecars.derivatives.
/// common_derivatives.X`): a mapping is a rule when it has one of the `markers` keys
/// or a value that is not a mapping; otherwise it is a group.
pub fn rule_nodes<'a>(v: &'a Value, prefix: &str, markers: &[&str]) -> Vec<(String, &'a Value)> {
    kinds::grouped(v, prefix, markers)
        .into_iter()
        .map(|r| (r.id, r.value))
        .collect()
}

/// Collects errors and warnings while the views are built.
pub(crate) struct Builder {
    pub errors: Vec<SchemaError>,
    pub warnings: Vec<Warning>,
    pub tolerate_expression_errors: bool,
    /// Our YAML format: shape and level problems are errors. For compiled upstream
    /// schemas they are warnings (old releases carry a few quirks).
    pub strict: bool,
}

/// Parse results by expression text, shared by every load of the process: the versions
/// of one tree, and a tree's brands, repeat most of their expressions (version pinning
/// loads several). Bounded: cleared when full.
fn parse_cached(src: &str) -> Parsed {
    const LIMIT: usize = 16_384;
    static CACHE: OnceLock<Mutex<HashMap<String, Parsed>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(src)
    {
        return p.clone();
    }
    let p = match nidos_expr::parse(src) {
        Ok(e) => {
            let unknown = e.unknown_functions();
            Parsed {
                expr: Some(Arc::new(e)),
                unknown,
                error: None,
            }
        }
        Err(e) => Parsed {
            expr: None,
            unknown: called_functions(src)
                .into_iter()
                .filter(|f| !nidos_expr::registry::function_names().any(|n| n == f))
                .collect(),
            error: Some(e.to_string()),
        },
    };
    let mut map = cache.lock().unwrap_or_else(PoisonError::into_inner);
    if map.len() >= LIMIT {
        map.clear();
    }
    map.insert(src.to_owned(), p.clone());
    p
}

/// Parses the expressions of a schema tree (the strings of its `selectors` and `checks`
/// lists) on the worker threads, into the cache [`Builder::expression`] reads: the
/// building that follows, on one thread, then finds them parsed.
pub(crate) fn parse_expressions_ahead(raw: &Value) {
    use rayon::prelude::*;
    fn collect<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("selectors" | "checks", Value::String(s)) => out.push(s),
                        ("selectors" | "checks", Value::Array(items)) => {
                            out.extend(items.iter().filter_map(Value::as_str));
                        }
                        _ => collect(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    collect(raw, &mut texts);
    texts.sort_unstable();
    texts.dedup();
    texts.par_iter().for_each(|t| {
        parse_cached(t);
    });
}

/// A cached parse of one expression text.
#[derive(Clone)]
pub(crate) struct Parsed {
    expr: Option<Arc<nidos_expr::Expr>>,
    unknown: Vec<String>,
    error: Option<String>,
}

static NULL: Value = Value::Null;

static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();

fn empty_map() -> &'static Map<String, Value> {
    EMPTY.get_or_init(Map::new)
}

/// The object at a dotted path, or an empty map when it is absent.
fn map_at<'a>(root: &'a Value, path: &[&str]) -> &'a Map<String, Value> {
    let mut v = root;
    for p in path {
        match v.get(p) {
            Some(x) => v = x,
            None => return empty_map(),
        }
    }
    v.as_object().unwrap_or_else(|| empty_map())
}

fn opt_str(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl Builder {
    pub(super) fn err(&mut self, kind: ErrorKind, key: impl Into<String>, msg: impl Into<String>) {
        let e = SchemaError::new(kind, key, msg);
        if self.strict || matches!(kind, ErrorKind::Regex | ErrorKind::Expression) {
            self.errors.push(e);
        } else {
            self.warnings.push(e);
        }
    }

    pub(super) fn warn(&mut self, kind: ErrorKind, key: impl Into<String>, msg: impl Into<String>) {
        self.warnings.push(SchemaError::new(kind, key, msg));
    }

    /// A list of strings (a lone string counts as a one-element list).
    pub(super) fn str_list(&mut self, v: Option<&Value>, id: &str) -> Vec<String> {
        match v {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, it) in items.iter().enumerate() {
                    match it {
                        Value::String(s) => out.push(s.clone()),
                        other => self.err(
                            ErrorKind::Structure,
                            format!("{id}[{i}]"),
                            format!("expected a string, found {}", kind_of(other)),
                        ),
                    }
                }
                out
            }
            Some(other) => {
                self.err(
                    ErrorKind::Structure,
                    id,
                    format!("expected a list of strings, found {}", kind_of(other)),
                );
                Vec::new()
            }
        }
    }

    pub(crate) fn expression(&mut self, src: &str, id: &str) -> Expression {
        // Upstream schemas repeat the same selector many times (1226 expressions, 472
        // distinct in 1.11.1): parse each distinct text once.
        let parsed = parse_cached(src);
        for f in &parsed.unknown {
            if self.strict {
                // Our YAML trees: a misspelt function would make every rule using the
                // expression fail silently, so the load stops. Upstream compiled
                // schemas of old releases call functions since retired (`evaluate`,
                // `len`, `intersect`): for them it stays a warning.
                let at = calls::call_offset(src.trim(), f)
                    .map(|i| format!(" at column {}", i + 1))
                    .unwrap_or_default();
                self.errors.push(SchemaError::new(
                    ErrorKind::Expression,
                    id,
                    format!("unknown function `{f}`{at} of `{}`", src.trim()),
                ));
                continue;
            }
            self.warn(
                ErrorKind::Expression,
                id,
                format!(
                    "unknown function `{f}` in `{}`: the expression will evaluate to null",
                    src.trim()
                ),
            );
        }
        if let Some(e) = &parsed.error {
            let msg = format!("cannot parse `{}`: {e}", src.trim());
            if self.tolerate_expression_errors {
                self.warn(ErrorKind::Expression, id, msg);
            } else {
                self.err(ErrorKind::Expression, id, msg);
            }
        }
        Expression {
            source: src.to_owned(),
            parsed: parsed.expr,
        }
    }

    pub(super) fn expressions(&mut self, v: Option<&Value>, id: &str) -> Vec<Expression> {
        let srcs = self.str_list(v, id);
        srcs.iter()
            .enumerate()
            .map(|(i, s)| self.expression(s, &format!("{id}[{i}]")))
            .collect()
    }

    pub(super) fn level(&mut self, s: &str, id: &str) -> Level {
        match Level::parse(s) {
            Some(l) => l,
            None => {
                self.err(ErrorKind::BadLevel, id, format!("unknown level `{s}`"));
                Level::Optional
            }
        }
    }

    pub(super) fn severity(&mut self, v: Option<&Value>, id: &str) -> Option<Severity> {
        let s = v?.as_str();
        match s.and_then(Severity::parse) {
            Some(sev) => Some(sev),
            None => {
                self.err(
                    ErrorKind::BadLevel,
                    id,
                    format!(
                        "unknown severity {}",
                        v.map(|x| x.to_string()).unwrap_or_default()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn issue(&mut self, v: &Value, id: &str) -> Option<IssueSpec> {
        let Some(m) = v.as_object() else {
            self.err(
                ErrorKind::Structure,
                id,
                "expected an issue object {code, message}",
            );
            return None;
        };
        let code = m
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if code.is_empty() {
            self.err(
                ErrorKind::Structure,
                format!("{id}.code"),
                "issue without a code",
            );
        }
        let message = m
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let level = self.severity(m.get("level"), &format!("{id}.level"));
        Some(IssueSpec {
            code,
            message,
            level,
        })
    }

    pub(crate) fn build(&mut self, raw: &Value) -> Views {
        // Entities in canonical order; entities missing from the order list go last.
        let ent_objs = map_at(raw, &["objects", "entities"]);
        let order_list = match raw.get("rules").and_then(|r| r.get("entities")) {
            Some(v) => self.str_list(Some(v), "rules.entities"),
            None => Vec::new(),
        };
        let mut entities = Vec::new();
        let mut names: Vec<&String> = Vec::new();
        for name in &order_list {
            if let Some((k, _)) = ent_objs.get_key_value(name) {
                names.push(k);
            } else {
                self.err(
                    ErrorKind::DanglingRef,
                    "rules.entities",
                    format!("`{name}` is not in objects.entities"),
                );
            }
        }
        for k in ent_objs.keys() {
            if !order_list.contains(k) {
                names.push(k);
            }
        }
        for (order, name) in names.into_iter().enumerate() {
            let v = &ent_objs[name.as_str()];
            let id = format!("objects.entities.{name}");
            let key = opt_str(v, "name").unwrap_or_else(|| {
                self.err(
                    ErrorKind::Structure,
                    format!("{id}.name"),
                    "entity without a short name",
                );
                name.clone()
            });
            let en = v
                .get("enum")
                .map(|e| self.str_list(Some(e), &format!("{id}.enum")));
            entities.push(Entity {
                name: name.clone(),
                key,
                display_name: opt_str(v, "display_name").unwrap_or_default(),
                description: opt_str(v, "description").unwrap_or_default(),
                format: opt_str(v, "format").unwrap_or_else(|| "label".into()),
                r#enum: en,
                order,
            });
        }

        let datatypes = self.terms(raw, "datatypes");
        let suffixes = self.terms(raw, "suffixes");
        let extensions = self.terms(raw, "extensions");

        let mut modalities = IndexMap::new();
        for (k, v) in map_at(raw, &["rules", "modalities"]) {
            let dts = self.str_list(
                v.get("datatypes"),
                &format!("rules.modalities.{k}.datatypes"),
            );
            modalities.insert(k.clone(), dts);
        }
        for k in map_at(raw, &["objects", "modalities"]).keys() {
            modalities.entry(k.clone()).or_default();
        }

        let mut formats = IndexMap::new();
        for (k, v) in map_at(raw, &["objects", "formats"]) {
            let id = format!("objects.formats.{k}.pattern");
            let Some(pattern) = opt_str(v, "pattern") else {
                self.err(ErrorKind::Structure, id, "format without a pattern");
                continue;
            };
            match nidos_expr::full_match::FullMatcher::new(&pattern) {
                Ok(matcher) => {
                    formats.insert(
                        k.clone(),
                        Format {
                            name: k.clone(),
                            pattern,
                            matcher,
                        },
                    );
                }
                Err(e) => self.err(
                    ErrorKind::Regex,
                    id,
                    format!("invalid ECMAScript pattern `{pattern}`: {e}"),
                ),
            }
        }
        // Patterns inside metadata and column definitions must compile too.
        for table in ["metadata", "columns"] {
            for (k, v) in map_at(raw, &["objects", table]) {
                self.check_patterns(v, &format!("objects.{table}.{k}"));
            }
        }

        let metadata = self.definitions(raw, "metadata");
        let columns = self.definitions(raw, "columns");
        let enums: IndexMap<String, Value> = map_at(raw, &["objects", "enums"])
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();

        let mut views = Views {
            entities,
            datatypes,
            suffixes,
            extensions,
            modalities,
            formats,
            metadata,
            columns,
            enums,
            file_rules: Vec::new(),
            sidecar_rules: Vec::new(),
            json_rules: Vec::new(),
            tabular_rules: Vec::new(),
            checks: Vec::new(),
            errors: Vec::new(),
            directories: Vec::new(),
            associations: Vec::new(),
            context: Value::Null,
            versions: Vec::new(),
        };
        for kind in RULE_KINDS {
            for at in kind.entries(raw) {
                (kind.build)(self, at, &mut views);
            }
        }

        let context = raw
            .get("meta")
            .and_then(|m| m.get("context"))
            .cloned()
            .unwrap_or(Value::Null);
        let versions = match raw.get("meta").and_then(|m| m.get("versions")) {
            Some(v) => self.str_list(Some(v), "meta.versions"),
            None => Vec::new(),
        };

        views.context = context;
        views.versions = versions;
        views
    }
}
