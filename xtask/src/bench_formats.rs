//! `cargo xtask bench-formats [--subjects N] [--runs K]`: what each report format costs
//! on one synthetic dataset (Std brand, bundled rules; 3,125 subjects ≈ 100,000 files by
//! default): wall time and peak memory of `nidos validate DIR --format F -o /dev/null`
//! for text, JSON, SARIF and HTML, each beside the JSON run. Fails when SARIF or HTML
//! needs more than twice the JSON run's peak memory (the bound `docs/performance.md`
//! states).

use anyhow::{bail, Result};

use crate::bench::{dataset, measure, time_works};
use crate::tools::{build_binary, median};

const FORMATS: [&str; 4] = ["json", "text", "sarif", "html"];

/// The largest peak memory of a format, as a multiple of the JSON run's.
const MAX_RSS_RATIO: f64 = 2.0;

pub fn run(args: &[String]) -> Result<()> {
    let subjects: u32 = crate::flag_or(args, "--subjects", 3125)?;
    let runs: usize = crate::flag_or(args, "--runs", 1)?;
    if !time_works() {
        bail!("/usr/bin/time is needed (apt-get install time)");
    }
    let bin = build_binary()?;
    let (dir, files) = dataset("Std", subjects)?;
    println!(
        "nidos validate {} --format F -o /dev/null ({files} files, {runs} run(s) after a warm-up)\n",
        dir.display()
    );
    println!("| format | wall (s) | peak RSS (MB) | RSS / JSON |");
    println!("|---|---:|---:|---:|");
    let mut json_rss = f64::NAN;
    let mut over = Vec::new();
    for format in FORMATS {
        let args: Vec<String> = [
            "validate",
            &dir.to_string_lossy(),
            "--format",
            format,
            "-o",
            "/dev/null",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        measure(&bin, &args, &[0, 16], true)?;
        let samples: Vec<_> = (0..runs)
            .map(|_| measure(&bin, &args, &[0, 16], true))
            .collect::<Result<_>>()?;
        let wall = median(samples.iter().map(|s| s.wall).collect());
        let rss = samples.iter().map(|s| s.rss_mb).fold(0.0, f64::max);
        if format == "json" {
            json_rss = rss;
        }
        let ratio = rss / json_rss;
        println!("| {format} | {wall:.2} | {rss:.0} | {ratio:.2}× |");
        if ratio > MAX_RSS_RATIO {
            over.push(format!("{format}: {ratio:.2}× the JSON run's peak memory"));
        }
    }
    if !over.is_empty() {
        bail!("over the bound of {MAX_RSS_RATIO}×: {}", over.join("; "));
    }
    Ok(())
}
