//! What the rules of the dataset's version expect of one file: the keys of a JSON file
//! (a sidecar: the keys its data files' rules ask for) and the columns of a table, each
//! with its strongest level. Rules apply when all their selectors hold in the file's
//! context, as in a validation.

use indexmap::IndexMap;
use nidos_dataset::{Dataset, FileContext};
use nidos_schema::{Expression, FieldRule, Level, Schema};

/// One key or column the rules expect.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    pub name: String,
    pub level: Level,
    /// The rule that asks for it at that level.
    pub rule: String,
}

pub fn level_word(level: Level) -> &'static str {
    match level {
        Level::Required => "required",
        Level::Recommended => "recommended",
        Level::Optional => "optional",
        Level::Deprecated => "deprecated",
        Level::Prohibited => "prohibited",
    }
}

fn applies(selectors: &[Expression], ctx: &FileContext<'_>) -> bool {
    selectors.iter().all(|s| match &s.parsed {
        Some(e) => nidos_expr::eval(e, ctx).truthy(),
        None => false,
    })
}

fn add(out: &mut IndexMap<String, Expected>, name: &str, level: Level, rule: &str) {
    match out.get_mut(name) {
        Some(e) if e.level <= level => {}
        Some(e) => {
            e.level = level;
            e.rule = rule.to_owned();
        }
        None => {
            out.insert(
                name.to_owned(),
                Expected {
                    name: name.to_owned(),
                    level,
                    rule: rule.to_owned(),
                },
            );
        }
    }
}

fn add_fields(out: &mut IndexMap<String, Expected>, rules: &[FieldRule], ctx: &FileContext<'_>) {
    for rule in rules.iter().filter(|r| applies(&r.selectors, ctx)) {
        for (key, req) in &rule.fields {
            let name = key.split("__").next().unwrap_or(key);
            add(out, name, req.level, &rule.id);
        }
    }
}

/// A data file that inherits the sidecar `rel` (dataset-relative), if any.
pub fn user_of_sidecar<'d>(ds: &'d Dataset, rel: &str) -> Option<FileContext<'d>> {
    let dir = rel.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let entry = ds.find(rel)?;
    let suffix = entry.name.suffix.as_deref();
    ds.files()
        .iter()
        .filter(|f| {
            !f.ignored
                && !f.opaque
                && f.path.starts_with(dir)
                && f.name.suffix.as_deref() == suffix
                && f.name.extension != ".json"
        })
        .map(|f| ds.context(f))
        .find(|ctx| ctx.sidecar_merge().files.iter().any(|s| s == rel))
}

/// The keys the rules expect in the JSON file `rel`, strongest level first.
pub fn keys(schema: &Schema, ds: &Dataset, rel: &str) -> Vec<Expected> {
    let mut out = IndexMap::new();
    if let Some(user) = user_of_sidecar(ds, rel) {
        add_fields(&mut out, &schema.sidecar_rules, &user);
    }
    if let Some(entry) = ds.find(rel) {
        add_fields(&mut out, &schema.json_rules, &ds.context(entry));
    }
    sorted(out)
}

/// The columns the rules expect in the table `rel`, strongest level first (the
/// initial columns in their order).
pub fn columns(schema: &Schema, ds: &Dataset, rel: &str) -> Vec<Expected> {
    let mut out = IndexMap::new();
    let Some(entry) = ds.find(rel) else {
        return Vec::new();
    };
    let ctx = ds.context(entry);
    for rule in schema
        .tabular_rules
        .iter()
        .filter(|r| applies(&r.selectors, &ctx))
    {
        for col in rule.columns.values() {
            add(&mut out, &col.name, col.level, &rule.id);
        }
    }
    sorted(out)
}

fn sorted(map: IndexMap<String, Expected>) -> Vec<Expected> {
    let mut v: Vec<Expected> = map.into_values().collect();
    // Stable: the rules' order within one level.
    v.sort_by_key(|e| e.level);
    v
}
