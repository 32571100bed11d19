//! `cargo xtask`: project chores.
//!
//! - `cargo xtask conformance [--min-f1 X] [--min-mutations X] [--only NAME]`: validates every
//!   example of `../shared/conformance` with the upstream schema and compares the issue sets
//!   with the reference reports; applies every mutation; writes `docs/conformance.md`.

mod bench;
mod hed_import;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("conformance") => conformance(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("hed-import") => hed_import::run(&args[1..]),
        _ => bail!(
            "usage: cargo xtask conformance [--std] [--min-f1 X] [--min-mutations X] [--only NAME] | bench | hed-import SCHEMA.xml [-o FILE]"
        ),
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shared() -> PathBuf {
    root().join("../shared")
}

/// One comparable issue: (code, subCode, severity, location).
type Tuple = (String, String, String, String);

const EXCLUDED: &[&str] = &["HED_ERROR", "HED_WARNING"];
const REFERENCE_SCHEMA: &str = "bids-1.11.1-schema-1.2.7.json";

fn expected_tuples(report: &Value) -> BTreeSet<Tuple> {
    let mut out = BTreeSet::new();
    for issue in report["issues"].as_array().into_iter().flatten() {
        let code = issue["code"].as_str().unwrap_or_default();
        if EXCLUDED.contains(&code) {
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

fn actual_tuples(report: &Value) -> BTreeSet<Tuple> {
    let mut out = BTreeSet::new();
    for issue in report["issues"]["issues"].as_array().into_iter().flatten() {
        let code = issue["code"].as_str().unwrap_or_default();
        if EXCLUDED.contains(&code) {
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

fn build_binary() -> Result<PathBuf> {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "-p", "nidos-cli"])
        .current_dir(root())
        .status()?;
    if !status.success() {
        bail!("building nidos failed");
    }
    Ok(root().join("target/release/nidos"))
}

/// Which rule set a conformance run uses.
#[derive(Clone, Copy, PartialEq)]
enum Brand {
    /// The upstream compiled schema on the examples as they are.
    Upstream,
    /// The bundled Std tree on examples converted with `to_std.py`.
    Std,
}

fn run_nidos(bin: &Path, dataset: &Path, ignore_headers: bool, brand: Brand) -> Result<Value> {
    let conf = shared().join("conformance");
    let mut cmd = Command::new(bin);
    cmd.arg("validate").arg(dataset).arg("--format").arg("json");
    if brand == Brand::Upstream {
        cmd.arg("--schema")
            .arg(conf.join("schemas").join(REFERENCE_SCHEMA));
    } else {
        // The reference applied its newest rules (1.11.1) to every example, whatever
        // version the example declares: compare like with like.
        cmd.env("NIDOS_SCHEMA_DIR", root().join("schema"))
            .args(["--std-version", "1.11.1"]);
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
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn conformance(args: &[String]) -> Result<()> {
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
    let only = flag(args, "--only");
    let brand = if args.iter().any(|a| a == "--std") {
        Brand::Std
    } else {
        Brand::Upstream
    };
    let bin = build_binary()?;
    let std_tmp = std::env::temp_dir().join(format!("nidos-std-{}", std::process::id()));

    let mut names: Vec<String> = std::fs::read_dir(conf.join("expected"))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    let mut overall = Score::default();
    let mut per_code: BTreeMap<String, Score> = BTreeMap::new();
    let mut rows = Vec::new();
    let mut diffs = Vec::new();
    let mut zero_error_violations = Vec::new();
    for name in &names {
        if only.as_ref().is_some_and(|o| o != name) {
            continue;
        }
        let expected: Value = serde_json::from_str(&std::fs::read_to_string(
            conf.join("expected").join(format!("{name}.json")),
        )?)?;
        let want = expected_tuples(&expected);
        let source = conf.join("examples").join(name);
        let dataset = match brand {
            Brand::Upstream => source,
            Brand::Std => {
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
            }
        };
        let report = run_nidos(&bin, &dataset, name != "synthetic", brand)?;
        let got = actual_tuples(&report);
        let mut score = Score::default();
        for t in want.union(&got) {
            let entry = per_code.entry(t.0.clone()).or_default();
            let s = match (want.contains(t), got.contains(t)) {
                (true, true) => Score {
                    tp: 1,
                    ..Default::default()
                },
                (true, false) => {
                    diffs.push(format!(
                        "| {name} | missing | {} | {} | {} | {} |",
                        t.0, t.1, t.2, t.3
                    ));
                    Score {
                        fn_: 1,
                        ..Default::default()
                    }
                }
                _ => {
                    diffs.push(format!(
                        "| {name} | extra | {} | {} | {} | {} |",
                        t.0, t.1, t.2, t.3
                    ));
                    Score {
                        fp: 1,
                        ..Default::default()
                    }
                }
            };
            entry.add(s);
            score.add(s);
        }
        let ref_errors = want.iter().filter(|t| t.2 == "error").count();
        let our_errors = got.iter().filter(|t| t.2 == "error").count();
        if ref_errors == 0 && our_errors > 0 {
            zero_error_violations.push(name.clone());
        }
        println!(
            "{name:32} P {:.3} R {:.3} F1 {:.3}  (tp {}, fp {}, fn {}; errors ref {ref_errors} ours {our_errors})",
            score.precision(),
            score.recall(),
            score.f1(),
            score.tp,
            score.fp,
            score.fn_
        );
        rows.push(format!(
            "| {name} | {:.3} | {:.3} | {:.3} | {} | {} | {} |",
            score.precision(),
            score.recall(),
            score.f1(),
            score.tp,
            score.fp,
            score.fn_
        ));
        overall.add(score);
    }

    let _ = std::fs::remove_dir_all(&std_tmp);
    let run_mutations = only.is_none() && brand == Brand::Upstream;
    let (mut_rows, mut_fraction) = if run_mutations {
        mutations(&bin)?
    } else {
        (Vec::new(), 1.0)
    };

    println!(
        "\noverall: precision {:.4}, recall {:.4}, F1 {:.4}; mutations detected {:.1}%",
        overall.precision(),
        overall.recall(),
        overall.f1(),
        mut_fraction * 100.0
    );
    if !zero_error_violations.is_empty() {
        println!(
            "examples with zero reference errors where nidos reports errors: {}",
            zero_error_violations.join(", ")
        );
    }
    if only.is_none() {
        let mut md = String::new();
        if brand == Brand::Std {
            md.push_str("# Std-brand conformance: the bundled rules against the reference\n\n");
            md.push_str("Produced by `cargo xtask conformance --std` (do not edit by hand). Each example of\n");
            md.push_str("`../shared/conformance/examples` is converted with `to_std.py` and validated with\n");
            md.push_str("the bundled `schema/` tree at `--std-version 1.11.1` (the reference applied its 1.11.1\n");
            md.push_str(
                "rules to every example, whatever version the example declares), the examples'\n",
            );
            md.push_str("default config and `--ignore-nifti-headers`\n");
        } else {
            md.push_str("# Conformance against the reference validator\n\n");
            md.push_str(
                "Produced by `cargo xtask conformance` (do not edit by hand). Each example of\n",
            );
            md.push_str("`../shared/conformance/examples` is validated with the upstream schema\n");
            md.push_str(&format!(
                "`{REFERENCE_SCHEMA}`, the examples' default config and `--ignore-nifti-headers`\n"
            ));
        }
        md.push_str(
            "(headers read for `synthetic`), and the set of (code, subCode, severity, location)\n",
        );
        md.push_str(
            "tuples is compared with the reference report. HED_ERROR/HED_WARNING are excluded\n",
        );
        md.push_str(
            "(no HED validation yet). Known, deliberate differences: `docs/divergences.md`.\n\n",
        );
        md.push_str(&format!(
            "**Overall: precision {:.4}, recall {:.4}, F1 {:.4}** (tp {}, fp {}, fn {}).\n\n",
            overall.precision(),
            overall.recall(),
            overall.f1(),
            overall.tp,
            overall.fp,
            overall.fn_
        ));
        md.push_str(&format!(
            "Examples with zero reference errors but nidos errors: {}.\n\n",
            if zero_error_violations.is_empty() {
                "none".to_string()
            } else {
                zero_error_violations.join(", ")
            }
        ));
        if run_mutations {
            md.push_str(&format!(
                "**Mutations detected with the expected codes: {:.1}%**\n\n",
                mut_fraction * 100.0
            ));
        }
        md.push_str("## Per dataset\n\n| dataset | precision | recall | F1 | tp | fp | fn |\n|---|---|---|---|---|---|---|\n");
        md.push_str(&rows.join("\n"));
        md.push_str("\n\n## Per code\n\n| code | precision | recall | F1 | tp | fp | fn |\n|---|---|---|---|---|---|---|\n");
        for (code, s) in &per_code {
            md.push_str(&format!(
                "| {code} | {:.3} | {:.3} | {:.3} | {} | {} | {} |\n",
                s.precision(),
                s.recall(),
                s.f1(),
                s.tp,
                s.fp,
                s.fn_
            ));
        }
        md.push_str("\n## Mutations\n\n| mutation | expected codes | detected | missing |\n|---|---|---|---|\n");
        md.push_str(&mut_rows.join("\n"));
        md.push_str("\n\n## Differing tuples\n\n| dataset | kind | code | subCode | severity | location |\n|---|---|---|---|---|---|\n");
        let shown = diffs.len().min(400);
        md.push_str(&diffs[..shown].join("\n"));
        if diffs.len() > shown {
            md.push_str(&format!(
                "\n\n… and {} more differing tuples.",
                diffs.len() - shown
            ));
        }
        md.push('\n');
        let file = if brand == Brand::Std {
            "docs/conformance-std.md"
        } else {
            "docs/conformance.md"
        };
        std::fs::write(root().join(file), md)?;
    }
    if overall.f1() < min_f1 {
        bail!(
            "overall F1 {:.4} is below the required {min_f1}",
            overall.f1()
        );
    }
    if mut_fraction < min_mut {
        bail!(
            "mutation detection {:.3} is below the required {min_mut}",
            mut_fraction
        );
    }
    Ok(())
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
        let (ok, missing) = match run_nidos(bin, &out, ignore, Brand::Upstream) {
            Ok(report) => {
                let got: BTreeSet<String> =
                    actual_tuples(&report).into_iter().map(|t| t.0).collect();
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
