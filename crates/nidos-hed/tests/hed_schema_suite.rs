//! The HED project's schema-loading suite (`../shared/conformance/hed/tests/schema_tests`):
//! each item is a schema written inline (MediaWiki lines). Every `fails` item must report the
//! case's code (or one of its `alt_codes`); every `passes` item must load with no issue.
//! The test is ignored when `../shared` is absent.
//!
//! `HED_SUITE_VERBOSE=1` prints every miss with the issues found.

use std::path::Path;

use nidos_hed::{HedIssue, SchemaSource};
use nidos_hed_testkit::schema_dev::check_wiki;
use nidos_hed_testkit::suite::{accepted_codes, expected, read_cases};
use nidos_hed_testkit::{read_wiki, read_wiki_lines};
use serde_json::Value;

const SUITE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/hed/tests/schema_tests"
);

/// The released schema files (XML, with their `hedId`s), searched before the bundled data.
const SCHEMAS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/hed/schemas"
);

/// Share of items that must give the expected outcome.
const MIN_PASS_RATE: f64 = 0.98;

/// Loads one inline schema and runs the schema checks on it.
fn check_item(source: &SchemaSource, item: &Value) -> Vec<HedIssue> {
    let schema = match item {
        Value::Array(lines) => {
            let lines: Vec<&str> = lines.iter().filter_map(Value::as_str).collect();
            read_wiki_lines(&lines)
        }
        Value::String(text) if text.trim_start().starts_with('<') => {
            // An XML schema: it loads or it does not.
            return match nidos_hed::import_xml(text) {
                Ok(_) => Vec::new(),
                Err(e) => vec![HedIssue::error("SCHEMA_LOAD_FAILED", e)],
            };
        }
        Value::String(text) => read_wiki(text),
        other => {
            return vec![HedIssue::error(
                "SCHEMA_LOAD_FAILED",
                format!("unexpected item {other}"),
            )]
        }
    };
    check_wiki(&schema, source)
}

#[test]
#[cfg_attr(not(hed_suite), ignore = "needs ../shared/conformance/hed")]
fn hed_schema_suite() {
    let list = read_cases(Path::new(SUITE)).expect("suite case files");
    let source = SchemaSource::new(vec![SCHEMAS.into()]);
    let verbose = std::env::var_os("HED_SUITE_VERBOSE").is_some();
    let (mut total, mut good, mut cases) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    for case in &list {
        cases += 1;
        let name = case["name"].as_str().unwrap_or("?");
        let accepted = accepted_codes(case);
        for (_, tests) in case["tests"].as_object().into_iter().flatten() {
            for (expect_fail, list) in [(true, &tests["fails"]), (false, &tests["passes"])] {
                for (i, item) in list.as_array().into_iter().flatten().enumerate() {
                    total += 1;
                    let issues = check_item(&source, item);
                    let ok = if expect_fail {
                        issues.iter().any(|x| accepted.contains(&x.code))
                    } else {
                        issues.is_empty()
                    };
                    if ok {
                        good += 1;
                        continue;
                    }
                    let got: Vec<String> = issues
                        .iter()
                        .map(|x| {
                            if verbose {
                                format!("{} {}", x.code, x.message)
                            } else {
                                x.code.to_string()
                            }
                        })
                        .collect();
                    let (side, want) = expected(expect_fail, &accepted);
                    misses.push(format!(
                        "{name} {side} #{i}: expected {want}, got [{}]",
                        got.join("; "),
                    ));
                }
            }
        }
    }
    for m in &misses {
        println!("miss: {m}");
    }
    let rate = good as f64 / total.max(1) as f64;
    println!(
        "HED schema suite: {good}/{total} items as expected ({:.1} %) in {cases} cases",
        rate * 100.0
    );
    assert!(
        rate >= MIN_PASS_RATE,
        "HED schema suite pass rate {rate:.3} is below {MIN_PASS_RATE}"
    );
}
