//! The HED project's JSON test suites: reading their case files, the codes a failing item may
//! report, and running one item of the validation suite (a string, a sidecar, an events table
//! or both, checked against the case's schema and definitions).

use std::path::Path;

use serde_json::Value;

use nidos_hed::check::{Checker, Role};
use nidos_hed::defs::Definitions;
use nidos_hed::events::{check_events, EventsCheck, EventsTable, SidecarHed};
use nidos_hed::issue::HedIssue;
use nidos_hed::versions::{HedSchemas, SchemaSource};

/// The cases of every JSON file in `dir`, the files in path order.
pub fn read_cases(dir: &Path) -> Result<Vec<Value>, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let list: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        cases.extend(list.as_array().into_iter().flatten().cloned());
    }
    Ok(cases)
}

/// For a miss: which list the item is in (`fails` or `passes`) and what it should have
/// given (one of the `accepted` codes, or nothing).
pub fn expected(expect_fail: bool, accepted: &[&str]) -> (&'static str, String) {
    if expect_fail {
        ("fails", accepted.join("|"))
    } else {
        ("passes", "nothing".into())
    }
}

/// The codes a failing item of `case` may report: its `error_code` and its `alt_codes`.
pub fn accepted_codes(case: &Value) -> Vec<&str> {
    let mut accepted = vec![case["error_code"].as_str().unwrap_or("?")];
    accepted.extend(
        case["alt_codes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str),
    );
    accepted
}

/// The kind of a test item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    String,
    Sidecar,
    Events,
    Combo,
}

impl ItemKind {
    pub fn from_key(key: &str) -> Option<Self> {
        match key {
            "string_tests" => Some(ItemKind::String),
            "sidecar_tests" => Some(ItemKind::Sidecar),
            "event_tests" => Some(ItemKind::Events),
            "combo_tests" => Some(ItemKind::Combo),
            _ => None,
        }
    }
}

/// JSON table cells as text (`4.5`, `"face"`, `0`).
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "n/a".into(),
        other => other.to_string(),
    }
}

fn table(rows: &Value) -> (Vec<String>, Vec<Vec<String>>) {
    let mut it = rows.as_array().into_iter().flatten();
    let header = it
        .next()
        .and_then(Value::as_array)
        .map(|h| h.iter().map(cell).collect())
        .unwrap_or_default();
    let body = it
        .map(|r| {
            r.as_array()
                .map(|r| r.iter().map(cell).collect())
                .unwrap_or_default()
        })
        .collect();
    (header, body)
}

/// Checks one item; returns every issue found.
pub fn run_item(
    source: &SchemaSource,
    schema_spec: &Value,
    definitions: &[String],
    kind: ItemKind,
    item: &Value,
) -> Vec<HedIssue> {
    let schemas: HedSchemas = match source.load_versions(schema_spec) {
        Ok(s) => s,
        Err(issue) => return vec![issue],
    };
    let empty = Definitions::default();
    let gatherer = Checker::new(&schemas, &empty);
    let (mut defs, mut issues) = Definitions::from_strings(&gatherer, definitions);

    let sidecar_value = match kind {
        ItemKind::Sidecar => Some(item),
        ItemKind::Combo => item.get("sidecar"),
        _ => None,
    };
    let mut sidecar_issues = Vec::new();
    let sidecar = sidecar_value
        .map(|v| SidecarHed::read(v, &mut sidecar_issues))
        .unwrap_or_default();
    for (_, s) in sidecar.strings() {
        defs.gather(&gatherer, s, &mut issues);
    }
    let checker = Checker::new(&schemas, &defs);
    issues.extend(sidecar_issues.into_iter().map(|i| i.issue));
    match kind {
        ItemKind::String => {
            let s = item.as_str().unwrap_or_default();
            issues.extend(checker.check(s, Role::Event, false).issues);
        }
        ItemKind::Sidecar => {
            issues.extend(sidecar.check(&checker).into_iter().map(|i| i.issue));
        }
        ItemKind::Events | ItemKind::Combo => {
            let sidecar_errors: Vec<HedIssue> = sidecar
                .check(&checker)
                .into_iter()
                .map(|i| i.issue)
                .collect();
            let failed = sidecar_errors.iter().any(|i| !i.warning);
            issues.extend(sidecar_errors);
            if !failed {
                let rows = if kind == ItemKind::Events {
                    item
                } else {
                    item.get("events").unwrap_or(&Value::Null)
                };
                let (header, body) = table(rows);
                let cell =
                    |r: usize, c: usize| body.get(r).and_then(|row| row.get(c)).map(String::as_str);
                let table = EventsTable {
                    header: &header,
                    n_rows: body.len(),
                    cell: &cell,
                    codes: &[],
                };
                let check = EventsCheck {
                    checker: &checker,
                    sidecar: &sidecar,
                    shared: None,
                };
                check_events(&check, &table, &mut |_, issue| issues.push(issue.clone()));
            }
        }
    }
    issues
}
