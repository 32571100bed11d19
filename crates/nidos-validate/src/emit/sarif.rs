//! `--format sarif`: the report as a SARIF 2.1.0 log, so code-scanning dashboards can
//! show dataset issues next to the files they concern.
//!
//! One run; one result per issue (the root dataset's, then each derivative's, whose
//! locations are prefixed with `derivatives/<name>/`). A result's `ruleId` is the code, or
//! `CODE/subCode` (SARIF's hierarchical form) when the issue has a sub-code; the rule it
//! points at (`ruleIndex`) is the code's descriptor, described by the code's message.
//!
//! A result whose issue `nidos fix` repairs carries SARIF's `fixes`, from the fix plan of
//! the same run: for each file the repair changes, the regions it replaces (a deleted
//! byte range and the text put in its place), each as small as the change.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use serde_json::{json, Value as Json};

use super::{code_message, FixView, Fixes};
use crate::issue::{Issue, Severity};
use crate::report::Report;

/// The base every artifact location is relative to.
const ROOT_BASE: &str = "DATASETROOT";

/// Characters escaped in a relative URI path: controls, space and the characters URI
/// syntax reserves outside path segments (`/` stays: it separates segments).
const PATH_ESCAPES: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Writes the SARIF log of a run over `root` (its absolute form anchors the locations),
/// pretty-printed. The log is written as it is produced: the frame (tool, rules, base,
/// properties) is built whole, as it is small, and the results, one per issue, are each
/// built, written and dropped in turn, so memory does not grow with the issue count
/// beyond the report itself. The bytes are those of pretty-printing the whole log.
pub fn write_sarif(
    out: &mut impl Write,
    root: &Path,
    report: &Report,
    derivatives: &[(String, Report)],
    fixes: &Fixes<'_>,
) -> std::io::Result<()> {
    let mut all: Vec<(&str, &Report)> = vec![("", report)];
    all.extend(derivatives.iter().map(|(n, r)| (n.as_str(), r)));

    // One descriptor per code, in code order; its level is the most severe seen.
    let mut rules: BTreeMap<&str, (Severity, String)> = BTreeMap::new();
    for (_, r) in &all {
        for i in &r.issues {
            let entry = rules
                .entry(i.code().as_str())
                .or_insert_with(|| (i.severity, code_message(r, i.code())));
            if i.severity < entry.0 {
                entry.0 = i.severity;
            }
        }
    }
    let index: BTreeMap<&str, usize> = rules.keys().enumerate().map(|(n, c)| (*c, n)).collect();
    let descriptors: Vec<Json> = rules
        .iter()
        .map(|(code, (severity, text))| {
            json!({
                "id": code,
                "shortDescription": {"text": first_sentence(text)},
                "fullDescription": {"text": text},
                "defaultConfiguration": {"level": level(*severity)},
            })
        })
        .collect();

    let abs = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let mut base = format!(
        "file://{}",
        utf8_percent_encode(&abs.to_string_lossy().replace('\\', "/"), PATH_ESCAPES)
    );
    if !base.ends_with('/') {
        base.push('/');
    }
    let frame = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "nidos",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": descriptors,
            }},
            "originalUriBaseIds": {ROOT_BASE: {"uri": base}},
            "results": [],
            "properties": {
                "schemaVersion": report.summary.schema_version,
                "standardVersion": report.summary.standard_version,
                "datasetType": report.dataset_type,
            },
        }],
    });
    let frame = serde_json::to_string_pretty(&frame)?;
    let count: usize = all.iter().map(|(_, r)| r.issues.len()).sum();
    // The only unescaped `"results"` in the frame is the key (quotes inside strings are
    // escaped); the results go between its brackets.
    let (head, tail) = match frame.split_once(RESULTS_SLOT) {
        Some(parts) if count > 0 => parts,
        _ => {
            out.write_all(frame.as_bytes())?;
            return Ok(());
        }
    };
    out.write_all(head.as_bytes())?;
    out.write_all(b"\"results\": [")?;
    let mut buf = Vec::new();
    let mut first = true;
    for (name, r) in &all {
        let prefix = if name.is_empty() {
            String::new()
        } else {
            format!("derivatives/{name}/")
        };
        for i in &r.issues {
            let mut res = result(i, r, &prefix, index.get(i.code().as_str()).copied());
            // The plan covers the root dataset only.
            if name.is_empty() && i.fixable {
                let key = (i.code().as_str(), i.location.as_str());
                if let Some(found) = fixes.get(&key).filter(|f| !f.is_empty()) {
                    res["fixes"] = found.iter().map(fix).collect();
                }
            }
            buf.clear();
            serde_json::to_writer_pretty(&mut buf, &res)?;
            out.write_all(if first { b"\n" } else { b",\n" })?;
            first = false;
            // A pretty-printed value breaks lines only between tokens (a string's line
            // breaks are escaped), so each line takes the results' indentation.
            for (n, line) in buf.split(|b| *b == b'\n').enumerate() {
                if n > 0 {
                    out.write_all(b"\n")?;
                }
                out.write_all(RESULT_INDENT.as_bytes())?;
                out.write_all(line)?;
            }
        }
    }
    out.write_all(b"\n")?;
    out.write_all(RESULTS_CLOSE_INDENT.as_bytes())?;
    out.write_all(b"]")?;
    out.write_all(tail.as_bytes())
}

/// The results' key as the pretty-printed frame holds it, empty.
const RESULTS_SLOT: &str = "\"results\": []";
/// The indentation of a result (the log, `runs`, the run, `results`: four levels).
const RESULT_INDENT: &str = "        ";
/// The indentation of the results' closing bracket.
const RESULTS_CLOSE_INDENT: &str = "      ";

fn result(i: &Issue, r: &Report, prefix: &str, rule_index: Option<usize>) -> Json {
    let rule_id = if i.sub_code().is_empty() {
        i.code().to_string()
    } else {
        format!("{}/{}", i.code(), i.sub_code())
    };
    let mut text = match i.issue_message() {
        Some(m) => m.to_string(),
        None => first_sentence(&code_message(r, i.code())),
    };
    if !i.sub_code().is_empty() && !text.contains(i.sub_code().as_str()) {
        text = format!("{}: {text}", i.sub_code());
    }
    let rel = i.location.trim_start_matches('/');
    let uri = if rel.is_empty() {
        // The dataset as a whole: its root directory.
        format!("{prefix}./")
    } else {
        format!("{prefix}{}", utf8_percent_encode(rel, PATH_ESCAPES))
    };
    let mut physical = json!({"artifactLocation": {"uri": uri, "uriBaseId": ROOT_BASE}});
    if let Some(line) = i.line_number().filter(|l| *l >= 1) {
        physical["region"] = json!({"startLine": line});
    }
    let mut out = json!({
        "ruleId": rule_id,
        "level": level(i.severity),
        "message": {"text": text},
        "locations": [{"physicalLocation": physical}],
    });
    if let Some(n) = rule_index {
        out["ruleIndex"] = json!(n);
    }
    if !i.affects().is_empty() {
        out["relatedLocations"] = i
            .affects()
            .iter()
            .enumerate()
            .map(|(n, a)| {
                json!({"id": n, "physicalLocation": {"artifactLocation": {
                    "uri": format!("{prefix}{}",
                        utf8_percent_encode(a.trim_start_matches('/'), PATH_ESCAPES)),
                    "uriBaseId": ROOT_BASE,
                }}})
            })
            .collect();
    }
    out
}

/// A SARIF fix: one change to one file.
fn fix(change: &FixView<'_>) -> Json {
    let replacements: Vec<Json> = change
        .replacements
        .iter()
        .map(|r| {
            json!({
                "deletedRegion": {"byteOffset": r.offset, "byteLength": r.length},
                "insertedContent": {"text": r.text},
            })
        })
        .collect();
    json!({
        "description": {"text": change.description},
        "artifactChanges": [{
            "artifactLocation": {
                "uri": utf8_percent_encode(change.path.trim_start_matches('/'), PATH_ESCAPES)
                    .to_string(),
                "uriBaseId": ROOT_BASE,
            },
            "replacements": replacements,
        }],
    })
}

/// SARIF's level for a severity.
fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Ignore => "note",
    }
}

/// The text up to the first sentence end (or first line), for short descriptions.
fn first_sentence(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    match line.find(". ") {
        Some(n) => line[..=n].to_string(),
        None => line.to_string(),
    }
}
