//! Tests of [`check_events`](super::check_events), the table check as a whole: the ways
//! of reading a table (alone or with the dataset's shared pieces, by parts or assembled in
//! full, with or without the reader's codes) give the same issues.

use super::*;
use crate::defs::Definitions;
use crate::versions::{HedSchemas, SchemaSource};

/// The 8.3.0 schemas and no definitions, for a checker (the crate's tests share it).
pub(crate) fn schemas_and_defs() -> (HedSchemas, Definitions) {
    let schemas = SchemaSource::new(Vec::new())
        .load_versions(&serde_json::json!("8.3.0"))
        .unwrap();
    (schemas, Definitions::default())
}

/// The HED entries of a sidecar.
fn sidecar_of(json: serde_json::Value) -> SidecarHed {
    let mut shape = Vec::new();
    SidecarHed::read(&json, &mut shape)
}

/// A table's header and rows as owned texts.
fn table<const N: usize>(header: [&str; N], rows: &[[&str; N]]) -> (Vec<String>, Vec<Vec<String>>) {
    let rows = rows.iter().map(|r| r.map(String::from).to_vec()).collect();
    (header.map(String::from).to_vec(), rows)
}

/// Every issue of a table, with its line, checked with the reader's `codes` of its columns
/// and the dataset's `shared` pieces.
fn issues_of(
    check: EventsCheck<'_>,
    header: &[String],
    rows: &[Vec<String>],
    codes: &[Option<Vec<u32>>],
) -> Vec<(Option<usize>, HedIssue)> {
    let cell = |r: usize, c: usize| rows.get(r).and_then(|row| row.get(c)).map(String::as_str);
    let table = EventsTable {
        header,
        n_rows: rows.len(),
        cell: &cell,
        codes,
    };
    let mut got = Vec::new();
    check_events(&check, &table, &mut |line, issue| {
        got.push((line, issue.clone()))
    });
    got
}

/// A table checked through the dataset's shared maps (twice: the second time every
/// (template, cell) is known) gives the issues it gives checked on its own: value
/// columns with valid, invalid, blank, braced and missing cells, a level column.
#[test]
fn shared_value_parts_give_the_same_issues() {
    let (schemas, defs) = schemas_and_defs();
    let checker = Checker::new(&schemas, &defs);
    let sidecar = sidecar_of(serde_json::json!({
        "trial": {"HED": "Experimental-trial/#"},
        "rt": {"HED": "(Response-time/# s, Bad-tag-xyz)"},
        "blank": {"HED": "#"},
        "kind": {"HED": {"go": "Sensory-event", "stop": "Agent-action"}}
    }));
    let (header, rows) = table(
        ["onset", "trial", "rt", "blank", "kind", "HED"],
        &[
            ["1.0", "1", "0.5", "n/a", "go", "n/a"],
            ["2.0", "2", "0.5", " ", "stop", "Red"],
            ["3.0", "x{y}", "abc", "Blue", "other", "n/a"],
            ["4.0", "1", "n/a", "", "go", "Def/Nope"],
            ["5.0", "3", "0.7", "Green", "go", "n/a"],
        ],
    );
    let mut check = EventsCheck {
        checker: &checker,
        sidecar: &sidecar,
        shared: None,
    };
    let alone = format!("{:?}", issues_of(check, &header, &rows, &[]));
    let shared = SharedPieces::default();
    check.shared = Some(&shared);
    for round in 0..2 {
        let got = issues_of(check, &header, &rows, &[]);
        assert_eq!(format!("{got:?}"), alone, "round {round}");
    }
    assert!(alone.contains("SIDECAR_KEY_MISSING"), "{alone}");
}

/// Levels without annotation give one warning per column, at no line, naming each value
/// once in the order of the rows that first have it: whether the rows are read by their
/// parts or assembled in full (the sidecar splices a column), and with more values than
/// a message names.
#[test]
fn missing_levels_are_one_warning_per_column() {
    let (schemas, defs) = schemas_and_defs();
    let checker = Checker::new(&schemas, &defs);
    let (header, rows) = table(
        ["onset", "kind", "hand"],
        &[
            ["1.0", "zeta", "right"],
            ["2.0", "go", "left"],
            ["3.0", "alpha", "up"],
            ["4.0", "zeta", "n/a"],
            ["5.0", "alpha", "right"],
        ],
    );
    let plain = serde_json::json!({
        "kind": {"HED": {"go": "Sensory-event"}},
        "hand": {"HED": {"left": "Label/x"}}
    });
    let spliced = serde_json::json!({
        "kind": {"HED": {"go": "Sensory-event, ({hand})"}},
        "hand": {"HED": {"left": "Label/x"}}
    });
    let alone = |sidecar: &SidecarHed, rows: &[Vec<String>]| {
        let check = EventsCheck {
            checker: &checker,
            sidecar,
            shared: None,
        };
        issues_of(check, &header, rows, &[])
    };
    let plain_got = alone(&sidecar_of(plain), &rows);
    let missing: Vec<String> = plain_got
        .iter()
        .filter(|(_, i)| i.code == "SIDECAR_KEY_MISSING")
        .map(|(line, i)| {
            assert_eq!(*line, None);
            i.message.clone()
        })
        .collect();
    assert_eq!(
        missing,
        [
            "values \"zeta\", \"alpha\" of column \"kind\" have no HED annotation in the sidecar",
            "values \"right\", \"up\" of column \"hand\" have no HED annotation in the sidecar",
        ]
    );
    // Spliced: "hand" is read only where "go" splices it (row 2, "left"), so only the
    // levels of "kind" are missing.
    let spliced_got = alone(&sidecar_of(spliced), &rows);
    let missing: Vec<&str> = spliced_got
        .iter()
        .filter(|(_, i)| i.code == "SIDECAR_KEY_MISSING")
        .map(|(_, i)| i.message.as_str())
        .collect();
    assert_eq!(
        missing,
        ["values \"zeta\", \"alpha\" of column \"kind\" have no HED annotation in the sidecar"]
    );
    let many: Vec<Vec<String>> = (0..25)
        .map(|i| vec![format!("{i}.0"), format!("k{i}"), "left".to_string()])
        .collect();
    let one = sidecar_of(serde_json::json!({"kind": {"HED": {"go": "Sensory-event"}}}));
    let got = alone(&one, &many);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0]
            .1
            .message
            .contains("\"k19\" and 5 more of column \"kind\""),
        "{got:?}"
    );
}

/// A table whose columns come with the reader's codes (each cell's rank in order of
/// first appearance) gives the issues it gives without them, also when some columns
/// have none (the reader found most of their cells distinct: a part per change of
/// cell); codes out of that order are not trusted.
#[test]
fn coded_columns_give_the_same_issues() {
    let (schemas, defs) = schemas_and_defs();
    let checker = Checker::new(&schemas, &defs);
    let sidecar = sidecar_of(serde_json::json!({
        "trial": {"HED": "Experimental-trial/#"},
        "kind": {"HED": {"go": "Sensory-event", "stop": "Agent-action, Sensory-event"}},
        "hand": {"HED": {"left": "Label/x", "right": "Bad-tag-xyz"}}
    }));
    let (header, rows) = table(
        ["onset", "trial", "kind", "hand", "HED"],
        &[
            ["1.0", "1", "go", "left", "n/a"],
            ["1.0", "2", "stop", "left", "Sensory-event"],
            ["2.0", "1", "go", "right", "n/a"],
            ["3.0", "3", "other", "left", "Label/x"],
            ["3.0", "3", "go", "n/a", "n/a"],
        ],
    );
    let check = EventsCheck {
        checker: &checker,
        sidecar: &sidecar,
        shared: None,
    };
    let run = |codes: &[Option<Vec<u32>>]| -> Vec<String> {
        issues_of(check, &header, &rows, codes)
            .iter()
            .map(|(line, issue)| format!("{line:?} {issue:?}"))
            .collect()
    };
    let first_seen = |c: usize| {
        let mut seen: Vec<&str> = Vec::new();
        rows.iter()
            .map(|row| {
                let v = row[c].as_str();
                let code = seen.iter().position(|s| *s == v).unwrap_or_else(|| {
                    seen.push(v);
                    seen.len() - 1
                });
                code as u32
            })
            .collect::<Vec<u32>>()
    };
    let plain = run(&[]);
    assert!(
        plain.iter().any(|i| i.contains("SIDECAR_KEY_MISSING")),
        "{plain:?}"
    );
    assert!(
        plain.iter().any(|i| i.contains("TAG_EXPRESSION_REPEATED")),
        "{plain:?}"
    );
    let all: Vec<Option<Vec<u32>>> = (0..header.len()).map(|c| Some(first_seen(c))).collect();
    assert_eq!(run(&all), plain);
    let some: Vec<Option<Vec<u32>>> = (0..header.len())
        .map(|c| (c % 2 == 0).then(|| first_seen(c)))
        .collect();
    assert_eq!(run(&some), plain);
    // Codes that skip a rank, or are too few: the column is read by its text.
    let mut bad = all.clone();
    bad[2] = Some(vec![1, 0, 1, 2, 1]);
    bad[3] = Some(vec![0, 0]);
    assert_eq!(run(&bad), plain);
    // Codes in order are trusted: calling "right" the same as "left" loses its issue.
    let mut misleading = all.clone();
    misleading[3] = Some(vec![0, 0, 0, 0, 1]);
    assert_ne!(run(&misleading), plain);
}
