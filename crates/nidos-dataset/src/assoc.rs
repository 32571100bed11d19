//! Associations (`meta.associations` of the schema): files that go with a data file
//! (events, bval/bvec, channels, coordinate systems…) and the payload each exposes in
//! the context's `associations`.
//!
//! An association with `reverse: <name>` looks the other way: it is the first file
//! whose `<name>` association resolves to this one (e.g. `events_data`: a data file an
//! events file applies to). Its payload is that file's `path`; it is absent when no
//! file uses this one.

use nidos_expr::{Context, Object, Value};

use crate::entry::{DatasetIssue, FileEntry};
use crate::inherit::{ambiguity, pick, walk_back, Target};
use crate::load::sidecar::merge_sidecars;
use crate::load::{gradient_table, Dataset, TableLoad};
pub use crate::schema_info::AssocDef;

/// What the associations of one file are computed from: the file (`ds`, `src`), its
/// context (for the selectors), and the contexts of other files (a reverse association
/// evaluates the forward one's selectors on the files that may use this one). The
/// context layer above provides them, so this module does not depend on it.
pub(crate) struct Subject<'s, C> {
    pub ds: &'s Dataset,
    pub src: usize,
    pub ctx: &'s dyn Context,
    pub context_at: &'s dyn Fn(usize) -> C,
}

/// Whether every selector of `def` holds for file `idx` (context `ctx`), in order; one
/// that reads only the file's kind is evaluated once per kind ([`crate::kinds`]).
fn selects(ds: &Dataset, def: &AssocDef, idx: usize, ctx: &dyn Context) -> bool {
    let kind = ds.kind_of(idx);
    def.selectors
        .iter()
        .zip(&def.kind_slots)
        .all(|((_, e), slot)| match e {
            Some(e) => {
                let eval = || nidos_expr::eval(e, ctx).truthy();
                match (kind, slot) {
                    (Some(kind), Some(slot)) => ds.assoc_kinds.get_or(kind, 0, *slot, eval),
                    _ => eval(),
                }
            }
            None => false,
        })
}

fn column(table: &TableLoad, name: &str) -> Option<Value> {
    let t = table.table.as_ref()?;
    // The table's `columns.NAME` value, shared with the rules that read it; with a
    // repeated header that is the last column of the name, and the association wants
    // the first.
    if t.headers.iter().filter(|h| *h == name).count() == 1 {
        return Some(table.column_value(name));
    }
    let col = t.column(name)?;
    Some(t.column_value(col))
}

/// Entity short keys a long name may go by (`space` → `space`).
fn short_keys(ds: &Dataset, free: &[String]) -> Vec<String> {
    let table = &ds.schema_info().names;
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
pub(crate) fn associations<C: Context>(s: &Subject<'_, C>) -> (Value, Vec<DatasetIssue>) {
    let (ds, src, ctx) = (s.ds, s.src, s.ctx);
    let mut out = Object::default();
    let mut issues = Vec::new();
    for def in &ds.schema_info().associations {
        if !selects(ds, def, src, ctx) {
            continue;
        }
        if let Some(forward) = &def.reverse {
            let forward = ds
                .schema_info()
                .associations
                .iter()
                .find(|d| &d.name == forward && d.reverse.is_none());
            if let Some(user) = forward.and_then(|f| first_user(s, f)) {
                let mut o = Object::default();
                o.insert("path".into(), Value::str(ds.files[user].path.as_str()));
                out.insert(def.name.clone(), Value::object(o));
            }
            continue;
        }
        let free = short_keys(ds, &def.free_entities);
        let first = match resolve(ds, def, src, &free) {
            Resolved::None => continue,
            Resolved::Level(first) if def.name == "coordsystems" => {
                out.insert(def.name.clone(), coordsystems(ds, &first));
                continue;
            }
            Resolved::Level(first) => first,
        };
        let chosen = match pick(ds, src, &first) {
            Some(i) => i,
            None if !def.free_entities.is_empty() => first[0],
            None => {
                issues.push(ambiguity(ds, src, &def.name, &first));
                continue;
            }
        };
        let (payload, mut more) = payload(ds, &def.name, chosen);
        issues.append(&mut more);
        out.insert(def.name.clone(), payload);
    }
    (Value::object(out), issues)
}

enum Resolved {
    None,
    /// The candidates of the deepest level that has any.
    Level(Vec<usize>),
}

/// The inheritance walk of one association from file `src`.
fn resolve(ds: &Dataset, def: &AssocDef, src: usize, free: &[String]) -> Resolved {
    let t = Target {
        suffix: def.suffix.as_deref(),
        extensions: &def.extensions,
        free_entities: free,
        inherit: def.inherit,
    };
    match walk_back(ds, src, &t).into_iter().next() {
        Some(first) => Resolved::Level(first),
        None => Resolved::None,
    }
}

/// The first file (in path order) whose `forward` association resolves to the file of
/// `ctx`. Candidates sit in the file's directory (or below it, for an inherited
/// association), carry its entities, are not themselves of the target kind, and pass
/// the forward association's selectors.
fn first_user<C: Context>(s: &Subject<'_, C>, forward: &AssocDef) -> Option<usize> {
    let (ds, src) = (s.ds, s.src);
    let target = ds.files.get(src)?;
    let suffix = target.name.suffix.as_deref()?;
    if forward.suffix.as_deref().is_some_and(|s| s != suffix)
        || !forward.extensions.contains(&target.name.extension)
    {
        return None;
    }
    let is_target_kind = |f: &FileEntry| {
        f.name.suffix.as_deref() == Some(suffix) && forward.extensions.contains(&f.name.extension)
    };
    let free = short_keys(ds, &forward.free_entities);
    let dir = target.dir();
    let start = ds.files.partition_point(|f| f.path.as_str() < dir);
    ds.files[start..]
        .iter()
        .enumerate()
        .map(|(i, f)| (start + i, f))
        .take_while(|(_, f)| f.path.starts_with(dir))
        .filter(|(i, f)| {
            *i != src
                && (forward.inherit || f.dir() == dir)
                && !is_target_kind(f)
                && target.name.entities_subset_of(&f.name, &free)
        })
        .find(|(i, _)| {
            let cand = (s.context_at)(*i);
            if !selects(ds, forward, *i, &cand) {
                return false;
            }
            match resolve(ds, forward, *i, &free) {
                Resolved::None => false,
                Resolved::Level(first) => match pick(ds, *i, &first) {
                    Some(chosen) => chosen == src,
                    None => !forward.free_entities.is_empty() && first.first() == Some(&src),
                },
            }
        })
        .map(|(i, _)| i)
}

fn coordsystems(ds: &Dataset, cands: &[usize]) -> Value {
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
    let mut o = Object::default();
    o.insert("paths".into(), Value::array(paths));
    o.insert("spaces".into(), Value::array(spaces));
    o.insert("ParentCoordinateSystems".into(), Value::array(parents));
    Value::object(o)
}

fn payload(ds: &Dataset, name: &str, idx: usize) -> (Value, Vec<DatasetIssue>) {
    let f = &ds.files[idx];
    let mut o = Object::default();
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
            o.insert("sidecar".into(), merge_sidecars(ds, idx).value);
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
            o.insert("sidecar".into(), merge_sidecars(ds, idx).value);
        }
        "bval" | "bvec" => match ds.small_bytes(idx) {
            Ok(Some(bytes)) => {
                let (fields, mut more) = gradient_table(name, &bytes, &f.path);
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
