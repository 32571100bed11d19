//! Checks that fire because their input is missing (issue 37 item 4).
//!
//! A check of the bundled rules reads inputs from a file's context (`columns.onset`,
//! `sidecar.RepetitionTime`, `dataset.subjects.sub_dirs`…). Under the standard's null
//! semantics a comparison with null is false, so a check such as `min(columns.onset) >=
//! -60` fails, and raises its issue, on every table that has no `onset` column. This test
//! evaluates every check of every supported version with its inputs absent (each context
//! name null except `schema`, the rules themselves) and lists the checks that would then
//! fire: every input of a check is absent at once, a selector that reads an input and
//! is false without it guards the check (it does not run), and an input fires the check
//! when a check expression reading it is false.
//!
//! `tests/absent_inputs.yaml` holds one entry per check that fires so, with the decision
//! taken: `guarded` (a selector now keeps the check from running without its input: the
//! check must no longer fire) or `keep` (absence is what the check is about, said in
//! `why`: the check must still fire, with exactly the listed inputs). A check that fires
//! and is not listed fails its trial: guard it in `schema/rules/checks/`, or list it as
//! kept with a reason. `NIDOS_ABSENT_LIST=1` prints the current listing as YAML.
//!
//! The upstream compiled schema is left alone: it keeps the standard's null semantics.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use libtest_mimic::{Arguments, Failed, Trial};
use nidos_expr::{Context, Expr, Value};
use nidos_schema::{CheckRule, Schema};
use serde::Deserialize;

const LISTING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/absent_inputs.yaml");

/// One entry of the listing.
#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
struct Entry {
    /// The check's id (`rules.checks.<group>.<name>`).
    check: String,
    /// The inputs whose absence fires it (before the guard, for `guarded`).
    inputs: Vec<String>,
    /// `guarded` or `keep`.
    decision: String,
    /// Why: the guard added, or why absence is what the check is about.
    why: String,
}

/// Every context name null, except `schema` (the rules, always there).
struct Absent {
    schema: Value,
}

impl Context for Absent {
    fn lookup(&self, name: &str) -> Cow<'_, Value> {
        match name {
            "schema" => Cow::Borrowed(&self.schema),
            _ => Cow::Owned(Value::Null),
        }
    }
}

/// The context paths an expression reads: each chain of members from a root name
/// (`columns.onset`, `dataset.subjects.sub_dirs`; an index ends the chain), `schema`
/// and `path` (always there) left out.
fn inputs(e: &Expr, out: &mut BTreeSet<String>) {
    fn chain(e: &Expr) -> Option<String> {
        match e {
            Expr::Name(n) => Some(n.to_string()),
            Expr::Member(inner, key) => chain(inner).map(|c| format!("{c}.{key}")),
            _ => None,
        }
    }
    match e {
        Expr::Name(_) | Expr::Member(..) => match chain(e) {
            Some(c) => {
                let root = c.split('.').next().unwrap_or("");
                if root != "schema" && root != "path" {
                    out.insert(c);
                }
            }
            None => {
                if let Expr::Member(inner, _) = e {
                    inputs(inner, out);
                }
            }
        },
        Expr::Index(a, b) => {
            inputs(a, out);
            inputs(b, out);
        }
        Expr::Array(items) => items.iter().for_each(|i| inputs(i, out)),
        Expr::Call(c) => c.args.iter().for_each(|a| inputs(a, out)),
        Expr::Literal(_) => {}
    }
}

/// Context names whose members are all there when the name is (a header read whole).
const WHOLE_HEADERS: &[&str] = &["nifti_header", "gzip", "tiff", "ome"];

fn reads(e: &Expr, input: &str) -> bool {
    let mut found = BTreeSet::new();
    inputs(e, &mut found);
    found.contains(input)
}

/// The inputs whose absence fires `rule` (empty: none does).
fn firing(rule: &CheckRule, ctx: &Absent) -> BTreeSet<String> {
    let parsed = |es: &[nidos_schema::Expression]| -> Vec<Expr> {
        es.iter()
            .filter_map(|e| e.parsed.as_deref().cloned())
            .collect()
    };
    let selectors = parsed(&rule.selectors);
    let checks = parsed(&rule.checks);
    let mut all = BTreeSet::new();
    for c in &checks {
        inputs(c, &mut all);
    }
    all.into_iter()
        .filter(|input| {
            // A header read whole (the NIfTI, gzip, TIFF and OME headers) has all its
            // members when it is there: a selector on the header guards each of them.
            let root = input.split('.').next().unwrap_or("");
            let whole = WHOLE_HEADERS.contains(&root);
            let guarded = selectors.iter().any(|s| {
                (reads(s, input) || (whole && reads(s, root))) && !nidos_expr::eval(s, ctx).truthy()
            });
            !guarded
                && checks
                    .iter()
                    .any(|c| reads(c, input) && !nidos_expr::eval(c, ctx).truthy())
        })
        .collect()
}

/// Every check of every supported version of the bundled rules, by id; a check whose
/// expressions changed between versions is taken at each version it has (the id then
/// carries `@version`).
fn all_checks() -> Result<Vec<(String, CheckRule, Value)>, String> {
    let newest = Schema::bundled().map_err(|e| e.to_string())?;
    let mut seen: BTreeMap<String, Vec<(Vec<String>, String)>> = BTreeMap::new();
    let mut out = Vec::new();
    let mut versions = newest.supported_versions.clone();
    versions.sort_by(|a, b| nidos_schema::compare_versions(b, a));
    for v in versions {
        let schema = Schema::bundled_for(None, Some(&v)).map_err(|e| e.to_string())?;
        let schema_value = Value::from(schema.raw.value());
        for rule in &schema.checks {
            let text: Vec<String> = rule
                .selectors
                .iter()
                .chain(&rule.checks)
                .map(|e| e.source.clone())
                .collect();
            let known = seen.entry(rule.id.clone()).or_default();
            if known.iter().any(|(t, _)| *t == text) {
                continue;
            }
            let id = if known.is_empty() {
                rule.id.clone()
            } else {
                format!("{}@{v}", rule.id)
            };
            known.push((text, v.clone()));
            out.push((id, rule.clone(), schema_value.clone()));
        }
    }
    Ok(out)
}

fn check_one(fired: &BTreeSet<String>, entry: Option<&Entry>) -> Result<(), Failed> {
    match entry {
        None if fired.is_empty() => Ok(()),
        None => Err(format!(
            "fires when {} is absent: guard it in schema/rules/checks (a selector such as \
             `{} != null`), or list it in tests/absent_inputs.yaml as kept with a reason",
            fired.iter().cloned().collect::<Vec<_>>().join(", "),
            fired.iter().next().map(String::as_str).unwrap_or("")
        )
        .into()),
        Some(e) if e.decision == "guarded" => {
            if fired.is_empty() {
                Ok(())
            } else {
                Err(format!("listed as guarded, but still fires without {fired:?}").into())
            }
        }
        Some(e) if e.decision == "keep" => {
            let listed: BTreeSet<String> = e.inputs.iter().cloned().collect();
            if e.why.trim().is_empty() {
                Err("kept without a reason (`why`)".into())
            } else if listed == *fired {
                Ok(())
            } else {
                Err(format!("listed as firing without {listed:?}, fires without {fired:?}").into())
            }
        }
        Some(e) => Err(format!("unknown decision {:?} (guarded or keep)", e.decision).into()),
    }
}

fn main() {
    let args = Arguments::from_args();
    let text = std::fs::read_to_string(Path::new(LISTING)).expect("listing file");
    let listing: Vec<Entry> = serde_saphyr::from_str(&text).expect("listing parses");
    let checks = all_checks().expect("the bundled rules load");
    if std::env::var_os("NIDOS_ABSENT_LIST").is_some() {
        for (id, rule, schema) in &checks {
            let fired = firing(
                rule,
                &Absent {
                    schema: schema.clone(),
                },
            );
            if !fired.is_empty() {
                println!("- check: {id}");
                println!(
                    "  inputs: [{}]",
                    fired.into_iter().collect::<Vec<_>>().join(", ")
                );
            }
        }
    }
    let by_id: BTreeMap<String, Entry> = listing
        .iter()
        .map(|e| (e.check.clone(), e.clone()))
        .collect();
    let known: BTreeSet<String> = checks.iter().map(|(id, _, _)| id.clone()).collect();
    let mut trials: Vec<Trial> = checks
        .into_iter()
        .map(|(id, rule, schema)| {
            let entry = by_id.get(&id).cloned();
            Trial::test(id, move || {
                let fired = firing(&rule, &Absent { schema });
                check_one(&fired, entry.as_ref())
            })
        })
        .collect();
    trials.push(Trial::test("every listed check exists", move || {
        let stale: Vec<&str> = listing
            .iter()
            .map(|e| e.check.as_str())
            .filter(|c| !known.contains(*c))
            .collect();
        if stale.is_empty() {
            Ok(())
        } else {
            Err(format!("listed checks that the rules no longer have: {stale:?}").into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
