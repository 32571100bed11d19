//! Every code a report can hold comes with an explanation: each rule's `issue:` in the
//! bundled rules (`schema/rules/**`) and in the upstream compiled schemas, each `errors`
//! entry, and each code the engine raises itself (found by scanning the engine's source
//! for code literals). Then, end to end, every code group of the text report and every
//! `codeMessages` entry of the JSON report is non-empty.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use nidos_schema::Schema;
use nidos_validate::explain::{engine_explanation, ENGINE_CODES};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance");
const BIN: &str = env!("CARGO_BIN_EXE_nidos");

/// Upper-case literals in the engine's source that are not issue codes.
const NOT_CODES: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "CARGO_PKG_VERSION",
    "NIDOS_TIMING",
    "NIDOS_SCHEMA_DIR",
    "NIDOS_PUBLISHED_SCHEMA",
    "NIDOS_CACHE_DIR",
    "NOT_A_CODE",
    "NO_COLOR",
    // Made-up codes in the report sort's and the issue kinds' tests.
    "A_CODE",
    "B_CODE",
    // A HED error code, reported as the sub-code of `HED_WARNING` (unit tests of hed.rs
    // and the sort use it).
    "SIDECAR_KEY_MISSING",
    // HED error codes (sub-codes of `HED_ERROR`) in the unit tests of hed.rs's filter of
    // repeated row issues.
    "TAG_INVALID",
    "TAG_EXPRESSION_REPEATED",
];

/// Code → the schema's message for it, over checks, errors and field issues.
fn schema_messages(schema: &Schema) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |code: &str, message: &str| {
        let slot = out.entry(code.to_string()).or_default();
        if slot.trim().is_empty() {
            *slot = message.to_string();
        }
    };
    for spec in schema.checks.iter().filter_map(|c| c.issue.as_ref()) {
        add(&spec.code, &spec.message);
    }
    for e in &schema.errors {
        add(&e.code, &e.message);
    }
    for rule in schema.sidecar_rules.iter().chain(&schema.json_rules) {
        for spec in rule.fields.values().filter_map(|f| f.issue.as_ref()) {
            add(&spec.code, &spec.message);
        }
    }
    out
}

/// Codes without a schema message or an engine explanation.
fn unexplained(messages: &BTreeMap<String, String>) -> Vec<String> {
    messages
        .iter()
        .filter(|(c, m)| m.trim().is_empty() && engine_explanation(c).is_none())
        .map(|(c, _)| c.clone())
        .collect()
}

#[test]
fn every_bundled_rule_issue_is_explained() {
    let schema = Schema::bundled().expect("bundled rules load");
    let messages = schema_messages(&schema);
    assert!(
        messages.len() > 10,
        "too few rule issues: {}",
        messages.len()
    );
    let missing = unexplained(&messages);
    assert!(missing.is_empty(), "no explanation for {missing:?}");
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn every_upstream_rule_issue_is_explained() {
    let dir = Path::new(SHARED).join("schemas");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let schema = nidos_schema::load_path(&path).expect("upstream schema loads");
        let missing = unexplained(&schema_messages(&schema));
        assert!(
            missing.is_empty(),
            "{}: no explanation for {missing:?}",
            path.display()
        );
        seen += 1;
    }
    assert!(seen > 0, "no upstream schemas in {}", dir.display());
}

/// Quoted upper-case identifiers with an underscore (`"TSV_EMPTY_LINE"`) in `text`.
fn code_literals(text: &str) -> Vec<String> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            s.len() > 4
                && s.contains('_')
                && s.starts_with(|c: char| c.is_ascii_uppercase())
                && s.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn every_engine_code_is_explained() {
    let bundled = schema_messages(&Schema::bundled().expect("bundled rules load"));
    let mut missing = Vec::new();
    let mut found = 0;
    for krate in ["nidos-validate", "nidos-dataset", "nidos-cli"] {
        let src = Path::new(ROOT).join("crates").join(krate).join("src");
        let mut stack = vec![src];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for code in code_literals(&text) {
                    if NOT_CODES.contains(&code.as_str()) {
                        continue;
                    }
                    found += 1;
                    let by_schema = bundled.get(&code).is_some_and(|m| !m.trim().is_empty());
                    if !by_schema && engine_explanation(&code).is_none() {
                        missing.push(format!("{code} ({})", path.display()));
                    }
                }
            }
        }
    }
    assert!(found >= ENGINE_CODES.len(), "scan found only {found} codes");
    assert!(missing.is_empty(), "no explanation for {missing:#?}");
}

#[test]
fn the_source_scan_finds_codes() {
    assert_eq!(
        code_literals(r#"Issue::new("TSV_EMPTY_LINE", x, "/a"); let s = "Hello_x"; "A_B""#),
        vec!["TSV_EMPTY_LINE".to_string()]
    );
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn text_and_json_reports_explain_every_code() {
    let ds = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/validate/errors/ds");
    let schema = Path::new(SHARED).join("schemas/bids-1.11.1-schema-1.2.7.json");
    let run = |format: &str| {
        let o = Command::new(BIN)
            .arg("validate")
            .arg(&ds)
            .arg("--schema")
            .arg(&schema)
            .args(["--ignore-nifti-headers", "--no-color", "--format", format])
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let messages = json["issues"]["codeMessages"].as_object().unwrap();
    assert!(!messages.is_empty());
    for (code, m) in messages {
        assert!(
            m.as_str().is_some_and(|m| !m.trim().is_empty()),
            "JSON: {code} unexplained"
        );
    }
    // Text: each group heading `  CODE … (N locations)` is followed by an explanation
    // line, not straight by a location (`    /…`).
    let text = run("text");
    let lines: Vec<&str> = text.lines().collect();
    let mut groups = 0;
    for (n, line) in lines.iter().enumerate() {
        if line.starts_with("  ") && !line.starts_with("   ") && line.contains(" location") {
            groups += 1;
            let next = lines.get(n + 1).copied().unwrap_or("");
            assert!(
                next.starts_with("    ") && !next.trim_start().starts_with('/'),
                "text: no explanation under {line:?}"
            );
        }
    }
    assert_eq!(groups, {
        let issues = json["issues"]["issues"].as_array().unwrap();
        let keys: std::collections::BTreeSet<(String, String)> = issues
            .iter()
            .map(|i| (i["code"].to_string(), i["subCode"].to_string()))
            .collect();
        keys.len()
    });
}
