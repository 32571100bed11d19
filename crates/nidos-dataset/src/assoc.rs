//! Associations (`meta.associations` of the schema): files that go with a data file
//! (events, bval/bvec, channels, coordinate systems…) and the payload each exposes in
//! the context's `associations`.

use std::sync::Arc;

use nidos_expr::{Context, Expr, Object, Value};

use crate::context::FileContext;
use crate::dataset::DatasetIssue;
use crate::inherit::{ambiguity, pick, walk_back, Target};

/// One association of the schema, selectors parsed once.
#[derive(Clone, Debug)]
pub struct AssocDef {
    pub name: String,
    /// Selector sources and their parsed forms (`None`: did not parse; the association
    /// then never applies).
    pub selectors: Vec<(String, Option<Arc<Expr>>)>,
    pub suffix: Option<String>,
    pub extensions: Vec<String>,
    pub free_entities: Vec<String>,
    pub inherit: bool,
}

fn strings(v: Option<&serde_json::Value>) -> Vec<String> {
    match v {
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// Reads `meta.associations`.
pub fn parse_definitions(raw: &serde_json::Value) -> Vec<AssocDef> {
    let Some(defs) = raw
        .pointer("/meta/associations")
        .and_then(|v| v.as_object())
    else {
        return Vec::new();
    };
    defs.iter()
        .map(|(name, def)| {
            let selectors = strings(def.get("selectors"))
                .into_iter()
                .map(|s| {
                    let parsed = nidos_expr::parse(&s).ok().map(Arc::new);
                    (s, parsed)
                })
                .collect();
            let target = def.get("target");
            AssocDef {
                name: name.clone(),
                selectors,
                suffix: target
                    .and_then(|t| t.get("suffix"))
                    .and_then(|v| v.as_str())
                    .map(str::to_string),
                extensions: strings(target.and_then(|t| t.get("extension"))),
                free_entities: strings(target.and_then(|t| t.get("entities"))),
                inherit: def.get("inherit").and_then(|v| v.as_bool()).unwrap_or(true),
            }
        })
        .collect()
}

fn selects(def: &AssocDef, ctx: &dyn Context) -> bool {
    def.selectors.iter().all(|(_, e)| match e {
        Some(e) => nidos_expr::eval(e, ctx).truthy(),
        None => false,
    })
}

fn column(table: &crate::load::TableLoad, name: &str) -> Option<Value> {
    let t = table.table.as_ref()?;
    let cells = t.column(name)?;
    Some(Value::array(
        cells.iter().map(|c| Value::str(c.as_str())).collect(),
    ))
}

/// Entity short keys a long name may go by (`space` → `space`).
fn short_keys(ctx: &FileContext<'_>, free: &[String]) -> Vec<String> {
    let table = &ctx.dataset().schema_info().names;
    free.iter()
        .map(|long| {
            table
                .key_to_name
                .iter()
                .find(|(_, l)| *l == long)
                .map(|(k, _)| k.clone())
                .unwrap_or_else(|| long.clone())
        })
        .collect()
}

/// Computes the `associations` object of a file and the issues found.
pub(crate) fn associations(ctx: &FileContext<'_>) -> (Value, Vec<DatasetIssue>) {
    let ds = ctx.dataset();
    let src = ctx.index();
    let mut out = Object::new();
    let mut issues = Vec::new();
    for def in &ds.schema_info().associations {
        if !selects(def, ctx) {
            continue;
        }
        let free = short_keys(ctx, &def.free_entities);
        let t = Target {
            suffix: def.suffix.as_deref(),
            extensions: &def.extensions,
            free_entities: &free,
            inherit: def.inherit,
        };
        let levels = walk_back(ds, src, &t);
        let Some(first) = levels.first() else {
            continue;
        };
        if def.name == "coordsystems" {
            out.insert(def.name.clone(), coordsystems(ctx, first));
            continue;
        }
        let chosen = match pick(ds, src, first) {
            Some(i) => i,
            None if !def.free_entities.is_empty() => first[0],
            None => {
                issues.push(ambiguity(ds, src, &def.name, first));
                continue;
            }
        };
        let (payload, mut more) = payload(ctx, &def.name, chosen);
        issues.append(&mut more);
        out.insert(def.name.clone(), payload);
    }
    (Value::object(out), issues)
}

fn coordsystems(ctx: &FileContext<'_>, cands: &[usize]) -> Value {
    let ds = ctx.dataset();
    let mut paths = Vec::new();
    let mut spaces = Vec::new();
    let mut parents = Vec::new();
    for &i in cands {
        let f = &ds.files[i];
        paths.push(Value::str(f.path.as_str()));
        spaces.push(f.name.get("space").map(Value::str).unwrap_or(Value::Null));
        let json = ds.json_at(i);
        // Only the systems that name a parent contribute one.
        let parent = json.value.get("ParentCoordinateSystem");
        if !parent.is_null() {
            parents.push(parent);
        }
    }
    let mut o = Object::new();
    o.insert("paths".into(), Value::array(paths));
    o.insert("spaces".into(), Value::array(spaces));
    o.insert("ParentCoordinateSystems".into(), Value::array(parents));
    Value::object(o)
}

fn payload(ctx: &FileContext<'_>, name: &str, idx: usize) -> (Value, Vec<DatasetIssue>) {
    let ds = ctx.dataset();
    let f = &ds.files[idx];
    let mut o = Object::new();
    let mut issues = Vec::new();
    o.insert("path".into(), Value::str(f.path.as_str()));
    let put_columns = |o: &mut Object, names: &[(&str, &str)]| {
        let table = ds.table_at(idx);
        for (key, col) in names {
            if let Some(v) = column(&table, col) {
                o.insert((*key).into(), v);
            }
        }
        table
    };
    match name {
        "events" => {
            put_columns(&mut o, &[("onset", "onset")]);
            o.insert(
                "sidecar".into(),
                crate::inherit::merge_sidecars(ds, idx).value,
            );
        }
        "aslcontext" => {
            let t = put_columns(&mut o, &[("volume_type", "volume_type")]);
            let n = t.table.as_ref().map(|t| t.n_rows as f64);
            o.insert("n_rows".into(), n.map(Value::Number).unwrap_or(Value::Null));
        }
        "channels" => {
            put_columns(
                &mut o,
                &[
                    ("type", "type"),
                    ("short_channel", "short_channel"),
                    ("sampling_frequency", "sampling_frequency"),
                ],
            );
        }
        "physio" => {
            o.insert(
                "sidecar".into(),
                crate::inherit::merge_sidecars(ds, idx).value,
            );
        }
        "bval" | "bvec" => match ds.small_bytes(idx) {
            Ok(Some(bytes)) => {
                let (fields, mut more) = crate::load::gradient_table(name, &bytes, &f.path);
                for (k, v) in fields {
                    o.insert(k, v);
                }
                issues.append(&mut more);
            }
            Ok(None) => {}
            Err(e) => issues.push(*e),
        },
        _ => {}
    }
    (Value::object(o), issues)
}
