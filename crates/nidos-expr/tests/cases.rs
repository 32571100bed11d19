//! The one data-driven harness: every `{expression, result[, context][, exists]}` case
//! in `tests/expr/*.yaml`, the examples of `docs/expression-language.md`, and the
//! standard's `expression_tests.yaml` from `../shared` when present.

use std::path::{Path, PathBuf};

use nidos_expr::cases::{Case, Outcome};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shared_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn load_yaml(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: serde_json::Value =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Case::list_from_json(&doc).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs cases, printing each failure; returns (passed, failures).
fn run(label: &str, cases: &[Case]) -> (usize, Vec<String>) {
    let mut passed = 0;
    let mut failures = Vec::new();
    for case in cases {
        match case.run() {
            Outcome::Pass => passed += 1,
            Outcome::Wrong { got } => failures.push(format!(
                "{label}: `{}` gave {} but expected {}",
                case.expression, got, case.result
            )),
            Outcome::ParseError { message } => failures.push(format!(
                "{label}: `{}` did not parse: {message}",
                case.expression
            )),
        }
    }
    (passed, failures)
}

#[test]
fn own_case_files() {
    let dir = repo_root().join("tests/expr");
    let files = nidos_testkit::files_with_extension(&dir, "yaml");
    assert!(!files.is_empty(), "no case files in {}", dir.display());
    let mut total = 0;
    let mut failures = Vec::new();
    for f in &files {
        let cases = load_yaml(f);
        total += cases.len();
        let label = f.file_name().unwrap().to_string_lossy().to_string();
        let (_, fails) = run(&label, &cases);
        failures.extend(fails);
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    println!(
        "{} cases in {} files, {} failed",
        total,
        files.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed",
        failures.len(),
        total
    );
    assert!(total >= 150, "only {total} cases");
}

#[test]
fn upstream_expression_tests() {
    let path = shared_root().join("conformance/expression_tests.yaml");
    if !path.exists() {
        println!("skipped: {} is absent", path.display());
        return;
    }
    let cases = load_yaml(&path);
    let (passed, failures) = run("expression_tests.yaml", &cases);
    for f in &failures {
        println!("FAIL {f}");
    }
    println!("{passed} passed, {} failed", failures.len());
    assert!(failures.is_empty());
    assert_eq!(cases.len(), 77);
}

/// The examples of `docs/expression-language.md`: each line of an `expr` block is
/// `expression → JSON result`; a `context` block sets the root scope for what follows.
fn doc_cases(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut context = serde_json::json!({});
    let mut block: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        match &mut block {
            None => {
                if let Some(lang) = line.trim().strip_prefix("```") {
                    block = Some((lang.trim().to_string(), Vec::new()));
                }
            }
            Some((lang, lines)) => {
                if line.trim() == "```" {
                    match lang.as_str() {
                        "context" => {
                            context = serde_json::from_str(&lines.join("\n"))
                                .unwrap_or_else(|e| panic!("context block: {e}"))
                        }
                        "expr" => {
                            for l in lines.iter().filter(|l| !l.trim().is_empty()) {
                                let (expr, result) = l
                                    .rsplit_once('→')
                                    .unwrap_or_else(|| panic!("no → in example `{l}`"));
                                let result: serde_json::Value = serde_json::from_str(result.trim())
                                    .unwrap_or_else(|e| panic!("result of `{l}`: {e}"));
                                let case = serde_json::json!({
                                    "expression": expr.trim(),
                                    "result": result,
                                    "context": context,
                                });
                                cases.push(Case::from_json(&case).unwrap());
                            }
                        }
                        _ => {}
                    }
                    block = None;
                } else {
                    lines.push(line.to_string());
                }
            }
        }
    }
    cases
}

#[test]
fn language_reference_examples() {
    let path = repo_root().join("docs/expression-language.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let cases = doc_cases(&text);
    let (passed, failures) = run("expression-language.md", &cases);
    for f in &failures {
        println!("FAIL {f}");
    }
    println!("{passed} examples passed, {} failed", failures.len());
    assert!(failures.is_empty(), "{} examples failed", failures.len());
    assert!(cases.len() >= 80, "only {} examples found", cases.len());
}
