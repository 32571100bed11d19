//! The end-to-end cases of `tests/lsp/cases/` replayed in the library: after each edit,
//! the diagnostics the server keeps by patching (`Changed::Since`, the session's deltas)
//! must equal those a new session publishes for the same texts from scratch
//! (`Changed::All`). The protocol side of the cases is `tests/lsp/test_lsp.py`'s.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use lsp_types::Diagnostic;
use nidos_schema::{Schema, Source};
use nidos_validate::incremental::{Outcome, Session};
use nidos_validate::Request;
use serde_json::Value;

use crate::diagnostics::{Changed, Inputs, Published};
use crate::workspace::{Doc, Workspace};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/lsp/cases")
}

/// A gzip-compressed NIfTI-1 header of a 4-D image (as the Python harness writes it).
fn nifti_bold() -> Vec<u8> {
    let mut h = vec![0u8; 352];
    h[0..4].copy_from_slice(&348i32.to_le_bytes());
    for (i, d) in [4i16, 64, 64, 30, 10, 1, 1, 1].iter().enumerate() {
        h[40 + 2 * i..42 + 2 * i].copy_from_slice(&d.to_le_bytes());
    }
    h[70..72].copy_from_slice(&16i16.to_le_bytes());
    for (i, p) in [1f32, 3., 3., 3., 2., 1., 1., 1.].iter().enumerate() {
        h[76 + 4 * i..80 + 4 * i].copy_from_slice(&p.to_le_bytes());
    }
    h[108..112].copy_from_slice(&352f32.to_le_bytes());
    h[344..348].copy_from_slice(b"n+1\0");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&h).unwrap();
    gz.finish().unwrap()
}

fn write_dataset(root: &Path, files: &serde_json::Map<String, Value>) {
    for (rel, content) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes = match content {
            Value::String(s) if s == "@nifti-bold" => nifti_bold(),
            Value::String(s) => s.clone().into_bytes(),
            other => format!("{}\n", serde_json::to_string_pretty(other).unwrap()).into_bytes(),
        };
        std::fs::write(path, bytes).unwrap();
    }
}

fn rules(ws: &Workspace) -> Schema {
    nidos_schema::load_for_dir(&Source::Bundled, &ws.root, ws.description(), None)
        .unwrap()
        .schema
}

/// The diagnostics a new session publishes for the workspace as it is.
fn from_scratch(ws: &Workspace) -> HashMap<String, Vec<Diagnostic>> {
    let schema = rules(ws);
    let session = Session::new_with(&schema, &ws.root, &Request::default(), ws.contents()).unwrap();
    let mut published = Published::default();
    let inputs = inputs(ws, &session);
    published.update(&inputs, Changed::All);
    published.sent().clone()
}

fn inputs<'a>(ws: &'a Workspace, session: &'a Session<'_>) -> Inputs<'a> {
    Inputs {
        ws,
        report: session.report(),
        dataset: session.dataset(),
        schema: session.schema(),
    }
}

/// Replays one case's opens and edits; returns how many edits were compared.
fn replay(case: &Path) -> usize {
    let text = std::fs::read_to_string(case).unwrap();
    let spec: Value = serde_saphyr::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path(), spec["files"].as_object().unwrap());
    let mut ws = Workspace::new(dir.path());
    let mut schema = rules(&ws);
    let mut session =
        Session::new_with(&schema, &ws.root, &Request::default(), ws.contents()).unwrap();
    let mut published = Published::default();
    published.update(&inputs(&ws, &session), Changed::All);
    let mut compared = 0;
    for step in spec["steps"].as_array().unwrap() {
        let (kind, arg) = step.as_object().unwrap().iter().next().unwrap();
        let (rel, new) = match kind.as_str() {
            "open" => {
                let rel = arg.as_str().unwrap();
                let text = std::fs::read_to_string(dir.path().join(rel)).unwrap();
                (rel, text)
            }
            "edit" => {
                let rel = arg["file"].as_str().unwrap();
                let path = ws.absolute(&format!("/{rel}"));
                let old = match ws.docs.get(&path) {
                    Some(d) => d.text.clone(),
                    None => std::fs::read_to_string(&path).unwrap(),
                };
                let new = match &arg["text"] {
                    Value::String(t) => t.clone(),
                    _ => {
                        let pair = arg["replace"].as_array().unwrap();
                        let (from, to) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
                        old.replacen(from, to, 1)
                    }
                };
                (rel, new)
            }
            _ => continue,
        };
        let path = ws.absolute(&format!("/{rel}"));
        ws.docs.insert(path, Doc::new(new.clone(), 1));
        let rel = format!("/{rel}");
        let outcome = session.set_overlay(&rel, Some(new.into_bytes())).unwrap();
        match outcome {
            Outcome::Updated(delta) => {
                let edited = HashSet::from([rel]);
                let changed = Changed::Since {
                    edited: &edited,
                    deltas: std::slice::from_ref(&delta),
                };
                published.update(&inputs(&ws, &session), changed);
            }
            Outcome::RulesChanged => {
                // As the server does: a new session with the rules the text chooses.
                drop(session);
                schema = rules(&ws);
                session = Session::new_with(&schema, &ws.root, &Request::default(), ws.contents())
                    .unwrap();
                published.update(&inputs(&ws, &session), Changed::All);
            }
        }
        if kind == "edit" {
            let want = from_scratch(&ws);
            assert_eq!(
                published.sent(),
                &want,
                "{}: after editing {}, the patched diagnostics differ from a new session's",
                case.display(),
                step
            );
            compared += 1;
        }
    }
    compared
}

#[test]
fn patched_diagnostics_equal_a_new_sessions() {
    let cases = nidos_testkit::files_with_extension(&cases_dir(), "yaml");
    assert!(!cases.is_empty(), "no cases in {}", cases_dir().display());
    let compared: usize = cases.iter().map(|c| replay(c)).sum();
    assert!(compared > 0, "no case edits a file");
}
