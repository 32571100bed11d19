//! The HED project's JSON validation suite (`../shared/conformance/hed/tests/validation_tests`):
//! every `fails` item must report the case's code (or one of its `alt_codes`), every `passes`
//! item must report no error (and, in a warning case, no warning). Cases whose schemas are not
//! available offline are skipped. The test is ignored when `../shared` is absent.
//!
//! `HED_SUITE_VERBOSE=1` prints every miss.

use std::path::Path;

use nidos_hed::SchemaSource;
use nidos_hed_testkit::suite::{accepted_codes, expected, read_cases, run_item, ItemKind};

const SUITE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/hed/tests/validation_tests"
);

/// Share of items that must give the expected outcome.
const MIN_PASS_RATE: f64 = 0.98;

#[test]
#[cfg_attr(not(hed_suite), ignore = "needs ../shared/conformance/hed")]
fn hed_validation_suite() {
    let cases = read_cases(Path::new(SUITE)).expect("suite case files");
    let source = SchemaSource::default();
    let verbose = std::env::var_os("HED_SUITE_VERBOSE").is_some();
    let (mut total, mut good, mut skipped) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap_or("?");
        let accepted = accepted_codes(case);
        let warning_case = case["warning"].as_bool().unwrap_or(false);
        let defs: Vec<String> = case["definitions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str().map(String::from))
            .collect();
        let schema = &case["schema"];
        if let Err(issue) = source.load_versions(schema) {
            if issue.message.contains("available offline") {
                skipped += 1;
                continue;
            }
        }
        for (key, tests) in case["tests"].as_object().into_iter().flatten() {
            let Some(kind) = ItemKind::from_key(key) else {
                continue;
            };
            for (expect_fail, list) in [(true, &tests["fails"]), (false, &tests["passes"])] {
                for (i, item) in list.as_array().into_iter().flatten().enumerate() {
                    total += 1;
                    let issues = run_item(&source, schema, &defs, kind, item);
                    let ok = if expect_fail {
                        issues.iter().any(|x| accepted.contains(&x.code))
                    } else {
                        issues.iter().all(|x| x.warning && !warning_case)
                    };
                    if ok {
                        good += 1;
                    } else {
                        let got: Vec<String> = issues
                            .iter()
                            .map(|x| format!("{}{}", x.code, if x.warning { "(w)" } else { "" }))
                            .collect();
                        let (side, want) = expected(expect_fail, &accepted);
                        misses.push(format!(
                            "{name} {key} {side} #{i}: expected {want}, got [{}] item {}",
                            got.join(", "),
                            if verbose {
                                item.to_string()
                            } else {
                                String::new()
                            }
                        ));
                    }
                }
            }
        }
    }
    for m in &misses {
        println!("miss: {m}");
    }
    let rate = good as f64 / total.max(1) as f64;
    println!("HED suite: {good}/{total} items as expected ({:.1} %), {skipped} cases skipped (schemas not available)", rate * 100.0);
    assert!(
        rate >= MIN_PASS_RATE,
        "HED suite pass rate {rate:.3} is below {MIN_PASS_RATE}"
    );
}
