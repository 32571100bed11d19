//! `nidos fix` on every example and real-world dataset of `../shared/conformance` (issue
//! 40), each on a copy: every change `fix --apply` writes answers one issue of the
//! `validate` report on the same copy (same code, at the place the report names, marked
//! `fixable`); the number of issues `validate` counts as repairable is the number fix
//! answers; after `--apply` those issues are gone and no new issue appears; a second run
//! plans nothing. Ignored, with a message, when `../shared` is absent. `/work/shared`
//! is only read: each dataset is copied (files over 1 MiB as their first MiB, at their
//! full length, sparse) into a temporary directory.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_nidos");
const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance");
const PREFIX: u64 = 1 << 20;

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let p = e?.path();
        let name = p.file_name().unwrap_or_default();
        if name == ".git" {
            continue;
        }
        let dest = to.join(name);
        let meta = std::fs::symlink_metadata(&p)?;
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&p)?, &dest)?;
        } else if meta.is_dir() {
            copy_tree(&p, &dest)?;
        } else if meta.is_file() {
            let mut src = std::fs::File::open(&p)?;
            let mut out = std::fs::File::create(&dest)?;
            std::io::copy(&mut (&mut src).take(PREFIX), &mut out)?;
            if meta.len() > PREFIX {
                out.set_len(meta.len())?;
            }
        }
    }
    Ok(())
}

fn nidos(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env_remove("NIDOS_SCHEMA_DIR")
        .env("NIDOS_CACHE_DIR", cwd.join("cache"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run nidos")
}

/// (code, location, sub-code, fixable) of every issue.
type Issue = (String, String, String, bool);

fn issues(dir: &Path) -> Result<Vec<Issue>, String> {
    let out = nidos(&["validate", "ds", "--format", "json"], dir);
    let report: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    Ok(report["issues"]["issues"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|i| {
                    (
                        s(i, "code"),
                        s(i, "location"),
                        s(i, "subCode"),
                        i.get("fixable").and_then(Value::as_bool).unwrap_or(false),
                    )
                })
                .collect()
        })
        .unwrap_or_default())
}

/// (code, where the issue is) of each `fixed CODE PATH: what[ (issue at ORIGIN)]` line.
fn fixed(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("fixed ")?;
            let (code, rest) = rest.split_once(' ')?;
            let (path, what) = rest.split_once(": ")?;
            let origin = what
                .rsplit_once(" (issue at ")
                .and_then(|(_, o)| o.strip_suffix(')'))
                .unwrap_or(path);
            Some((code.to_owned(), origin.to_owned()))
        })
        .collect()
}

fn check(dataset: &Path) -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = tmp.path();
    copy_tree(dataset, &dir.join("ds")).map_err(|e| format!("copying: {e}"))?;
    let before = issues(dir)?;
    let out = nidos(&["fix", "ds", "--apply"], dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("fix --apply failed:\n{stderr}").into());
    }
    let mut wrong = Vec::new();
    let answered: BTreeSet<(String, String)> = fixed(&stdout).into_iter().collect();
    for (code, origin) in &answered {
        if !before
            .iter()
            .any(|(c, l, _, fixable)| c == code && l == origin && *fixable)
        {
            wrong.push(format!(
                "fix changed something for {code} at {origin}, which validate does not report as fixable"
            ));
        }
    }
    let repairable: BTreeSet<(&str, &str)> = before
        .iter()
        .filter(|i| i.3)
        .map(|(c, l, _, _)| (c.as_str(), l.as_str()))
        .collect();
    if repairable.len() != answered.len() {
        wrong.push(format!(
            "validate counts {} issue(s) as repairable, fix answered {}: {:?} vs {:?}",
            repairable.len(),
            answered.len(),
            repairable,
            answered
        ));
    }
    let after = issues(dir)?;
    let key = |i: &Issue| (i.0.clone(), i.1.clone(), i.2.clone());
    let old: BTreeSet<_> = before.iter().map(key).collect();
    for i in &after {
        if answered.contains(&(i.0.clone(), i.1.clone())) {
            wrong.push(format!(
                "after --apply, {} at {} is still reported",
                i.0, i.1
            ));
        }
        if !old.contains(&key(i)) {
            wrong.push(format!(
                "after --apply, a new issue: {} {} at {}",
                i.0, i.2, i.1
            ));
        }
    }
    let again = nidos(&["fix", "ds"], dir);
    if !again.stdout.is_empty() {
        wrong.push(format!(
            "a second run still plans changes:\n{}",
            String::from_utf8_lossy(&again.stdout)
        ));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let shared = PathBuf::from(SHARED);
    let mut trials = Vec::new();
    for (kind, sub) in [("example", "examples"), ("realworld", "realworld/datasets")] {
        let Ok(entries) = std::fs::read_dir(shared.join(sub)) else {
            trials.push(
                Trial::test(
                    format!("{kind}: ../shared/conformance/{sub} is absent"),
                    || Ok(()),
                )
                .with_ignored_flag(true),
            );
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for d in dirs {
            let name = format!(
                "{kind}::{}",
                d.file_name().unwrap_or_default().to_string_lossy()
            );
            trials.push(Trial::test(name, move || check(&d)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
