//! `cargo xtask bench --hed [--runs K]`: what HED validation adds to the wall time of
//! `nidos validate DIR --format json -o /dev/null` on each real-world dataset whose
//! `dataset_description.json` names `HEDVersion` (the target of issue 17: at most 10 %).
//!
//! Per dataset, the release build runs once unmeasured, then K·[`PER_ROUND`] times with
//! HED and as often with `--no-hed`, the two alternating, so both see the same machine;
//! each figure is the median of its runs. Prints the table only.

use std::path::Path;

use anyhow::Result;

use crate::shared;
use crate::tools::{build_binary, count_files, median, time_one};

/// Runs per configuration and dataset for each unit of `--runs` (a run takes 10–100 ms).
const PER_ROUND: u32 = 10;
/// The target of issue 17.
const TARGET: f64 = 0.10;

/// Whether a dataset description names HED schemas.
fn names_hed(description: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(description)
        .ok()
        .is_some_and(|v| v.get("HEDVersion").is_some_and(|h| !h.is_null()))
}

/// What HED adds, as a fraction of the run without it.
fn adds(with_hed: f64, without: f64) -> f64 {
    with_hed / without - 1.0
}

pub(crate) fn run(runs: u32) -> Result<()> {
    let base = shared().join("conformance/realworld/datasets");
    if !base.is_dir() {
        println!("skipping bench --hed: {} is absent", base.display());
        return Ok(());
    }
    let nidos = build_binary()?;
    let mut dirs: Vec<_> = std::fs::read_dir(&base)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            std::fs::read_to_string(p.join("dataset_description.json")).is_ok_and(|t| names_hed(&t))
        })
        .collect();
    dirs.sort();
    println!("| dataset | files | with HED (ms) | `--no-hed` (ms) | HED adds |");
    println!("|---|---:|---:|---:|---:|");
    for dir in &dirs {
        let d = dir.display().to_string();
        let on = ["validate", &d, "--format", "json", "-o", "/dev/null"];
        let off = [
            "validate",
            &d,
            "--format",
            "json",
            "-o",
            "/dev/null",
            "--no-hed",
        ];
        time_one(&nidos, &on)?;
        let (mut with_hed, mut without) = (Vec::new(), Vec::new());
        for _ in 0..runs * PER_ROUND {
            with_hed.push(time_one(&nidos, &on)?);
            without.push(time_one(&nidos, &off)?);
        }
        let (a, b) = (median(with_hed), median(without));
        let share = adds(a, b);
        println!(
            "| {} | {} | {:.1} | {:.1} | {:+.1} %{} |",
            dir.file_name()
                .map_or(d.clone(), |n| n.to_string_lossy().into_owned()),
            count_files(Path::new(dir)),
            a * 1e3,
            b * 1e3,
            share * 100.0,
            if share > TARGET { " (over 10 %)" } else { "" }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hed_datasets_are_those_naming_a_version() {
        assert!(names_hed(r#"{"Name": "x", "HEDVersion": "8.1.0"}"#));
        assert!(names_hed(r#"{"HEDVersion": ["8.2.0", "sc:score_1.0.0"]}"#));
        assert!(!names_hed(r#"{"Name": "x", "BIDSVersion": "1.8.0"}"#));
        assert!(!names_hed(r#"{"HEDVersion": null}"#));
        assert!(!names_hed("not json"));
    }

    #[test]
    fn hed_share_is_relative_to_the_run_without() {
        assert!((adds(0.11, 0.10) - 0.10).abs() < 1e-9);
        assert!(adds(0.10, 0.10).abs() < 1e-9);
    }
}
