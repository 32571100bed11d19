//! Incremental validation equals a whole run: random edits, creations, removals and
//! renames applied to small datasets (copies of examples from `../shared`, or a
//! generated one), and after each batch the incremental report is compared byte for
//! byte (compact JSON) with a whole run's. Fixed seed; `NIDOS_INCR_CASES` sets the
//! number of cases per dataset.

use std::path::{Path, PathBuf};

use nidos_validate::incremental::{load_rules, Outcome, Session};
use nidos_validate::{Engine, Options, Request};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const EXAMPLES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/examples"
);

#[derive(Clone, Debug)]
enum Op {
    Edit(u16, u8),
    Create(u16, u8),
    Delete(u16),
    Rename(u16, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u16>(), any::<u8>()).prop_map(|(i, v)| Op::Edit(i, v)),
        2 => (any::<u16>(), any::<u8>()).prop_map(|(i, v)| Op::Create(i, v)),
        1 => any::<u16>().prop_map(Op::Delete),
        1 => (any::<u16>(), any::<u8>()).prop_map(|(i, v)| Op::Rename(i, v)),
    ]
}

/// Every file under `root`, dataset-relative with a leading `/`, sorted.
fn files(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(format!("/{}", rel.to_string_lossy()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn abs(root: &Path, rel: &str) -> PathBuf {
    root.join(rel.trim_start_matches('/'))
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = abs(root, rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(p, bytes).unwrap();
}

/// Another subject's folder name for `rel` (`sub-X` → `sub-new` or an existing other).
fn other_subject(rel: &str, pick: u8) -> Option<String> {
    let first = rel.trim_start_matches('/').split('/').next()?;
    let sub = first.strip_prefix("sub-")?;
    let to = if pick.is_multiple_of(2) { "new" } else { "zz" };
    Some(rel.replace(&format!("sub-{sub}"), &format!("sub-{to}")))
}

/// Applies `op` to the dataset at `root`; answers the paths it touched.
fn apply(root: &Path, op: &Op) -> Vec<String> {
    let all = files(root);
    if all.is_empty() {
        return Vec::new();
    }
    let pick = |i: u16| all[i as usize % all.len()].clone();
    match *op {
        Op::Edit(i, v) => {
            let rel = pick(i);
            let p = abs(root, &rel);
            let bytes: Vec<u8> = if rel.ends_with(".json") {
                let mut json: serde_json::Value = std::fs::read(&p)
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .unwrap_or_else(|| serde_json::json!({}));
                if let Some(o) = json.as_object_mut() {
                    match v % 6 {
                        0 => {
                            o.insert("RepetitionTime".into(), "two".into());
                        }
                        1 => {
                            o.insert("RepetitionTime".into(), 2.0.into());
                        }
                        2 => {
                            let first = o.keys().next().cloned();
                            if let Some(k) = first {
                                o.remove(&k);
                            }
                        }
                        3 => {
                            o.insert("TaskName".into(), serde_json::json!(["x"]));
                        }
                        4 => {
                            o.insert(
                                "HED".into(),
                                serde_json::json!({"x": "Sensory-event, Nonsense-tag"}),
                            );
                        }
                        _ => return write_back(root, &rel, b"{ not json"),
                    }
                }
                serde_json::to_vec_pretty(&json).unwrap()
            } else if rel.ends_with(".tsv") {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                match v % 4 {
                    0 => format!("{text}1\t2\t3\t4\t5\n").into_bytes(),
                    1 => {
                        let body: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
                        format!("onset\tduration\ttrial_type\n{body}").into_bytes()
                    }
                    2 => Vec::new(),
                    _ => format!("{text}n/a\tn/a\n").into_bytes(),
                }
            } else {
                match v % 3 {
                    0 => Vec::new(),
                    1 => vec![v; 64],
                    _ => b"plain text".to_vec(),
                }
            };
            write_back(root, &rel, &bytes)
        }
        Op::Create(i, v) => {
            let rel = pick(i);
            let bytes = std::fs::read(abs(root, &rel)).unwrap_or_default();
            let name = rel.rsplit('/').next().unwrap_or("x").to_string();
            let dir = &rel[..rel.len() - name.len()];
            let stem = name.split('.').next().unwrap_or("x");
            let new = match v % 5 {
                0 => format!("{dir}{stem}.json"),
                1 => {
                    // One folder up (a sidecar there is inherited by more files).
                    let up = Path::new(dir.trim_end_matches('/'))
                        .parent()
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    format!("{}/{name}", up.trim_end_matches('/'))
                }
                2 => match other_subject(&rel, v / 5) {
                    Some(p) => p,
                    None => format!("{dir}junk_{v}.txt"),
                },
                3 => format!("{dir}junk_{v}.txt"),
                _ => {
                    // A root sidecar for the file's suffix, without its subject.
                    let suffix = stem.rsplit('_').next().unwrap_or("bold");
                    format!("/{suffix}.json")
                }
            };
            let content: Vec<u8> = if new.ends_with(".json") && !rel.ends_with(".json") {
                br#"{"RepetitionTime": 3, "TaskName": "made"}"#.to_vec()
            } else {
                bytes
            };
            write(root, &new, &content);
            vec![new]
        }
        Op::Delete(i) => {
            let rel = pick(i);
            std::fs::remove_file(abs(root, &rel)).unwrap();
            vec![rel]
        }
        Op::Rename(i, v) => {
            let rel = pick(i);
            let name = rel.rsplit('/').next().unwrap_or("x").to_string();
            let dir = &rel[..rel.len() - name.len()];
            let to = match (v % 2, other_subject(&rel, v / 2)) {
                (1, Some(p)) => p,
                _ => format!("{dir}x{name}"),
            };
            let target = abs(root, &to);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).unwrap();
            }
            std::fs::rename(abs(root, &rel), target).unwrap();
            vec![rel, to]
        }
    }
}

fn write_back(root: &Path, rel: &str, bytes: &[u8]) -> Vec<String> {
    write(root, rel, bytes);
    vec![rel.to_string()]
}

fn json(report: &nidos_validate::Report) -> String {
    let mut out = Vec::new();
    report.json().write_compact(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Where two reports first differ, with some context on each side.
fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let around = |s: &str| {
        let from = (at.saturating_sub(300)..=at)
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        let to = (at + 300).min(s.len());
        let to = (to..=s.len())
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(s.len());
        s[from..to].to_string()
    };
    format!("incremental: …{}…\nwhole run: …{}…", around(a), around(b))
}

/// A small generated dataset: two subjects with bold runs, events, a root sidecar.
fn generated(root: &Path) {
    write(
        root,
        "/dataset_description.json",
        br#"{"Name": "gen", "BIDSVersion": "1.10.0"}"#,
    );
    write(
        root,
        "/participants.tsv",
        b"participant_id\tage\nsub-01\t30\nsub-02\t31\n",
    );
    write(
        root,
        "/task-rest_bold.json",
        br#"{"TaskName": "rest", "RepetitionTime": 2}"#,
    );
    for s in ["01", "02"] {
        for run in ["1", "2"] {
            let base = format!("/sub-{s}/func/sub-{s}_task-rest_run-{run}");
            write(root, &format!("{base}_bold.nii.gz"), b"x");
            write(
                root,
                &format!("{base}_events.tsv"),
                b"onset\tduration\n1\t2\n",
            );
        }
        write(
            root,
            &format!("/sub-{s}/anat/sub-{s}_T1w.json"),
            br#"{"RepetitionTime": 2}"#,
        );
        write(root, &format!("/sub-{s}/anat/sub-{s}_T1w.nii.gz"), b"x");
    }
}

/// With `later`, the reports carry the later-version notes ([`Request::explain_later`])
/// and are compared with [`nidos_validate::validate`]'s (the rules chosen again after a
/// change that may choose others).
fn check_dataset(name: &str, source: Option<&Path>, cases: u32, later: bool) {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join(name);
    match source {
        Some(src) => nidos_testkit::copy_dir(src, &root),
        None => generated(&root),
    }
    let request = Request {
        explain_later: later,
        ..request_without_headers()
    };
    let (schema, _) = load_rules(&root, &request).unwrap();
    let pristine = base.path().join("pristine");
    nidos_testkit::copy_dir(&root, &pristine);
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 32,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let batches = prop::collection::vec(prop::collection::vec(op(), 1..4), 1..4);
    let engine = Engine::new(&schema);
    let result = runner.run(&batches, |batches| {
        // Each case starts from the untouched copy.
        std::fs::remove_dir_all(&root).unwrap();
        nidos_testkit::copy_dir(&pristine, &root);
        let mut session = Session::new(&schema, &root, &request).unwrap();
        let mut applied = Vec::new();
        for batch in &batches {
            let mut touched = Vec::new();
            for op in batch {
                touched.extend(apply(&root, op));
                applied.push(op.clone());
            }
            match session.update(&touched).unwrap() {
                Outcome::Updated(_) => {}
                Outcome::RulesChanged if later => {
                    // The rules chosen again, as the whole run below does (kept until
                    // the test ends).
                    let (rules, _) = load_rules(&root, &request).unwrap();
                    let rules = &**Box::leak(Box::new(rules));
                    session = Session::new(rules, &root, &request).unwrap();
                }
                Outcome::RulesChanged => {
                    // The rules are those of the original description (same schema
                    // for the comparison below).
                    session = Session::new(&schema, &root, &request).unwrap();
                }
            }
            let full = if later {
                nidos_validate::validate(&root, &request).unwrap().report
            } else {
                engine.validate(&root, &request.options).unwrap()
            };
            // The count of what the newest rules add is in the text report only.
            let (ours, theirs) = (
                format!("{:?}", session.report().summary.newest_rules),
                format!("{:?}", full.summary.newest_rules),
            );
            prop_assert!(
                ours == theirs,
                "{}: after {:?}: {} != {}",
                name,
                applied,
                ours,
                theirs
            );
            let (ours, theirs) = (json(session.report()), json(&full));
            prop_assert!(
                ours == theirs,
                "{}: after {:?}: {}",
                name,
                applied,
                first_difference(&ours, &theirs)
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

fn cases() -> u32 {
    std::env::var("NIDOS_INCR_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

#[test]
fn incremental_equals_full_generated() {
    check_dataset("gen", None, cases(), false);
}

#[test]
#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
fn incremental_equals_full_examples() {
    for name in ["asl001", "ds001", "eeg_matchingpennies"] {
        let src = Path::new(EXAMPLES).join(name);
        if !src.is_dir() {
            eprintln!("skipped {name}: {} absent", src.display());
            continue;
        }
        check_dataset(name, Some(&src), cases(), false);
    }
}

/// As [`incremental_equals_full_examples`], with the later-version notes and the
/// summary's count of what the newest rules add (the generated dataset, asl001 and
/// ds001 declare older versions than the newest; the generated one has no issue whose
/// note an edit below the root can change, so its edits are patched).
#[test]
fn incremental_equals_full_with_later_notes() {
    check_dataset("gen", None, cases(), true);
}

/// [`incremental_equals_full_with_later_notes`] on copies of asl001 and ds001.
#[test]
#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
fn incremental_equals_full_with_later_notes_examples() {
    for name in ["asl001", "ds001"] {
        let src = Path::new(EXAMPLES).join(name);
        if !src.is_dir() {
            eprintln!("skipped {name}: {} absent", src.display());
            continue;
        }
        check_dataset(name, Some(&src), cases(), true);
    }
}

/// The result cache validates again exactly the files an incremental session would,
/// and its report equals a whole run's, after edits, a creation and a removal.
#[test]
fn cache_revalidates_what_a_session_would() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("gen");
    generated(&root);
    let cache = base.path().join("cache");
    let request = request_without_headers();
    let (schema, _) = load_rules(&root, &request).unwrap();
    let engine = Engine::new(&schema);
    let whole = || json(&engine.validate(&root, &request.options).unwrap());
    let (cached, used) = Session::with_cache(&schema, &root, &request, &cache).unwrap();
    assert_eq!((used.reused, used.ignored.as_deref()), (0, None));
    cached.save_cache(&cache).unwrap();
    let (cached, used) = Session::with_cache(&schema, &root, &request, &cache).unwrap();
    assert_eq!(used.validated, 0, "{used:?}");
    assert_eq!(json(cached.report()), whole());
    cached.save_cache(&cache).unwrap();

    let mut session = Session::new(&schema, &root, &request).unwrap();
    let steps: [(&str, Option<&str>); 5] = [
        (
            "/sub-01/anat/sub-01_T1w.json",
            Some(r#"{"RepetitionTime": "two"}"#),
        ),
        ("/task-rest_bold.json", Some(r#"{"TaskName": "rest"}"#)),
        (
            "/participants.tsv",
            Some("participant_id\tage\nsub-01\t30\n"),
        ),
        ("/sub-02/func/sub-02_task-rest_run-3_bold.nii.gz", Some("x")),
        ("/sub-01/func/sub-01_task-rest_run-2_events.tsv", None),
    ];
    for (rel, content) in steps {
        match content {
            Some(text) => write(&root, rel, text.as_bytes()),
            None => std::fs::remove_file(abs(&root, rel)).unwrap(),
        }
        let Outcome::Updated(delta) = session.update(&[rel]).unwrap() else {
            panic!("{rel}: the rules changed");
        };
        let (cached, used) = Session::with_cache(&schema, &root, &request, &cache).unwrap();
        assert_eq!(used.validated, delta.rechecked.len(), "{rel}: {used:?}");
        if rel.ends_with("_T1w.json") {
            // One leaf sidecar: its own file and the image that inherits it.
            assert_eq!(used.validated, 2, "{rel}: {used:?}");
        }
        assert_eq!(json(cached.report()), whole(), "{rel}");
        assert_eq!(json(session.report()), whole(), "{rel}");
        cached.save_cache(&cache).unwrap();
    }
}

/// The request of these tests: NIfTI headers are not read (the copies' images are
/// placeholders).
fn request_without_headers() -> Request {
    Request {
        options: Options {
            ignore_nifti_headers: true,
            ..Options::default()
        },
        ..Request::default()
    }
}

/// Leaf edits with the later-version notes on (the generated dataset declares an older
/// version than the newest) are patched and still equal a whole run's report, its
/// summary's count of what the newest rules add included.
#[test]
fn leaf_edits_with_later_notes_equal_a_whole_run() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("gen");
    generated(&root);
    let request = Request {
        explain_later: true,
        ..request_without_headers()
    };
    let (schema, _) = load_rules(&root, &request).unwrap();
    let mut session = Session::new(&schema, &root, &request).unwrap();
    let whole = || json(&nidos_validate::validate(&root, &request).unwrap().report);
    assert!(session.report().summary.newest_rules.is_some());
    let leaf = "/sub-01/anat/sub-01_T1w.json";
    for text in [
        r#"{"RepetitionTime": 3}"#,
        r#"{"RepetitionTime": 3, "EchoTime": 0.01}"#,
        r#"{"RepetitionTime": 2}"#,
    ] {
        write(&root, leaf, text.as_bytes());
        let Outcome::Updated(_) = session.update(&[leaf]).unwrap() else {
            panic!("{leaf}: the rules changed");
        };
        let full = nidos_validate::validate(&root, &request).unwrap().report;
        assert_eq!(
            format!("{:?}", session.report().summary.newest_rules),
            format!("{:?}", full.summary.newest_rules),
            "{text}"
        );
        let (ours, theirs) = (json(session.report()), whole());
        assert!(
            ours == theirs,
            "{text}: {}",
            first_difference(&ours, &theirs)
        );
    }
}
