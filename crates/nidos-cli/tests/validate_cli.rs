//! `nidos validate` end to end: exit codes, flags and their camelCase aliases, output
//! files, the JSON report against `docs/report.schema.json`, snapshots of the text and
//! JSON reports, and no panics on the conformance examples.
//!
//! Snapshot cases live in `tests/data/validate/<case>/`: the dataset in `ds/`, an optional
//! `config.json`, and the expected reports `expected.txt` / `expected.json` next to them.
//! `UPDATE_SNAPSHOTS=1 cargo test -p nidos-cli --test validate_cli` rewrites the expected
//! files. Tests that need `../shared` skip with a message when it is absent.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as Json;
use support::{snapshot, stdout, upstream_schema, BIN, SHARED};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/validate");
const REPORT_SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/report.schema.json");

fn nidos(args: &[&str]) -> Output {
    nidos_in(Path::new("."), args)
}

/// `nidos validate ARGS` run from `dir`.
fn nidos_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("validate")
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .output()
        .unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn case_dir(case: &str) -> PathBuf {
    Path::new(DATA).join(case)
}

/// Arguments validating a fixture with the upstream schema (and its config, if any).
/// The arguments of a fixture's run; `schema` is passed as given (the run is made from
/// its directory, see [`run_fixture`]).
fn fixture_args(case: &str, schema: &Path) -> Vec<String> {
    let dir = case_dir(case);
    let mut args = vec![
        dir.join("ds").to_string_lossy().to_string(),
        "--schema".to_string(),
        schema.to_string_lossy().to_string(),
        "--ignore-nifti-headers".to_string(),
    ];
    if dir.join("config.json").exists() {
        args.push("--config".to_string());
        args.push(dir.join("config.json").to_string_lossy().to_string());
    }
    args
}

/// Runs a fixture from the schema file's directory, naming the schema by its file name
/// as a user in that directory would: the text report's summary names the rules read
/// (`rules read from bids-….json`), so the snapshots hold no path of this machine.
fn run_fixture(case: &str, schema: &Path, extra: &[&str]) -> Output {
    let (dir, name) = match (schema.parent(), schema.file_name()) {
        (Some(dir), Some(name)) => (dir, Path::new(name)),
        _ => (Path::new("."), schema),
    };
    let mut args = fixture_args(case, name);
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    nidos_in(dir, &refs)
}

// ---------------------------------------------------------------------------------------
// A small JSON Schema checker for the subset docs/report.schema.json uses: type, enum,
// required, properties, additionalProperties, items, minItems, minimum, pattern (only
// the `^[A-Z0-9_]+$` form), local $ref.

fn type_ok(t: &str, v: &Json) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        other => panic!("report schema uses unsupported type {other}"),
    }
}

fn check(root: &Json, schema: &Json, v: &Json, at: &str, errors: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Json::as_str) {
        let target = root
            .pointer(r.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("unresolved $ref {r}"));
        check(root, target, v, at, errors);
    }
    match schema.get("type") {
        Some(Json::String(t)) if !type_ok(t, v) => {
            errors.push(format!("{at}: expected {t}, got {v}"));
            return;
        }
        Some(Json::Array(ts)) if !ts.iter().any(|t| type_ok(t.as_str().unwrap(), v)) => {
            errors.push(format!("{at}: expected one of {ts:?}, got {v}"));
            return;
        }
        _ => {}
    }
    if let Some(e) = schema.get("enum").and_then(Json::as_array) {
        if !e.contains(v) {
            errors.push(format!("{at}: {v} not in {e:?}"));
        }
    }
    if let Some(min) = schema.get("minimum").and_then(Json::as_f64) {
        if v.as_f64().is_some_and(|x| x < min) {
            errors.push(format!("{at}: {v} below {min}"));
        }
    }
    if let Some(p) = schema.get("pattern").and_then(Json::as_str) {
        assert_eq!(p, "^[A-Z0-9_]+$", "unsupported pattern in report schema");
        let s = v.as_str().unwrap_or("");
        if s.is_empty()
            || !s
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            errors.push(format!("{at}: {s:?} does not match {p}"));
        }
    }
    if let Some(obj) = v.as_object() {
        for key in schema
            .get("required")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let key = key.as_str().unwrap();
            if !obj.contains_key(key) {
                errors.push(format!("{at}: missing required {key}"));
            }
        }
        let props = schema.get("properties").and_then(Json::as_object);
        for (k, x) in obj {
            let sub = format!("{at}/{k}");
            match props.and_then(|p| p.get(k)) {
                Some(s) => check(root, s, x, &sub, errors),
                None => match schema.get("additionalProperties") {
                    Some(Json::Bool(false)) => errors.push(format!("{sub}: not allowed")),
                    Some(s @ Json::Object(_)) => check(root, s, x, &sub, errors),
                    _ => {}
                },
            }
        }
    }
    if let Some(arr) = v.as_array() {
        if let Some(min) = schema.get("minItems").and_then(Json::as_u64) {
            if (arr.len() as u64) < min {
                errors.push(format!("{at}: fewer than {min} items"));
            }
        }
        if let Some(items) = schema.get("items") {
            for (i, x) in arr.iter().enumerate() {
                check(root, items, x, &format!("{at}/{i}"), errors);
            }
        }
    }
}

fn assert_matches_report_schema(report: &Json) {
    let schema: Json =
        serde_json::from_str(&std::fs::read_to_string(REPORT_SCHEMA).unwrap()).unwrap();
    let mut errors = Vec::new();
    check(&schema, &schema, report, "", &mut errors);
    assert!(
        errors.is_empty(),
        "report does not match docs/report.schema.json:\n{}",
        errors.join("\n")
    );
}

#[test]
fn report_schema_checker_rejects_bad_reports() {
    let bad = serde_json::json!({
        "issues": {"issues": [{"code": "lower", "severity": "fatal", "location": "/x", "line": 0, "extra": 1}],
                   "codeMessages": {"X": 3}},
        "summary": {"subjects": "01"}
    });
    let schema: Json =
        serde_json::from_str(&std::fs::read_to_string(REPORT_SCHEMA).unwrap()).unwrap();
    let mut errors = Vec::new();
    check(&schema, &schema, &bad, "", &mut errors);
    for needle in [
        "/issues/issues/0: missing required subCode",
        "/issues/issues/0/code",
        "/issues/issues/0/severity",
        "/issues/issues/0/line",
        "/issues/issues/0/extra: not allowed",
        "/issues/codeMessages/X",
        "/summary: missing required totalFiles",
        "/summary/subjects: expected array",
    ] {
        assert!(
            errors.iter().any(|e| e.contains(needle)),
            "no error for {needle}: {errors:#?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Snapshots.

fn snapshot_case(case: &str) {
    let Some(schema) = upstream_schema() else {
        return;
    };
    let text = run_fixture(case, &schema, &["--no-color"]);
    let json = run_fixture(case, &schema, &["--format", "json_pp"]);
    assert_ne!(
        code(&text),
        101,
        "panic: {}",
        String::from_utf8_lossy(&text.stderr)
    );
    snapshot(&case_dir(case).join("expected.txt"), &stdout(&text));
    snapshot(&case_dir(case).join("expected.json"), &stdout(&json));

    let report: Json = serde_json::from_str(&stdout(&json)).unwrap();
    assert_matches_report_schema(&report);
    // Issues come sorted (code, location, subCode, line), and codeMessages holds exactly
    // the codes that occur.
    let issues = report["issues"]["issues"].as_array().unwrap();
    let keys: Vec<(String, String, String, u64)> = issues
        .iter()
        .map(|i| {
            (
                i["code"].as_str().unwrap().to_string(),
                i["location"].as_str().unwrap().to_string(),
                i["subCode"].as_str().unwrap().to_string(),
                i["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "issues are not in report order");
    let codes: std::collections::BTreeSet<&str> =
        issues.iter().map(|i| i["code"].as_str().unwrap()).collect();
    let messages: std::collections::BTreeSet<&str> = report["issues"]["codeMessages"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(codes, messages, "codeMessages keys");
    let has_errors = report["issues"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["severity"] == "error");
    let expected_code = if has_errors { 16 } else { 0 };
    assert_eq!(code(&text), expected_code, "text run exit code");
    assert_eq!(code(&json), expected_code, "json run exit code");
    // The same run twice gives the same bytes.
    let again = run_fixture(case, &schema, &["--no-color"]);
    assert_eq!(
        stdout(&text),
        stdout(&again),
        "text report is not deterministic"
    );
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn snapshot_valid() {
    snapshot_case("valid");
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn snapshot_errors() {
    snapshot_case("errors");
}

// ---------------------------------------------------------------------------------------
// Exit codes, flags and outputs.

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn exit_zero_when_valid_and_sixteen_with_errors() {
    let Some(schema) = upstream_schema() else {
        return;
    };
    assert_eq!(code(&run_fixture("valid", &schema, &[])), 0);
    assert_eq!(code(&run_fixture("errors", &schema, &[])), 16);
}

#[test]
fn usage_errors_exit_two() {
    let ds = case_dir("valid").join("ds");
    let ds = ds.to_str().unwrap();
    let missing_config = nidos(&[ds, "--config", "/nonexistent/nidos-config.json"]);
    assert_eq!(code(&missing_config), 2, "nonexistent config");
    assert!(String::from_utf8_lossy(&missing_config.stderr).contains("config"));
    assert_eq!(code(&nidos(&[ds, "--no-such-flag"])), 2, "unknown flag");
    assert_eq!(code(&nidos(&[ds, "--format", "xml"])), 2, "bad format");
    assert_eq!(code(&nidos(&[])), 2, "no dataset");
    assert_eq!(
        code(&nidos(&[ds, "--max-rows", "many"])),
        2,
        "non-numeric max rows"
    );
    let dir = tempfile::tempdir().unwrap();
    let bad_config = dir.path().join("bad.json");
    std::fs::write(&bad_config, r#"{"ignore": [{"cod": "EMPTY_FILE"}]}"#).unwrap();
    assert_eq!(
        code(&nidos(&[ds, "--config", bad_config.to_str().unwrap()])),
        2,
        "config with an unknown field"
    );
    std::fs::write(&bad_config, "{not json").unwrap();
    assert_eq!(
        code(&nidos(&[ds, "--config", bad_config.to_str().unwrap()])),
        2,
        "config that is not JSON"
    );
}

#[test]
fn nonexistent_dataset_is_not_a_panic() {
    let o = nidos(&["/nonexistent/nidos-dataset"]);
    assert_ne!(code(&o), 101);
    assert_ne!(code(&o), 0);
}

fn json_report(o: &Output) -> Json {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}

fn codes_with_severity(report: &Json, severity: &str) -> usize {
    report["issues"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["severity"] == severity)
        .count()
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn json_formats_parse_and_match_the_report_schema() {
    let Some(schema) = upstream_schema() else {
        return;
    };
    for case in ["valid", "errors"] {
        for format in ["json", "json_pp"] {
            let o = run_fixture(case, &schema, &["--format", format]);
            let report = json_report(&o);
            assert_matches_report_schema(&report);
            if format == "json" {
                assert_eq!(stdout(&o).lines().count(), 1, "--format json is one line");
            }
        }
    }
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn camel_case_aliases() {
    let Some(schema) = upstream_schema() else {
        return;
    };
    let base = run_fixture("errors", &schema, &["--format", "json"]);
    let base = json_report(&base);
    assert!(codes_with_severity(&base, "warning") > 0);

    for flag in ["--ignoreWarnings", "--ignore-warnings"] {
        let r = json_report(&run_fixture("errors", &schema, &["--format", "json", flag]));
        assert_eq!(codes_with_severity(&r, "warning"), 0, "{flag}");
        assert_eq!(
            codes_with_severity(&r, "error"),
            codes_with_severity(&base, "error"),
            "{flag} keeps errors"
        );
    }
    // --ignoreNiftiHeaders is accepted (the fixtures already pass the kebab form).
    let ds = case_dir("valid").join("ds");
    let o = nidos(&[
        ds.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
        "--ignoreNiftiHeaders",
        "--maxRows",
        "5",
        "--format",
        "json",
    ]);
    assert_ne!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    json_report(&o);
    // --maxRows limits rows like --max-rows: the bad onset on row 2 of the events table
    // disappears with one row.
    let onset_errors = |flag: &str, n: &str| {
        let r = json_report(&run_fixture(
            "errors",
            &schema,
            &["--format", "json", flag, n],
        ));
        r["issues"]["issues"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["code"] == "TSV_VALUE_INCORRECT_TYPE" && i["subCode"] == "onset")
            .count()
    };
    assert_eq!(onset_errors("--max-rows", "10"), 1);
    assert_eq!(onset_errors("--max-rows", "1"), 0);
    assert_eq!(onset_errors("--maxRows", "1"), 0);
    assert_eq!(onset_errors("--maxRows", "-1"), 1);
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn output_file() {
    let Some(schema) = upstream_schema() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (flag, format) in [
        ("-o", "json"),
        ("--outfile", "text"),
        ("--output", "json_pp"),
    ] {
        let out = dir.path().join(format!("report-{format}"));
        let o = run_fixture(
            "errors",
            &schema,
            &["--format", format, flag, out.to_str().unwrap()],
        );
        assert_eq!(code(&o), 16, "{flag}: exit code still tells about errors");
        assert!(o.stdout.is_empty(), "{flag}: nothing on stdout");
        let written = std::fs::read_to_string(&out).unwrap();
        let on_stdout = stdout(&run_fixture(
            "errors",
            &schema,
            &["--format", format, "--no-color"],
        ));
        assert_eq!(written, on_stdout, "{flag}: the file holds the report");
        assert!(
            !written.contains('\x1b'),
            "{flag}: no colour codes in a file"
        );
    }
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn color_flags() {
    let Some(schema) = upstream_schema() else {
        return;
    };
    let colored = stdout(&run_fixture("errors", &schema, &["--color"]));
    assert!(colored.contains("\x1b["), "--color paints");
    let plain = stdout(&run_fixture("errors", &schema, &["--color", "--no-color"]));
    assert!(!plain.contains('\x1b'), "--no-color wins");
    let piped = stdout(&run_fixture("errors", &schema, &[]));
    assert!(
        !piped.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn verbose_lists_every_location() {
    let Some(schema) = upstream_schema() else {
        return;
    };
    let short = stdout(&run_fixture("errors", &schema, &["--no-color"]));
    assert!(short.contains("and 2 more"), "{short}");
    let long = stdout(&run_fixture(
        "errors",
        &schema,
        &["--no-color", "--verbose"],
    ));
    assert!(!long.contains("more\n"), "{long}");
    for r in 1..=7 {
        assert!(long.contains(&format!("sub-01_task-nback_run-{r}_bold.nii.gz")));
    }
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn config_changes_severities_and_exit_code() {
    let Some(schema) = upstream_schema() else {
        return;
    };
    let ds = case_dir("valid").join("ds");
    let (ds, schema) = (ds.to_str().unwrap(), schema.to_str().unwrap());
    // Without the fixture's config the empty data files are errors.
    let o = nidos(&[ds, "--schema", schema, "--ignore-nifti-headers"]);
    assert_eq!(code(&o), 16);
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.json");
    std::fs::write(&cfg, r#"{"warning": [{"code": "EMPTY_FILE"}]}"#).unwrap();
    let o = nidos(&[
        ds,
        "--schema",
        schema,
        "--ignore-nifti-headers",
        "-c",
        cfg.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code(&o), 0);
    let r = json_report(&o);
    assert!(r["issues"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["code"] == "EMPTY_FILE" && i["severity"] == "warning"));
}

// ---------------------------------------------------------------------------------------
// No panics on the conformance examples.

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn never_panics_on_the_examples() {
    let Some(schema) = upstream_schema() else {
        return;
    };
    let examples = Path::new(SHARED).join("examples");
    let config = examples.join("default-config.json");
    let names = nidos_testkit::sub_directories(&examples);
    assert!(!names.is_empty());
    let mut bad = Vec::new();
    for ds in &names {
        let o = nidos(&[
            ds.to_str().unwrap(),
            "--schema",
            schema.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--ignore-nifti-headers",
            "--format",
            "json",
        ]);
        let c = code(&o);
        if c != 0 && c != 16 {
            bad.push(format!(
                "{}: exit {c}: {}",
                ds.display(),
                String::from_utf8_lossy(&o.stderr)
            ));
        } else if serde_json::from_slice::<Json>(&o.stdout).is_err() {
            bad.push(format!("{}: output is not JSON", ds.display()));
        }
    }
    println!("{} examples validated", names.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
