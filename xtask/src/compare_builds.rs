//! `cargo xtask compare-builds [--base REV | --base-binary PATH] [--bench SUBJECTS]
//! [--only NAME] [--formats text,json,json_pp,sarif,html]`: are the reports of this checkout byte-identical to those of another
//! commit (or of a `nidos` binary already built from it)?
//!
//! Builds `REV` (default `HEAD`, so uncommitted changes are compared with the last
//! commit) in a detached worktree under `target/compare-base` with its own target
//! directory, builds this checkout, then validates every example and real-world dataset
//! of `../shared/conformance` (and, with `--bench N`, the synthetic bench datasets of N
//! subjects for both brands) with both binaries, in the text and JSON formats, with the
//! bundled rules. Prints each dataset whose reports differ with the first differing
//! line, and fails when any differs. Refactoring steps use it to show behaviour did not
//! change.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{flag, root, shared};

/// The report formats compared unless `--formats` names others.
const FORMATS: &[&str] = &["text", "json"];

pub fn run(args: &[String]) -> Result<()> {
    let base_rev = flag(args, "--base").unwrap_or_else(|| "HEAD".to_owned());
    let only = flag(args, "--only");
    let formats: Vec<String> = match flag(args, "--formats") {
        Some(list) => list.split(',').map(str::to_owned).collect(),
        None => FORMATS.iter().map(|f| f.to_string()).collect(),
    };
    let bench: Option<u32> = match flag(args, "--bench") {
        Some(n) => Some(n.parse().with_context(|| format!("--bench {n}"))?),
        None => None,
    };
    let (base, base_rev) = match flag(args, "--base-binary") {
        Some(bin) => (PathBuf::from(&bin), bin),
        None => (build_base(&base_rev)?, base_rev),
    };
    let current = crate::tools::build_binary()?;
    let mut datasets = corpus()?;
    if let Some(subjects) = bench {
        for brand in ["Std", "BIDS"] {
            datasets.push(crate::bench::dataset(brand, subjects)?.0);
        }
    }
    if let Some(name) = &only {
        datasets.retain(|d| d.file_name().is_some_and(|n| n.to_string_lossy() == *name));
    }
    if datasets.is_empty() {
        bail!("no datasets to compare (is ../shared/conformance present?)");
    }
    let mut differ = 0;
    for ds in &datasets {
        for format in &formats {
            let a = report(&base, ds, format)?;
            let b = report(&current, ds, format)?;
            if a != b {
                differ += 1;
                println!(
                    "DIFFERS {} ({format}): {}",
                    ds.display(),
                    first_difference(&a, &b)
                );
            }
        }
    }
    println!(
        "compared {} datasets × {} formats against {base_rev}: {differ} differ",
        datasets.len(),
        formats.len()
    );
    if differ > 0 {
        bail!("{differ} reports differ from {base_rev}'s");
    }
    Ok(())
}

/// Every dataset of the example and real-world corpora.
fn corpus() -> Result<Vec<PathBuf>> {
    let conf = shared().join("conformance");
    let mut out = Vec::new();
    for part in ["examples", "realworld/datasets"] {
        let dir = conf.join(part);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("dataset_description.json").is_file())
            .collect();
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// Builds `rev` in a detached worktree; returns its binary.
fn build_base(rev: &str) -> Result<PathBuf> {
    let sha = git(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])?;
    let base = root().join("target/compare-base");
    let tree = base.join("tree");
    if tree.exists() {
        git(&[
            "-C",
            &tree.to_string_lossy(),
            "checkout",
            "--quiet",
            "--detach",
            &sha,
        ])?;
    } else {
        std::fs::create_dir_all(&base)?;
        git(&[
            "worktree",
            "add",
            "--quiet",
            "--detach",
            &tree.to_string_lossy(),
            &sha,
        ])?;
    }
    eprintln!("building {rev} ({}) …", &sha[..sha.len().min(12)]);
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "-p", "nidos-cli"])
        .env("CARGO_TARGET_DIR", base.join("target"))
        .current_dir(&tree)
        .status()?;
    if !status.success() {
        bail!("building {rev} failed");
    }
    Ok(base.join("target/release/nidos"))
}

fn git(args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root())
        .output()
        .context("running git")?;
    if !out.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The report of `bin` on `dataset` in `format` (stdout and exit code).
fn report(bin: &Path, dataset: &Path, format: &str) -> Result<Vec<u8>> {
    let out = Command::new(bin)
        .arg("validate")
        .arg(dataset)
        .args(["--format", format])
        .env_remove("NIDOS_SCHEMA_DIR")
        .env("NO_COLOR", "1")
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    let mut bytes = out.stdout;
    bytes.extend_from_slice(format!("\nexit: {:?}\n", out.status.code()).as_bytes());
    Ok(bytes)
}

/// "line N: A | B" for the first line where `a` and `b` differ.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let mut la = a.lines();
    let mut lb = b.lines();
    let mut n = 0;
    loop {
        n += 1;
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                let cut = |s: Option<&str>| {
                    s.map_or("<end>".to_owned(), |s| s.chars().take(100).collect())
                };
                return format!("line {n}: {} | {}", cut(x), cut(y));
            }
        }
    }
}
