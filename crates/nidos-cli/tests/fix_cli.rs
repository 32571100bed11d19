//! `nidos fix`, driven by the cases of `tests/fix/`: each directory holds a `dataset/`
//! that raises one issue, a `case.json` and the `expected.diff` that `nidos fix` must
//! print. For each case, on a copy of the dataset:
//!
//! 1. `nidos validate` reports the issue (`code`, at `location`, with `subCode` when
//!    given), marked `fixable` (not with `"fixable": false`, a suggestion only), unless
//!    `"reported": false` (an issue the validator does not raise: then nothing changes);
//! 2. `nidos fix` prints exactly `expected.diff` and writes nothing; when `manual` is
//!    given, standard error lists it under what needs a person;
//! 3. `nidos fix --apply` succeeds, changes only JSON and TSV files (data files and
//!    links byte-identical), and leaves the tree as the diff said;
//! 4. `nidos validate` no longer reports the issue (still reports it with
//!    `"unchanged": true`, a suggestion-only fix);
//! 5. a second `nidos fix` prints nothing: the fix is idempotent;
//! 6. the SARIF report's result for the issue carries `fixes` whose replacements, applied
//!    to the untouched dataset, give the files `--apply` wrote (for a fixable issue).
//!
//! `case.json` may add `"only": [codes]` (passed as `--only`) and `"args": [...]`.
//! Set `NIDOS_BLESS=1` to rewrite the `expected.diff` files from the current output.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fix")
}

/// `nidos <command> DIR <options>` (the dataset first: `--only` takes several values).
fn nidos(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nidos"))
        .arg(args[0])
        .arg(dir)
        .args(&args[1..])
        .output()
        .unwrap()
}

/// Every file and link under `root`: contents, or `-> target` for a link.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", t.display()).into_bytes());
            } else if meta.is_dir() {
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Copies a tree, links as links.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&p).unwrap(), &dest).unwrap();
        } else if meta.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The case's issue as `nidos validate` reports it, if it does.
fn reported_issue(dir: &Path, case: &Value, args: &[String]) -> Option<Value> {
    let mut a = vec!["validate", "--format", "json"];
    a.extend(args.iter().map(String::as_str));
    let out = nidos(&a, dir);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let (code, location, sub) = (
        str_of(case, "code"),
        str_of(case, "location"),
        str_of(case, "subCode"),
    );
    report["issues"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| {
            str_of(i, "code") == code
                && (location.is_empty() || str_of(i, "location") == location)
                && (sub.is_empty() || str_of(i, "subCode") == sub)
        })
        .cloned()
}

fn reports(dir: &Path, case: &Value, args: &[String]) -> bool {
    reported_issue(dir, case, args).is_some()
}

fn is_metadata(path: &str) -> bool {
    path.ends_with(".json") || path.ends_with(".tsv")
}

/// Problems with one case (empty when it passes).
/// The lines of fix's standard error that summarise the plan: what needs a person and
/// the count of other issues.
fn summary_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            l.starts_with("  ") || l.contains("needs a person") || l.contains("other issue")
        })
        .collect()
}

fn check_case(case_dir: &Path) -> Vec<String> {
    let name = case_dir.file_name().unwrap().to_string_lossy().into_owned();
    let case: Value =
        serde_json::from_str(&std::fs::read_to_string(case_dir.join("case.json")).unwrap())
            .unwrap();
    let args: Vec<String> = case
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let mut fix_args = args.clone();
    if let Some(only) = case.get("only").and_then(Value::as_array) {
        fix_args.push("--only".into());
        fix_args.extend(only.iter().filter_map(|v| v.as_str().map(str::to_owned)));
    }
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    copy_tree(&case_dir.join("dataset"), &ds);
    let mut problems = Vec::new();
    let reported = case
        .get("reported")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let unchanged = case
        .get("unchanged")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if reported {
        // The report marks the issue fixable unless its fix is a suggestion only.
        let fixable = case.get("fixable").and_then(Value::as_bool).unwrap_or(true);
        match reported_issue(&ds, &case, &args) {
            None => problems.push(format!("{name}: the dataset does not raise the issue")),
            Some(issue) => {
                if issue
                    .get("fixable")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
                    != fixable
                {
                    problems.push(format!(
                        "{name}: the issue is not marked fixable: {fixable}"
                    ));
                }
            }
        }
    }

    // Dry run: the diff, nothing written.
    let before = snapshot(&ds);
    let mut a: Vec<&str> = vec!["fix"];
    a.extend(fix_args.iter().map(String::as_str));
    let out = nidos(&a, &ds);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        problems.push(format!("{name}: nidos fix failed: {stderr}"));
        return problems;
    }
    let expected_path = case_dir.join("expected.diff");
    if std::env::var_os("NIDOS_BLESS").is_some() {
        std::fs::write(&expected_path, &stdout).unwrap();
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if stdout != expected {
        problems.push(format!(
            "{name}: the diff differs from expected.diff:\n--- got\n{stdout}\n--- expected\n{expected}"
        ));
    }
    if snapshot(&ds) != before {
        problems.push(format!("{name}: the dry run changed the dataset"));
    }
    if let Some(manual) = case.get("manual").and_then(Value::as_str) {
        if !stderr.contains("needs a person") || !stderr.contains(manual) {
            problems.push(format!(
                "{name}: standard error does not list {manual:?} as needing a person:\n{stderr}"
            ));
        }
    }

    // The SARIF fixes, applied to a copy of the untouched dataset (compared below).
    let sarif_applied = if reported && !unchanged {
        sarif_fixes_applied(&ds, &case, &args, &mut problems, &name)
    } else {
        None
    };

    // Apply: only metadata changes.
    a.push("--apply");
    let out = nidos(&a, &ds);
    if !out.status.success() {
        problems.push(format!(
            "{name}: nidos fix --apply failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
        return problems;
    }
    // Both runs plan on the same dataset: what they leave to a person and the count of
    // other issues are the same (issue 38).
    let applied_err = String::from_utf8_lossy(&out.stderr).into_owned();
    if summary_lines(&applied_err) != summary_lines(&stderr) {
        problems.push(format!(
            "{name}: the dry run and --apply summarise differently:\n--- dry run\n{stderr}\n--- apply\n{applied_err}"
        ));
    }
    let after = snapshot(&ds);
    for (path, bytes) in &before {
        if !is_metadata(path) && after.get(path) != Some(bytes) {
            problems.push(format!(
                "{name}: --apply changed the data file or link {path}"
            ));
        }
    }
    for path in after.keys() {
        if !before.contains_key(path) && !is_metadata(path) {
            problems.push(format!("{name}: --apply created {path}"));
        }
    }
    if unchanged != (after == before) {
        problems.push(format!(
            "{name}: --apply {} the dataset",
            if unchanged {
                "changed"
            } else {
                "did not change"
            }
        ));
    }
    if reported && reports(&ds, &case, &args) != unchanged {
        problems.push(format!(
            "{name}: after --apply the issue is {}reported",
            if unchanged { "no longer " } else { "still " }
        ));
    }
    if let Some(files) = sarif_applied {
        for (path, bytes) in &files {
            if after.get(path) != Some(bytes) {
                problems.push(format!(
                    "{name}: the SARIF fix of {path} does not give what --apply wrote:\n{}",
                    String::from_utf8_lossy(bytes)
                ));
            }
        }
    }
    // Idempotent.
    a.pop();
    let out = nidos(&a, &ds);
    if !out.stdout.is_empty() {
        problems.push(format!(
            "{name}: a second run still plans changes:\n{}",
            String::from_utf8_lossy(&out.stdout)
        ));
    }
    problems
}

#[test]
fn every_fix_case() {
    support::check_every_case(&cases_dir(), "case.json", check_case);
}

/// A dataset whose description has a bare DOI (one fix to make), plus a data file.
fn small_dataset(root: &Path) {
    std::fs::create_dir_all(root.join("sub-01/anat")).unwrap();
    std::fs::write(
        root.join("dataset_description.json"),
        "{\"Name\": \"links\", \"StdVersion\": \"1.11.1\", \"Authors\": [\"A\"], \"DatasetDOI\": \"10.1/x\"}\n",
    )
    .unwrap();
    std::fs::write(root.join("README.md"), "# links\n\nA test dataset.\n").unwrap();
    std::fs::write(
        root.join("sub-01/anat/sub-01_T1w.nii.gz"),
        b"\x1f\x8b not really",
    )
    .unwrap();
}

/// Sidecars that are links (an annexed file inside the dataset, a file outside it) are
/// reported and never written; data files and links stay byte-identical.
#[test]
fn links_and_data_files_are_never_written() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    small_dataset(&ds);
    let deprecated = "\u{feff}{\"BasedOn\": \"sub-01/anat/sub-01_T1w.nii.gz\"}";
    let annexed = ds.join(".git/annex/objects/ab/sidecar.json");
    std::fs::create_dir_all(annexed.parent().unwrap()).unwrap();
    std::fs::write(&annexed, deprecated).unwrap();
    std::os::unix::fs::symlink(
        "../../.git/annex/objects/ab/sidecar.json",
        ds.join("sub-01/anat/sub-01_T1w.json"),
    )
    .unwrap();
    let outside = tmp.path().join("outside.json");
    std::fs::write(&outside, deprecated).unwrap();
    std::fs::write(ds.join("sub-01/anat/sub-01_T2w.nii.gz"), b"data").unwrap();
    std::os::unix::fs::symlink(&outside, ds.join("sub-01/anat/sub-01_T2w.json")).unwrap();

    let before = snapshot(&ds);
    let out = nidos(&["fix", "--apply"], &ds);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("symbolic link"),
        "links are not reported:\n{stderr}"
    );
    let after = snapshot(&ds);
    for (path, bytes) in &before {
        if path != "dataset_description.json" {
            assert_eq!(after.get(path), Some(bytes), "{path} changed");
        }
    }
    assert_ne!(
        after.get("dataset_description.json"),
        before.get("dataset_description.json"),
        "the ordinary fix was not applied"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), deprecated);
}

/// A read-only dataset: a clear error, and nothing written.
#[test]
fn read_only_dataset_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    small_dataset(&ds);
    let set_mode = |file_mode: u32, dir_mode: u32| {
        for p in [
            "dataset_description.json",
            "README.md",
            "sub-01/anat/sub-01_T1w.nii.gz",
        ] {
            std::fs::set_permissions(ds.join(p), std::fs::Permissions::from_mode(file_mode))
                .unwrap();
        }
        for d in ["sub-01/anat", "sub-01", ""] {
            std::fs::set_permissions(ds.join(d), std::fs::Permissions::from_mode(dir_mode))
                .unwrap();
        }
    };
    set_mode(0o444, 0o555);
    let before = snapshot(&ds);
    let out = nidos(&["fix", "--apply"], &ds);
    let after = snapshot(&ds);
    set_mode(0o644, 0o755);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("read-only"), "{stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert_eq!(before, after);
}

/// The files the SARIF `fixes` of the case's issue change, applied to their current
/// content (dataset-relative path → new bytes); `None` (with a problem noted) when the
/// result or its fixes are missing or malformed.
fn sarif_fixes_applied(
    ds: &Path,
    case: &Value,
    args: &[String],
    problems: &mut Vec<String>,
    name: &str,
) -> Option<BTreeMap<String, Vec<u8>>> {
    let mut a = vec!["validate", "--format", "sarif"];
    a.extend(args.iter().map(String::as_str));
    let out = nidos(&a, ds);
    let log: Value = serde_json::from_slice(&out.stdout).ok()?;
    let (code, location) = (str_of(case, "code"), str_of(case, "location"));
    let result = log["runs"][0]["results"].as_array()?.iter().find(|r| {
        let id = str_of(r, "ruleId");
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap_or("");
        (id == code || id.starts_with(&format!("{code}/")))
            && (location.is_empty() || uri == location.trim_start_matches('/'))
    });
    let Some(fixes) = result
        .and_then(|r| r.get("fixes"))
        .and_then(Value::as_array)
    else {
        problems.push(format!("{name}: the SARIF result has no fixes"));
        return None;
    };
    let mut files = BTreeMap::new();
    for fix in fixes {
        for change in fix["artifactChanges"].as_array().into_iter().flatten() {
            let rel = str_of(&change["artifactLocation"], "uri").to_owned();
            let mut bytes = std::fs::read(ds.join(&rel)).unwrap_or_default();
            // Every region is a region of the unmodified file, in order, none overlapping:
            // applied from the last, each leaves the offsets of those before it valid.
            let mut regions = Vec::new();
            for r in change["replacements"].as_array().into_iter().flatten() {
                let offset = r["deletedRegion"]["byteOffset"].as_u64()? as usize;
                let length = r["deletedRegion"]["byteLength"].as_u64()? as usize;
                let text = r["insertedContent"]["text"].as_str()?;
                regions.push((offset, length, text));
            }
            if regions.windows(2).any(|w| w[0].0 + w[0].1 > w[1].0) {
                problems.push(format!("{name}: replacements out of order or overlapping"));
            }
            for (offset, length, text) in regions.into_iter().rev() {
                bytes.splice(offset..offset + length, text.bytes());
            }
            files.insert(rel, bytes);
        }
    }
    if files.is_empty() {
        problems.push(format!("{name}: the SARIF fixes change no file"));
    }
    Some(files)
}
