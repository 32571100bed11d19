//! Applies the schema's selector-based rules (checks, sidecar/JSON field rules, tabular
//! rules) to one file's context.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use nidos_expr::{eval, Context, Value};
use nidos_schema::{CheckRule, ColumnReq, Definition, FieldRule, TabularRule};

use crate::engine::Engine;
use crate::issue::{FastMap, Issue, Severity, Sym};
use crate::jsonschema;

/// What the rules need of a file beyond the expression context.
pub(crate) struct FileFacts<'a> {
    pub path: &'a str,
    /// `path`, shared by the file's issues.
    pub location: &'a Sym,
    pub extension: &'a str,
    /// The sidecar that supplied each merged key.
    pub sidecar_origin: &'a dyn Fn(&str) -> Option<&'a str>,
    pub derivative_dataset: bool,
}

/// Dataset-wide memory of (sidecar, key) pairs whose value was already checked, so a
/// bad value in a shared sidecar is checked and reported once.
///
/// Which file reports it must not depend on which worker thread gets there first: the
/// issue is produced after the per-file pass, as the first file in path order that
/// reaches the pair would have produced it (its path in `affects`, its rule id).
#[derive(Default)]
pub(crate) struct Seen {
    /// origin → key → what was found, in shards chosen by the origin (workers rarely
    /// wait for each other).
    checked: [Mutex<SeenMap>; SEEN_SHARDS],
    /// Chooses an origin's shard.
    shards: foldhash::fast::RandomState,
}

type SeenMap = FastMap<String, FastMap<String, SeenValue>>;
const SEEN_SHARDS: usize = 16;

struct SeenValue {
    /// The smallest path of a file that reached the pair, with the rule it applied and
    /// whether that was a sidecar rule (which names the file in `affects`).
    path: Sym,
    rule: Sym,
    sidecar_rule: bool,
    /// The metadata name and the violation message (None: the value is valid).
    name: Sym,
    message: Option<String>,
}

impl Seen {
    fn get_or_check(
        &self,
        origin: &str,
        key: &str,
        visit: (&Sym, &Sym, bool, &Sym),
        check: impl FnOnce() -> Option<String>,
    ) {
        let (path, rule, sidecar_rule, name) = visit;
        let update = |map: &mut SeenMap| -> bool {
            match map.get_mut(origin).and_then(|m| m.get_mut(key)) {
                Some(v) => {
                    if path < &v.path {
                        v.path = path.clone();
                        v.rule = rule.clone();
                        v.sidecar_rule = sidecar_rule;
                    }
                    true
                }
                None => false,
            }
        };
        let shard = {
            use std::hash::BuildHasher;
            let h = self.shards.hash_one(origin);
            &self.checked[(h as usize) % SEEN_SHARDS]
        };
        let Ok(mut map) = shard.lock() else {
            return;
        };
        if update(&mut map) {
            return;
        }
        // Check without holding the lock; another worker may check the same pair
        // meanwhile, with the same result.
        drop(map);
        let message = check();
        let Ok(mut map) = shard.lock() else {
            return;
        };
        if update(&mut map) {
            return;
        }
        map.entry(origin.to_string()).or_default().insert(
            key.to_string(),
            SeenValue {
                path: path.clone(),
                rule: rule.clone(),
                sidecar_rule,
                name: name.clone(),
                message,
            },
        );
    }

    /// The JSON_SCHEMA_VALIDATION_ERROR issues of every bad value.
    pub(crate) fn into_issues(self) -> Vec<Issue> {
        let mut out = Vec::new();
        let shards = self.checked.into_iter();
        for (origin, keys) in shards.flat_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        {
            let location = Sym::from(origin);
            for (_, v) in keys {
                let Some(message) = v.message else { continue };
                let mut issue =
                    Issue::new("JSON_SCHEMA_VALIDATION_ERROR", Severity::Error, &location)
                        .sub(&v.name)
                        .rule(&v.rule)
                        .message(message);
                if v.sidecar_rule {
                    issue.extra_mut().affects.push(v.path.to_string());
                }
                out.push(issue);
            }
        }
        out
    }
}

pub(crate) fn apply_check(
    rule: &CheckRule,
    ctx: &dyn Context,
    facts: &FileFacts<'_>,
    out: &mut Vec<Issue>,
) {
    let all_hold = rule.checks.iter().all(|c| match &c.parsed {
        Some(e) => eval(e, ctx).truthy(),
        None => false,
    });
    if all_hold {
        return;
    }
    let (code, severity) = match &rule.issue {
        Some(spec) if !spec.code.is_empty() => {
            (spec.code.clone(), spec.level.unwrap_or(Severity::Error))
        }
        _ => ("CHECK_ERROR".to_string(), Severity::Error),
    };
    out.push(Issue::new(code, severity, facts.location).rule(&rule.id));
}

fn level_severity(level: nidos_schema::Level) -> Option<Severity> {
    match level {
        nidos_schema::Level::Required => Some(Severity::Error),
        nidos_schema::Level::Recommended => Some(Severity::Warning),
        _ => None,
    }
}

/// Sidecar extensions that carry no sidecar of their own.
const NO_SIDECAR_EXTENSIONS: &[&str] = &[".json", "", ".md", ".txt", ".rst", ".cff"];

/// What issues of a field rule name, resolved once per engine: a run reports hundreds
/// of thousands of missing keys, each sharing these texts instead of looking them up.
pub(crate) struct FieldRuleTexts<'s> {
    pub rule: Sym,
    /// Per field of the rule, in order.
    pub fields: Vec<FieldTexts<'s>>,
}

pub(crate) struct FieldTexts<'s> {
    /// The key as written in the JSON file.
    pub name: Sym,
    pub def: Option<&'s Definition>,
    /// The code the rule gives a missing key, when it names one.
    pub code: Option<Sym>,
}

impl<'s> FieldRuleTexts<'s> {
    pub(crate) fn new(schema: &'s nidos_schema::Schema, rule: &FieldRule) -> FieldRuleTexts<'s> {
        let fields = rule
            .fields
            .iter()
            .map(|(key, req)| {
                let def = schema.metadata_def(key);
                FieldTexts {
                    name: Sym::from(def.map_or(key.as_str(), |d| d.name.as_str())),
                    def,
                    code: req
                        .issue
                        .as_ref()
                        .filter(|spec| !spec.code.is_empty())
                        .map(|spec| Sym::from(spec.code.as_str())),
                }
            })
            .collect();
        FieldRuleTexts {
            rule: Sym::from(rule.id.as_str()),
            fields,
        }
    }
}

/// The codes of a missing key when its rule names none, by (sidecar rule, error).
pub(crate) struct MissingKeyCodes([Sym; 4]);

impl Default for MissingKeyCodes {
    fn default() -> MissingKeyCodes {
        MissingKeyCodes([
            Sym::from("JSON_KEY_RECOMMENDED"),
            Sym::from("JSON_KEY_REQUIRED"),
            Sym::from("SIDECAR_KEY_RECOMMENDED"),
            Sym::from("SIDECAR_KEY_REQUIRED"),
        ])
    }
}

impl MissingKeyCodes {
    fn get(&self, sidecar_rule: bool, error: bool) -> &Sym {
        &self.0[usize::from(sidecar_rule) * 2 + usize::from(error)]
    }
}

pub(crate) fn apply_fields(
    engine: &Engine<'_>,
    (rule, texts): (&FieldRule, &FieldRuleTexts<'_>),
    is_sidecar_rule: bool,
    ctx: &dyn Context,
    facts: &FileFacts<'_>,
    seen: &Seen,
    out: &mut Vec<Issue>,
) {
    if is_sidecar_rule && NO_SIDECAR_EXTENSIONS.contains(&facts.extension) {
        return;
    }
    let sidecar = ctx.lookup("sidecar");
    let object = if is_sidecar_rule {
        sidecar.clone()
    } else {
        ctx.lookup("json")
    };
    let report_missing = !facts.derivative_dataset || engine.selects_derivatives(&rule.id);
    for ((key, req), field) in rule.fields.iter().zip(&texts.fields) {
        let name = field.name.as_str();
        match object.as_object().and_then(|o| o.get(name)) {
            None => {
                if !report_missing {
                    continue;
                }
                let mut severity = level_severity(req.level);
                if let Some(addendum) = &req.level_addendum {
                    if let Some(s) = addendum_severity(addendum, &sidecar) {
                        severity = Some(s);
                    }
                }
                let Some(severity) = severity else { continue };
                let code = match &field.code {
                    Some(code) => code,
                    None => engine
                        .missing_key_codes
                        .get(is_sidecar_rule, severity == Severity::Error),
                };
                out.push(Issue {
                    code: code.clone(),
                    sub_code: field.name.clone(),
                    severity,
                    location: facts.location.clone(),
                    rule: Some(texts.rule.clone()),
                    extra: None,
                    fixable: false,
                    rank: 0,
                });
            }
            Some(value) => {
                let Some(def) = field.def else { continue };
                let origin = if is_sidecar_rule {
                    (facts.sidecar_origin)(name).unwrap_or_default()
                } else {
                    facts.path
                };
                seen.get_or_check(
                    origin,
                    key,
                    (facts.location, &texts.rule, is_sidecar_rule, &field.name),
                    || {
                        let json = value.to_json();
                        let violations = jsonschema::check(&json, &def.def, engine);
                        violations
                            .first()
                            .map(|v| format!("{name}{}: {}", v.at, v.message))
                    },
                );
            }
        }
    }
}

/// A level addendum such as "required if `MEGCoordinateSystem` is `Other`" upgrades the
/// level when the sidecar holds that string value.
fn addendum_severity(addendum: &str, sidecar: &Value) -> Option<Severity> {
    let (level, rest) = if let Some(i) = addendum.find("required if `") {
        (Severity::Error, &addendum[i + "required if `".len()..])
    } else if let Some(i) = addendum.find("recommended if `") {
        (Severity::Warning, &addendum[i + "recommended if `".len()..])
    } else {
        return None;
    };
    let (key, rest) = rest.split_once('`')?;
    let rest = rest.strip_prefix(" is `")?;
    let (value, _) = rest.split_once('`')?;
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !word(key) || !word(value) {
        return None;
    }
    (sidecar.get(key).as_str() == Some(value)).then_some(level)
}

// ---------------------------------------------------------------------------------------
// Tabular rules

/// A value constraint of one column.
struct Signature {
    /// Anchored pattern the value must match (None: any).
    regex: Option<std::sync::Arc<regress::Regex>>,
    levels: Option<Vec<String>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
}

#[derive(Clone)]
struct RawSignature {
    formats: Vec<String>,
    pattern: Option<String>,
    unit: Option<String>,
    levels: Option<Vec<String>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
}

impl RawSignature {
    fn from_schema_def(def: &serde_json::Value) -> RawSignature {
        let formats = if let Some(alts) = def.get("anyOf").and_then(|v| v.as_array()) {
            alts.iter().map(single_format).collect()
        } else {
            vec![single_format(def)]
        };
        RawSignature {
            formats,
            pattern: def
                .get("pattern")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            unit: def.get("unit").and_then(|v| v.as_str()).map(str::to_string),
            levels: def.get("enum").and_then(|v| v.as_array()).map(|a| {
                a.iter()
                    .map(|x| match x {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect()
            }),
            minimum: def.get("minimum").and_then(|v| v.as_f64()),
            maximum: def.get("maximum").and_then(|v| v.as_f64()),
        }
    }

    /// A column definition written in a sidecar (or a schema `definition`): Format,
    /// Units, Levels, Minimum, Maximum.
    fn from_column_definition(def: &Value) -> RawSignature {
        let format = match def.get("Format").as_str() {
            Some(f) => f.to_string(),
            None if !def.get("Units").is_null() => "number".to_string(),
            None => "string".to_string(),
        };
        RawSignature {
            formats: vec![format],
            pattern: None,
            unit: def.get("Units").as_str().map(str::to_string),
            levels: def
                .get("Levels")
                .as_object()
                .map(|o| o.keys().cloned().collect()),
            minimum: def.get("Minimum").as_f64(),
            maximum: def.get("Maximum").as_f64(),
        }
    }

    fn trivial(&self) -> bool {
        self.levels.is_none()
            && self.minimum.is_none()
            && self.maximum.is_none()
            && match &self.pattern {
                None => self.formats.first().map(String::as_str) == Some("string"),
                Some(p) => p == ".*",
            }
    }
}

fn single_format(def: &serde_json::Value) -> String {
    def.get("format")
        .or_else(|| def.get("type"))
        .and_then(|v| v.as_str())
        .unwrap_or("string")
        .to_string()
}

fn collapse(format: &str) -> &str {
    match format {
        "integer" | "number" => "number",
        "boolean" => "boolean",
        _ => "string",
    }
}

/// Refines the schema's signature with a sidecar definition; `Err` when the sidecar
/// contradicts the schema (TSV_COLUMN_TYPE_REDEFINED): the schema's own signature comes
/// back so the values are still checked against it.
#[allow(clippy::result_large_err)]
fn refine(schema: RawSignature, side: RawSignature) -> Result<RawSignature, RawSignature> {
    let side_format = side.formats.first().map(String::as_str).unwrap_or("string");
    if !schema
        .formats
        .iter()
        .any(|f| collapse(f) == collapse(side_format))
    {
        return Err(schema);
    }
    if let (Some(s), Some(d)) = (&side.levels, &schema.levels) {
        if !s.iter().all(|l| d.contains(l)) {
            return Err(schema);
        }
    }
    if let Some(unit) = &schema.unit {
        if side.unit.as_ref().unwrap_or(unit) != unit {
            return Err(schema);
        }
    }
    if let Some(min) = schema.minimum {
        if side.minimum.unwrap_or(min) < min {
            return Err(schema);
        }
    }
    if let Some(max) = schema.maximum {
        if side.maximum.unwrap_or(max) > max {
            return Err(schema);
        }
    }
    Ok(RawSignature {
        formats: side.formats,
        pattern: schema.pattern,
        unit: side.unit.or(schema.unit),
        levels: side.levels.or(schema.levels),
        minimum: side.minimum.or(schema.minimum),
        maximum: side.maximum.or(schema.maximum),
    })
}

impl Signature {
    fn compile(raw: &RawSignature, engine: &Engine<'_>) -> Option<Signature> {
        let schema = engine.schema;
        if raw.trivial() {
            return None;
        }
        let body = match &raw.pattern {
            Some(p) => p.clone(),
            None => {
                let parts: Vec<&str> = raw
                    .formats
                    .iter()
                    .map(|f| schema.format(f).map(|f| f.pattern.as_str()).unwrap_or(".*"))
                    .collect();
                parts.join("|")
            }
        };
        let regex = engine.anchored(&body);
        Some(Signature {
            regex,
            levels: raw.levels.clone(),
            minimum: raw.minimum,
            maximum: raw.maximum,
        })
    }

    fn accepts(&self, value: &str) -> bool {
        if value == "n/a" {
            return true;
        }
        if let Some(re) = &self.regex {
            if re.find(value).is_none() {
                return false;
            }
        }
        if let Some(levels) = &self.levels {
            if !levels.iter().any(|l| l == value) {
                return false;
            }
        }
        if self.minimum.is_some() || self.maximum.is_some() {
            let n = parse_float_prefix(value);
            // NaN (no number) fails both bounds.
            let below = |m: f64| n.partial_cmp(&m).is_none_or(|o| o.is_lt());
            let above = |m: f64| n.partial_cmp(&m).is_none_or(|o| o.is_gt());
            if self.minimum.is_some_and(below) || self.maximum.is_some_and(above) {
                return false;
            }
        }
        true
    }
}

/// JavaScript `parseFloat`: the longest prefix that is a decimal literal (sign, digits
/// with an optional fraction, optional exponent) or `Infinity`, after leading white
/// space; NaN when there is none. One pass over the text.
fn parse_float_prefix(s: &str) -> f64 {
    let t = s.trim_start();
    let b = t.as_bytes();
    let digits_from = |mut k: usize| {
        while b.get(k).is_some_and(u8::is_ascii_digit) {
            k += 1;
        }
        k
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    if t[i..].starts_with("Infinity") {
        return if b.first() == Some(&b'-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let int_end = digits_from(i);
    let mut digits = int_end - i;
    i = int_end;
    if b.get(i) == Some(&b'.') {
        let frac_end = digits_from(i + 1);
        if digits + (frac_end - i - 1) > 0 {
            digits += frac_end - i - 1;
            i = frac_end;
        }
    }
    if digits == 0 {
        return f64::NAN;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let exp_end = digits_from(i + 1 + sign);
        if exp_end > i + 1 + sign {
            i = exp_end;
        }
    }
    t[..i].parse::<f64>().unwrap_or(f64::NAN)
}

fn na_hint(value: &str) -> &'static str {
    let v = value.trim();
    if matches!(v, "NA" | "na" | "nan" | "NaN" | "n/a" | "N/A") {
        ", did you mean 'n/a'?"
    } else {
        ""
    }
}

/// The value constraint of a rule's column as the schema alone gives it, worked out on
/// first use and shared by every table without a sidecar definition of the column.
pub(crate) struct ColumnPlan {
    /// The schema gives a `definition` a sidecar replaces whole (else a sidecar's
    /// definition can only narrow the schema's).
    overridable: bool,
    raw: RawSignature,
    compiled: Option<Signature>,
}

impl ColumnPlan {
    fn new(engine: &Engine<'_>, req: &ColumnReq) -> ColumnPlan {
        let schema_def = match &req.definition {
            Some(d) => Some(d),
            None => engine.schema.column_def(&req.key).map(|d| &d.def),
        };
        let overridable = schema_def.and_then(|d| d.get("definition"));
        let raw = match (overridable, schema_def) {
            (Some(o), _) => RawSignature::from_column_definition(&Value::from(o)),
            (None, Some(d)) => RawSignature::from_schema_def(d),
            (None, None) => RawSignature::from_schema_def(&serde_json::Value::Null),
        };
        ColumnPlan {
            overridable: overridable.is_some(),
            compiled: Signature::compile(&raw, engine),
            raw,
        }
    }
}

pub(crate) struct TableView<'a> {
    pub headers: Vec<String>,
    pub columns: &'a nidos_expr::Object,
}

pub(crate) fn apply_tabular(
    engine: &Engine<'_>,
    (rule, plans): (&TabularRule, &[OnceLock<ColumnPlan>]),
    ctx: &dyn Context,
    facts: &FileFacts<'_>,
    table: &TableView<'_>,
    out: &mut Vec<Issue>,
) {
    if facts.extension != ".tsv" && facts.extension != ".tsv.gz" {
        return;
    }
    let sidecar = ctx.lookup("sidecar");
    let schema = engine.schema;
    // Rule columns, by the header name they take in a file.
    let names: Vec<(&str, &ColumnReq)> = rule
        .columns
        .values()
        .map(|c| (c.name.as_str(), c))
        .collect();
    let rule_names: HashSet<&str> = names.iter().map(|(n, _)| *n).collect();
    let initial: HashSet<&str> = rule.initial_columns.iter().map(String::as_str).collect();

    for (j, (name, req)) in names.iter().enumerate() {
        let Some(values) = table.columns.get(*name).and_then(|v| v.as_array()) else {
            if req.level == nidos_schema::Level::Required && !initial.contains(req.key.as_str()) {
                out.push(
                    Issue::new("TSV_COLUMN_MISSING", Severity::Error, facts.location)
                        .sub(*name)
                        .rule(&rule.id),
                );
            }
            continue;
        };
        let side_def = sidecar.get(name);
        let plan = plans
            .get(j)
            .map(|p| p.get_or_init(|| ColumnPlan::new(engine, req)));
        let Some(plan) = plan else { continue };
        // A sidecar entry of any shape defines the column (a bare string is a
        // description-only definition of a text column), as in the reference.
        if side_def.is_null() {
            check_values(name, plan.compiled.as_ref(), values, facts, &rule.id, out);
            continue;
        }
        let side = RawSignature::from_column_definition(&side_def);
        let raw = if plan.overridable {
            side
        } else {
            match refine(plan.raw.clone(), side) {
                Ok(r) => r,
                Err(base) => {
                    let origin = (facts.sidecar_origin)(name).unwrap_or(facts.path);
                    out.push(
                        Issue::new("TSV_COLUMN_TYPE_REDEFINED", Severity::Warning, origin)
                            .sub(*name)
                            .rule(&rule.id),
                    );
                    base
                }
            }
        };
        let sig = Signature::compile(&raw, engine);
        check_values(name, sig.as_ref(), values, facts, &rule.id, out);
    }

    for header in &table.headers {
        if rule_names.contains(header.as_str()) {
            continue;
        }
        let policy = rule.additional_columns.as_deref().unwrap_or("n/a");
        let side_def = sidecar.get(header);
        if policy == "not_allowed" {
            out.push(
                Issue::new(
                    "TSV_ADDITIONAL_COLUMNS_NOT_ALLOWED",
                    Severity::Error,
                    facts.location,
                )
                .sub(header.as_str())
                .rule(&rule.id),
            );
        } else if side_def.is_null() {
            let (code, severity) = if policy == "allowed_if_defined" {
                ("TSV_ADDITIONAL_COLUMNS_MUST_DEFINE", Severity::Error)
            } else {
                ("TSV_ADDITIONAL_COLUMNS_UNDEFINED", Severity::Warning)
            };
            out.push(
                Issue::new(code, severity, facts.location)
                    .sub(header.as_str())
                    .rule(&rule.id),
            );
        } else if let Some(values) = table
            .columns
            .get(header.as_str())
            .and_then(|v| v.as_array())
        {
            let sig = Signature::compile(&RawSignature::from_column_definition(&side_def), engine);
            check_values(header, sig.as_ref(), values, facts, &rule.id, out);
        }
    }

    if !rule.initial_columns.is_empty() {
        let mut wanted = Vec::new();
        for key in &rule.initial_columns {
            let name = schema
                .column_def(key)
                .map(|d| d.name.as_str())
                .unwrap_or(key.as_str());
            let required =
                rule.columns.get(key).map(|c| c.level) == Some(nidos_schema::Level::Required);
            let position = table.headers.iter().position(|h| h == name);
            if position.is_none() && !required {
                continue;
            }
            wanted.push((name, position));
        }
        for (i, (name, position)) in wanted.into_iter().enumerate() {
            match position {
                None => out.push(
                    Issue::new("TSV_COLUMN_MISSING", Severity::Error, facts.location)
                        .sub(name)
                        .rule(&rule.id)
                        .message(format!("required initial column {} not found", i + 1)),
                ),
                Some(p) if p != i => out.push(
                    Issue::new(
                        "TSV_COLUMN_ORDER_INCORRECT",
                        Severity::Error,
                        facts.location,
                    )
                    .sub(name)
                    .rule(&rule.id)
                    .message(format!(
                        "column {name} must be column {}, found at {}",
                        i + 1,
                        p + 1
                    )),
                ),
                Some(_) => {}
            }
        }
    }

    if !rule.index_columns.is_empty() {
        let cols: Vec<&[Value]> = rule
            .index_columns
            .iter()
            .map(|k| {
                schema
                    .column_def(k)
                    .map(|d| d.name.as_str())
                    .unwrap_or(k.as_str())
            })
            .filter_map(|n| table.columns.get(n).and_then(|v| v.as_array()))
            .collect();
        if let Some(first) = cols.first() {
            let mut seen = HashSet::new();
            for row in 0..first.len() {
                let key: String = cols
                    .iter()
                    .map(|c| c.get(row).and_then(|v| v.as_str()).unwrap_or(""))
                    .collect();
                if !seen.insert(key.clone()) {
                    out.push(
                        Issue::new(
                            "TSV_INDEX_VALUE_NOT_UNIQUE",
                            Severity::Error,
                            facts.location,
                        )
                        .rule(&rule.id)
                        .line(row + 2)
                        .message(format!("row {}: value {key:?} repeats", row + 2)),
                    );
                }
            }
        }
    }
}

fn check_values(
    name: &str,
    sig: Option<&Signature>,
    values: &[Value],
    facts: &FileFacts<'_>,
    rule_id: &str,
    out: &mut Vec<Issue>,
) {
    let Some(sig) = sig else {
        return;
    };
    let path = facts.location;
    let mut pseudo_age_reported = false;
    for (row, value) in values.iter().enumerate() {
        let text = value.as_str().unwrap_or("");
        if sig.accepts(text) {
            continue;
        }
        if name == "age" && text == "89+" {
            if !pseudo_age_reported {
                pseudo_age_reported = true;
                out.push(
                    Issue::new("TSV_PSEUDO_AGE_DEPRECATED", Severity::Warning, path)
                        .rule(rule_id)
                        .line(row + 2)
                        .message(
                            "age \"89+\" is deprecated: write 89 (ages above 89 are capped at 89)",
                        ),
                );
            }
            continue;
        }
        out.push(
            Issue::new("TSV_VALUE_INCORRECT_TYPE", Severity::Error, path)
                .sub(name)
                .rule(rule_id)
                .line(row + 2)
                .message(format!("'{text}'{}", na_hint(text))),
        );
        break;
    }
}

#[cfg(test)]
mod parse_float_tests {
    use super::parse_float_prefix;

    #[test]
    fn behaves_as_javascript_parse_float() {
        let cases: &[(&str, f64)] = &[
            ("12", 12.0),
            ("  -3.5kg", -3.5),
            ("+.5", 0.5),
            ("5.", 5.0),
            ("1e3x", 1000.0),
            ("1e", 1.0),
            ("1e+", 1.0),
            ("2E-2", 0.02),
            ("Infinity", f64::INFINITY),
            ("-Infinityx", f64::NEG_INFINITY),
            ("89+", 89.0),
            ("0x10", 0.0),
        ];
        for (text, want) in cases {
            assert_eq!(parse_float_prefix(text), *want, "{text:?}");
        }
        for text in ["", ".", "-", "abc", "inf", "nan", "e5", "+-1", "n/a"] {
            assert!(parse_float_prefix(text).is_nan(), "{text:?}");
        }
    }
}
