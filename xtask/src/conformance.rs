//! `cargo xtask conformance [--std | --bundled] [--with-hed] [--min-f1 X] [--min-mutations X] [--only NAME]`
//!
//! Validates the datasets of `../shared/conformance` and compares the sets of
//! (code, subCode, severity, location) tuples with the reference validator's reports.
//!
//! - default: the upstream compiled schema on the examples as they are, plus the
//!   mutations; writes `docs/conformance.md`;
//! - `--std`: the bundled rules on the examples converted to the Std brand
//!   (`to_std.py`); writes `docs/conformance-std.md`;
//! - `--bundled`: the bundled rules, no `--schema`, on the examples and the real-world
//!   corpus exactly as published (upstream brand); writes `docs/conformance-bundled.md`.
//!   Differences that a divergence of `docs/divergences.md` explains are listed in
//!   `docs/divergences-setaside.yaml`; the report gives the F1 with and without them,
//!   and `--min-f1` applies to each corpus once they are set aside.
//!
//! HED codes are left out unless `--with-hed`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::tools::build_binary;
use serde::Deserialize;
use serde_json::Value;

use crate::{flag, root, shared};

/// One comparable issue: (code, subCode, severity, location).
type Tuple = (String, String, String, String);

const HED_CODES: &[&str] = &["HED_ERROR", "HED_WARNING"];
const REFERENCE_SCHEMA: &str = "bids-1.11.1-schema-1.2.7.json";
const SETASIDE_FILE: &str = "docs/divergences-setaside.yaml";

/// Which rule set a run uses, and on what.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// The upstream compiled schema on the examples as they are.
    Upstream,
    /// The bundled tree on examples converted with `to_std.py`.
    Std,
    /// The bundled tree, chosen by the dataset itself, on the datasets as they are.
    Bundled,
}

/// A set of datasets with the reference's reports.
struct Corpus {
    name: &'static str,
    datasets: PathBuf,
    expected: PathBuf,
}

fn expected_tuples(report: &Value, with_hed: bool) -> BTreeSet<Tuple> {
    let mut out = BTreeSet::new();
    for issue in report["issues"].as_array().into_iter().flatten() {
        let code = issue["code"].as_str().unwrap_or_default();
        if !with_hed && HED_CODES.contains(&code) {
            continue;
        }
        for loc in issue["locations"].as_array().into_iter().flatten() {
            out.insert((
                code.to_string(),
                issue["subCode"].as_str().unwrap_or_default().to_string(),
                issue["severity"].as_str().unwrap_or_default().to_string(),
                loc.as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    out
}

fn actual_tuples(report: &Value, with_hed: bool) -> BTreeSet<Tuple> {
    let mut out = BTreeSet::new();
    for issue in report["issues"]["issues"].as_array().into_iter().flatten() {
        let code = issue["code"].as_str().unwrap_or_default();
        if !with_hed && HED_CODES.contains(&code) {
            continue;
        }
        out.insert((
            code.to_string(),
            issue["subCode"].as_str().unwrap_or_default().to_string(),
            issue["severity"].as_str().unwrap_or_default().to_string(),
            issue["location"].as_str().unwrap_or_default().to_string(),
        ));
    }
    out
}

fn run_nidos(bin: &Path, dataset: &Path, ignore_headers: bool, mode: Mode) -> Result<Value> {
    let conf = shared().join("conformance");
    let mut cmd = Command::new(bin);
    cmd.arg("validate").arg(dataset).arg("--format").arg("json");
    match mode {
        Mode::Upstream => {
            cmd.arg("--schema")
                .arg(conf.join("schemas").join(REFERENCE_SCHEMA));
        }
        // The reference applied its newest rules (1.11.1) to every dataset, whatever
        // version the dataset declares: compare like with like.
        Mode::Std => {
            cmd.env("NIDOS_SCHEMA_DIR", root().join("schema"))
                .args(["--std-version", "1.11.1"]);
        }
        Mode::Bundled => {
            cmd.env_remove("NIDOS_SCHEMA_DIR")
                .args(["--std-version", "1.11.1"]);
        }
    }
    cmd.arg("--config")
        .arg(conf.join("examples/default-config.json"));
    if ignore_headers {
        cmd.arg("--ignore-nifti-headers");
    }
    let out = cmd.output()?;
    let code = out.status.code().unwrap_or(-1);
    if code != 0 && code != 16 {
        bail!(
            "nidos exited with {code} on {}: {}",
            dataset.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout).with_context(|| format!("report of {}", dataset.display()))
}

#[derive(Default, Clone, Copy)]
struct Score {
    tp: usize,
    fp: usize,
    fn_: usize,
}

impl Score {
    fn add(&mut self, o: Score) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.fn_ += o.fn_;
    }
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
    fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
    fn row(&self) -> String {
        format!(
            "{:.3} | {:.3} | {:.3} | {} | {} | {}",
            self.precision(),
            self.recall(),
            self.f1(),
            self.tp,
            self.fp,
            self.fn_
        )
    }
}

/// A class of differing tuples that a divergence explains.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct SetAside {
    /// The section of `docs/divergences.md` (e.g. "§2").
    divergence: String,
    /// `extra` (only nidos reports it) or `missing` (only the reference does).
    kind: String,
    code: String,
    #[serde(default, rename = "subCode")]
    sub_code: Option<String>,
    #[serde(default)]
    severity: Option<String>,
    /// A location pattern: `*` matches any run of characters.
    #[serde(default)]
    location: Option<String>,
    /// Datasets it applies to (all when absent).
    #[serde(default)]
    datasets: Option<Vec<String>>,
}

fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

impl SetAside {
    fn explains(&self, dataset: &str, extra: bool, t: &Tuple) -> bool {
        (self.kind == "extra") == extra
            && self.code == t.0
            && self.sub_code.as_ref().is_none_or(|s| *s == t.1)
            && self.severity.as_ref().is_none_or(|s| *s == t.2)
            && self.location.as_ref().is_none_or(|p| glob(p, &t.3))
            && self
                .datasets
                .as_ref()
                .is_none_or(|d| d.iter().any(|n| n == dataset))
    }
}

fn load_setasides() -> Result<Vec<SetAside>> {
    let path = root().join(SETASIDE_FILE);
    let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    let list: Vec<SetAside> =
        serde_saphyr::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    for s in &list {
        if s.kind != "extra" && s.kind != "missing" {
            bail!("{}: kind must be extra or missing", path.display());
        }
    }
    Ok(list)
}

/// What one corpus gave.
#[derive(Default)]
struct CorpusResult {
    overall: Score,
    /// With the set-aside differences removed.
    kept: Score,
    per_code: BTreeMap<String, Score>,
    rows: Vec<String>,
    diffs: Vec<String>,
    /// divergence → number of tuples it explains.
    explained: BTreeMap<String, usize>,
    /// Datasets with errors the reference lacks (after set-asides).
    error_violations: Vec<String>,
    /// Datasets with errors the reference lacks only through set-aside tuples.
    explained_violations: Vec<String>,
}

struct Run<'a> {
    bin: &'a Path,
    mode: Mode,
    with_hed: bool,
    only: Option<String>,
    setasides: &'a [SetAside],
}

impl Run<'_> {
    fn corpus(&self, corpus: &Corpus) -> Result<CorpusResult> {
        let conf = shared().join("conformance");
        let std_tmp = std::env::temp_dir().join(format!("nidos-std-{}", std::process::id()));
        let mut names: Vec<String> = std::fs::read_dir(&corpus.expected)?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".json"))
                    .map(str::to_string)
            })
            .collect();
        names.sort();
        let mut res = CorpusResult::default();
        for name in &names {
            if self.only.as_ref().is_some_and(|o| o != name) {
                continue;
            }
            let expected: Value = serde_json::from_str(&std::fs::read_to_string(
                corpus.expected.join(format!("{name}.json")),
            )?)?;
            let want = expected_tuples(&expected, self.with_hed);
            let source = corpus.datasets.join(name);
            let dataset = if self.mode == Mode::Std {
                let out = std_tmp.join(name);
                let status = Command::new("python3")
                    .arg(conf.join("to_std.py"))
                    .arg(&source)
                    .arg(&out)
                    .status()?;
                if !status.success() {
                    bail!("to_std.py failed on {name}");
                }
                out
            } else {
                source
            };
            let report = run_nidos(self.bin, &dataset, name != "synthetic", self.mode)?;
            let got = actual_tuples(&report, self.with_hed);
            let mut score = Score::default();
            let mut kept = Score::default();
            let mut our_kept_errors = 0usize;
            for t in want.union(&got) {
                let entry = res.per_code.entry(t.0.clone()).or_default();
                let (s, extra) = match (want.contains(t), got.contains(t)) {
                    (true, true) => (
                        Score {
                            tp: 1,
                            ..Default::default()
                        },
                        None,
                    ),
                    (true, false) => (
                        Score {
                            fn_: 1,
                            ..Default::default()
                        },
                        Some(false),
                    ),
                    _ => (
                        Score {
                            fp: 1,
                            ..Default::default()
                        },
                        Some(true),
                    ),
                };
                entry.add(s);
                score.add(s);
                let explained = extra.and_then(|extra| {
                    self.setasides
                        .iter()
                        .find(|a| a.explains(name, extra, t))
                        .map(|a| a.divergence.clone())
                });
                match (&explained, extra) {
                    (Some(div), _) => *res.explained.entry(div.clone()).or_default() += 1,
                    (None, _) => {
                        kept.add(s);
                        if got.contains(t) && t.2 == "error" {
                            our_kept_errors += 1;
                        }
                    }
                }
                if let Some(extra) = extra {
                    res.diffs.push(format!(
                        "| {name} | {} | {} | {} | {} | {} | {} |",
                        if extra { "extra" } else { "missing" },
                        t.0,
                        t.1,
                        t.2,
                        t.3,
                        explained.as_deref().unwrap_or("")
                    ));
                }
            }
            let ref_errors = want.iter().filter(|t| t.2 == "error").count();
            let our_errors = got.iter().filter(|t| t.2 == "error").count();
            if ref_errors == 0 && our_errors > 0 {
                if our_kept_errors > 0 {
                    res.error_violations.push(name.clone());
                } else {
                    res.explained_violations.push(name.clone());
                }
            }
            println!(
                "{name:32} F1 {:.3} (set-asides removed {:.3})  tp {}, fp {}, fn {}; errors ref {ref_errors} ours {our_errors}",
                score.f1(),
                kept.f1(),
                score.tp,
                score.fp,
                score.fn_
            );
            res.rows
                .push(format!("| {name} | {} | {:.3} |", score.row(), kept.f1()));
            res.overall.add(score);
            res.kept.add(kept);
        }
        let _ = std::fs::remove_dir_all(&std_tmp);
        Ok(res)
    }
}

pub fn run(args: &[String]) -> Result<()> {
    let conf = shared().join("conformance");
    if !conf.join("expected").is_dir() {
        println!("skipped: {} is absent", conf.display());
        return Ok(());
    }
    let min_f1: f64 = flag(args, "--min-f1")
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(0.0);
    let min_mut: f64 = flag(args, "--min-mutations")
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(0.0);
    let mode = if args.iter().any(|a| a == "--std") {
        Mode::Std
    } else if args.iter().any(|a| a == "--bundled") {
        Mode::Bundled
    } else {
        Mode::Upstream
    };
    let with_hed = args.iter().any(|a| a == "--with-hed");
    let setasides = if mode == Mode::Bundled {
        load_setasides()?
    } else {
        Vec::new()
    };
    let bin = build_binary()?;
    let run = Run {
        bin: &bin,
        mode,
        with_hed,
        only: flag(args, "--only"),
        setasides: &setasides,
    };
    let mut corpora = vec![Corpus {
        name: "examples",
        datasets: conf.join("examples"),
        expected: conf.join("expected"),
    }];
    if mode == Mode::Bundled || args.iter().any(|a| a == "--realworld") {
        let rw = conf.join("realworld");
        if rw.join("expected").is_dir() {
            corpora.push(Corpus {
                name: "realworld",
                datasets: rw.join("datasets"),
                expected: rw.join("expected"),
            });
        } else {
            println!("skipped the real-world corpus: {} is absent", rw.display());
        }
    }
    let mut results = Vec::new();
    for c in &corpora {
        println!("== {}", c.name);
        results.push((c, run.corpus(c)?));
    }
    let run_mutations = run.only.is_none() && mode == Mode::Upstream;
    let (mut_rows, mut_fraction) = if run_mutations {
        mutations(&bin)?
    } else {
        (Vec::new(), 1.0)
    };
    for (c, r) in &results {
        println!(
            "\n{}: precision {:.4}, recall {:.4}, F1 {:.4}; with the set-asides removed F1 {:.4}",
            c.name,
            r.overall.precision(),
            r.overall.recall(),
            r.overall.f1(),
            r.kept.f1()
        );
        if !r.error_violations.is_empty() {
            println!(
                "  datasets with errors the reference lacks (unexplained): {}",
                r.error_violations.join(", ")
            );
        }
    }
    if run_mutations {
        println!("mutations detected {:.1}%", mut_fraction * 100.0);
    }
    if run.only.is_none() {
        let (file, md) = render(
            mode,
            with_hed,
            &results,
            run_mutations,
            mut_fraction,
            &mut_rows,
        );
        std::fs::write(root().join(file), md)?;
    }
    for (c, r) in &results {
        // The bundled run is judged with the documented divergences set aside.
        let f1 = if mode == Mode::Bundled {
            r.kept.f1()
        } else {
            r.overall.f1()
        };
        if f1 < min_f1 {
            bail!("{}: F1 {f1:.4} is below the required {min_f1}", c.name);
        }
        if mode == Mode::Bundled && !r.error_violations.is_empty() {
            bail!(
                "{}: datasets with errors the reference lacks and no divergence explains: {}",
                c.name,
                r.error_violations.join(", ")
            );
        }
    }
    if mut_fraction < min_mut {
        bail!(
            "mutation detection {:.3} is below the required {min_mut}",
            mut_fraction
        );
    }
    Ok(())
}

fn render(
    mode: Mode,
    with_hed: bool,
    results: &[(&Corpus, CorpusResult)],
    run_mutations: bool,
    mut_fraction: f64,
    mut_rows: &[String],
) -> (&'static str, String) {
    let mut md = String::new();
    let (file, title, how) = match mode {
        Mode::Std => (
            "docs/conformance-std.md",
            "Std-brand conformance: the bundled rules against the reference",
            "Produced by `cargo xtask conformance --std` (do not edit by hand). Each example of\n\
             `../shared/conformance/examples` is converted with `to_std.py` and validated with\n\
             the bundled rules at `--std-version 1.11.1` (the reference applied its 1.11.1\n\
             rules to every example, whatever version the example declares), the examples'\n\
             default config and `--ignore-nifti-headers`",
        ),
        Mode::Bundled => (
            "docs/conformance-bundled.md",
            "Real datasets out of the box: the bundled rules against the reference",
            "Produced by `cargo xtask conformance --bundled` (do not edit by hand). Every\n\
             example of `../shared/conformance/examples` and every dataset of\n\
             `../shared/conformance/realworld`, unconverted (they declare `BIDSVersion`), is\n\
             validated with the rules built into the binary and no `--schema`, at\n\
             `--std-version 1.11.1` (the reference applied its 1.11.1 rules to all), the\n\
             examples' default config and `--ignore-nifti-headers`",
        ),
        Mode::Upstream => (
            "docs/conformance.md",
            "Conformance against the reference validator",
            "Produced by `cargo xtask conformance` (do not edit by hand). Each example of\n\
             `../shared/conformance/examples` is validated with the upstream schema\n\
             `bids-1.11.1-schema-1.2.7.json`, the examples' default config and\n\
             `--ignore-nifti-headers`",
        ),
    };
    md.push_str(&format!("# {title}\n\n{how}\n"));
    md.push_str(
        "(headers read for `synthetic`), and the set of (code, subCode, severity, location)\n\
         tuples is compared with the reference report. ",
    );
    if with_hed {
        md.push_str("HED codes are included. ");
    } else {
        md.push_str("HED_ERROR/HED_WARNING are excluded. ");
    }
    md.push_str("Known, deliberate differences: `docs/divergences.md`.\n\n");
    if mode == Mode::Bundled {
        md.push_str(
            "A difference that a divergence of `docs/divergences.md` explains is *set aside*\n\
             (the classes are listed in `docs/divergences-setaside.yaml`); each table gives the\n\
             F1 with every difference and the F1 once the set-aside ones are removed.\n\n",
        );
    }
    for (c, r) in results {
        if results.len() > 1 {
            md.push_str(&format!("## Corpus: {}\n\n", c.name));
        }
        md.push_str(&format!(
            "**Overall: precision {:.4}, recall {:.4}, F1 {:.4}** (tp {}, fp {}, fn {}).",
            r.overall.precision(),
            r.overall.recall(),
            r.overall.f1(),
            r.overall.tp,
            r.overall.fp,
            r.overall.fn_
        ));
        if mode == Mode::Bundled {
            md.push_str(&format!(
                " **With the set-aside differences removed: F1 {:.4}** (tp {}, fp {}, fn {}).",
                r.kept.f1(),
                r.kept.tp,
                r.kept.fp,
                r.kept.fn_
            ));
        }
        md.push_str("\n\n");
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        md.push_str(&format!(
            "Datasets with zero reference errors but nidos errors that no divergence explains: {}.\n",
            list(&r.error_violations)
        ));
        if mode == Mode::Bundled {
            md.push_str(&format!(
                "Datasets with zero reference errors whose nidos errors a divergence explains: {}.\n",
                list(&r.explained_violations)
            ));
        }
        md.push('\n');
        if !r.explained.is_empty() {
            md.push_str(
                "Set-aside differences by divergence:\n\n| divergence | tuples |\n|---|---|\n",
            );
            for (d, n) in &r.explained {
                md.push_str(&format!("| {d} | {n} |\n"));
            }
            md.push('\n');
        }
        if run_mutations {
            md.push_str(&format!(
                "**Mutations detected with the expected codes: {:.1}%**\n\n",
                mut_fraction * 100.0
            ));
        }
        md.push_str("### Per dataset\n\n| dataset | precision | recall | F1 | tp | fp | fn | F1 (set-asides removed) |\n|---|---|---|---|---|---|---|---|\n");
        md.push_str(&r.rows.join("\n"));
        md.push_str("\n\n### Per code\n\n| code | precision | recall | F1 | tp | fp | fn |\n|---|---|---|---|---|---|---|\n");
        for (code, s) in &r.per_code {
            md.push_str(&format!("| {code} | {} |\n", s.row()));
        }
        md.push_str("\n### Differing tuples\n\n| dataset | kind | code | subCode | severity | location | set aside by |\n|---|---|---|---|---|---|---|\n");
        let shown = r.diffs.len().min(400);
        md.push_str(&r.diffs[..shown].join("\n"));
        if r.diffs.len() > shown {
            md.push_str(&format!(
                "\n\n… and {} more differing tuples.",
                r.diffs.len() - shown
            ));
        }
        md.push_str("\n\n");
    }
    if run_mutations {
        md.push_str("## Mutations\n\n| mutation | expected codes | detected | missing |\n|---|---|---|---|\n");
        md.push_str(&mut_rows.join("\n"));
        md.push('\n');
    }
    (file, md)
}

fn mutations(bin: &Path) -> Result<(Vec<String>, f64)> {
    let conf = shared().join("conformance");
    let list: Value = serde_json::from_str(&std::fs::read_to_string(conf.join("mutations.json"))?)?;
    let tmp = std::env::temp_dir().join(format!("nidos-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let mut rows = Vec::new();
    let mut detected = 0usize;
    let mut total = 0usize;
    for m in list.as_array().into_iter().flatten() {
        let name = m["name"].as_str().unwrap_or_default();
        let base = m["base"].as_str().unwrap_or_default();
        let out = tmp.join(name);
        let status = Command::new("python3")
            .arg(conf.join("mutate.py"))
            .arg(conf.join("examples").join(base))
            .arg(&out)
            .arg(name)
            .status()?;
        total += 1;
        if !status.success() {
            rows.push(format!("| {name} | | mutate.py failed | |"));
            continue;
        }
        let ignore = m["ignore_nifti_headers"].as_bool().unwrap_or(true);
        let want: Vec<&str> = m["expected_new_codes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let (ok, missing) = match run_nidos(bin, &out, ignore, Mode::Upstream) {
            Ok(report) => {
                let got: BTreeSet<String> = actual_tuples(&report, false)
                    .into_iter()
                    .map(|t| t.0)
                    .collect();
                let missing: Vec<&str> =
                    want.iter().copied().filter(|c| !got.contains(*c)).collect();
                (missing.is_empty(), missing.join(", "))
            }
            Err(e) => (false, format!("run failed: {e}")),
        };
        if ok {
            detected += 1;
        }
        println!(
            "mutation {name:36} {}",
            if ok { "detected" } else { "MISSED" }
        );
        rows.push(format!(
            "| {name} | {} | {} | {missing} |",
            want.join(", "),
            if ok { "yes" } else { "no" }
        ));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok((
        rows,
        if total == 0 {
            1.0
        } else {
            detected as f64 / total as f64
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob(
            "/sub-*/anat/*.nii.gz",
            "/sub-01/anat/sub-01_T1w.nii.gz"
        ));
        assert!(!glob("/sub-*/anat/*.nii.gz", "/sub-01/func/x.nii.gz"));
        assert!(glob("/x", "/x"));
        assert!(glob("*", ""));
    }

    #[test]
    fn set_aside_matches_kind_and_fields() {
        let a = SetAside {
            divergence: "§2".into(),
            kind: "extra".into(),
            code: "B0_FIELD_SOURCE_RECOMMENDED".into(),
            sub_code: None,
            severity: None,
            location: Some("/sub-*".into()),
            datasets: Some(vec!["ds1".into()]),
        };
        let t = (
            "B0_FIELD_SOURCE_RECOMMENDED".to_string(),
            "B0FieldSource".to_string(),
            "warning".to_string(),
            "/sub-01/fmap/x.json".to_string(),
        );
        assert!(a.explains("ds1", true, &t));
        assert!(!a.explains("ds1", false, &t));
        assert!(!a.explains("ds2", true, &t));
    }
}
