//! `cargo xtask bench --realworld [--runs K] [--no-reference] [--no-write]`: wall time of
//! `nidos validate DIR --format json -o /dev/null` (release build, bundled rules) against
//! the reference's `bids-validator-deno DIR --json` on every dataset of
//! `../shared/conformance/realworld/datasets/`, in the same run.
//!
//! After one unmeasured nidos run per dataset (it warms the page cache for both tools),
//! each of the K rounds runs nidos [`NIDOS_PER_ROUND`] times then the reference once on
//! every dataset in turn, so both tools see the same machine; each figure is the median
//! of its runs, timed from spawn to exit. The report lists each dataset's medians and ratio, the total ratio (sum of the
//! reference's medians over the sum of nidos's), and the `NIDOS_TIMING=1` phase profile
//! of the dataset with the lowest ratio. Writes its section of `docs/performance.md`
//! between its markers (unless `--no-write`). Slow (the reference takes seconds per
//! dataset): not part of CI.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

use crate::tools::{build_binary, count_files, median, time_one, which};
use crate::{root, shared};

const BEGIN: &str = "<!-- bench-realworld:begin (written by `cargo xtask bench --realworld`) -->";
const END: &str = "<!-- bench-realworld:end -->";
/// The per-dataset floor of issue 19 (reference / nidos).
const FLOOR: f64 = 20.0;

/// The timings of one dataset, in seconds (one value per run).
#[derive(Clone, Debug, Default)]
pub(crate) struct Timings {
    pub name: String,
    pub files: usize,
    pub nidos: Vec<f64>,
    pub reference: Vec<f64>,
}

/// One dataset's medians and ratio (the ratio is NaN without a reference figure).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Line {
    pub name: String,
    pub files: usize,
    pub nidos: f64,
    pub reference: f64,
    pub ratio: f64,
}

/// The whole table: one line per dataset, the totals, and which line has the lowest ratio.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Summary {
    pub lines: Vec<Line>,
    pub total_nidos: f64,
    pub total_reference: f64,
    pub total_ratio: f64,
    /// Index into `lines` of the lowest ratio (None when no line has a ratio).
    pub lowest: Option<usize>,
}

/// Medians and ratios; totals are sums of medians. Pure, so it is unit-tested.
pub(crate) fn summarize(timings: &[Timings]) -> Summary {
    let lines: Vec<Line> = timings
        .iter()
        .map(|t| {
            let nidos = median(t.nidos.clone());
            let reference = median(t.reference.clone());
            Line {
                name: t.name.clone(),
                files: t.files,
                nidos,
                reference,
                ratio: reference / nidos,
            }
        })
        .collect();
    let total_nidos: f64 = lines.iter().map(|l| l.nidos).sum();
    let total_reference: f64 = lines.iter().map(|l| l.reference).sum();
    let lowest = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.ratio.is_finite())
        .min_by(|a, b| a.1.ratio.total_cmp(&b.1.ratio))
        .map(|(i, _)| i);
    Summary {
        lines,
        total_nidos,
        total_reference,
        total_ratio: total_reference / total_nidos,
        lowest,
    }
}

/// A figure in milliseconds, or "-" when it is missing.
fn ms(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}", x * 1e3)
    } else {
        "-".to_string()
    }
}

fn ratio(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}×")
    } else {
        "-".to_string()
    }
}

/// The Markdown table of a summary, with a total row; ratios under the floor are marked.
pub(crate) fn render(summary: &Summary) -> String {
    let mut s = String::from(
        "| dataset | files | nidos median (ms) | reference median (ms) | reference / nidos |\n\
         |---|---:|---:|---:|---:|\n",
    );
    for l in &summary.lines {
        let low = if l.ratio < FLOOR { " (below 20×)" } else { "" };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {}{low} |",
            l.name,
            l.files,
            ms(l.nidos),
            ms(l.reference),
            ratio(l.ratio)
        );
    }
    let files: usize = summary.lines.iter().map(|l| l.files).sum();
    let _ = writeln!(
        s,
        "| **total** | {files} | {} | {} | **{}** |",
        ms(summary.total_nidos),
        ms(summary.total_reference),
        ratio(summary.total_ratio)
    );
    s
}

/// Wall time of one child process from spawn to exit; exit codes 0 and 16 (issues
/// found) are success for both tools.
/// The nidos command line measured on each dataset.
fn nidos_args(dir: &str) -> [&str; 6] {
    ["validate", dir, "--format", "json", "-o", "/dev/null"]
}

/// The `NIDOS_TIMING=1` lines of one run (the phase profile, on stderr).
fn profile(nidos: &Path, dir: &str) -> Result<String> {
    let out = Command::new(nidos)
        .args(nidos_args(dir))
        .env_remove("NIDOS_SCHEMA_DIR")
        .env("NIDOS_TIMING", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("running {}", nidos.display()))?;
    Ok(String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("nidos timing:"))
        .map(|l| format!("{}\n", l.trim_start_matches("nidos timing:").trim()))
        .collect())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Entry point of `cargo xtask bench --realworld`.
/// nidos runs per dataset and round. A 10–40 ms run's wall time depends on what ran just
/// before (right after the reference frees its gigabyte, the kernel compacts memory for
/// the allocator's huge pages), so the short runs are sampled more often than the
/// reference's seconds-long ones.
const NIDOS_PER_ROUND: u32 = 3;

pub(crate) fn run(runs: u32, with_reference: bool, write: bool) -> Result<()> {
    let base = shared().join("conformance/realworld/datasets");
    if !base.is_dir() {
        println!("skipping bench --realworld: {} is absent", base.display());
        return Ok(());
    }
    let reference = if with_reference {
        which("bids-validator-deno")
    } else {
        None
    };
    if with_reference && reference.is_none() {
        println!(
            "bids-validator-deno is not on PATH (pip install bids-validator-deno): nidos only"
        );
    }
    let nidos = build_binary()?;
    let mut names: Vec<String> = std::fs::read_dir(&base)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let dirs: Vec<String> = names
        .iter()
        .map(|n| base.join(n).display().to_string())
        .collect();
    let mut timings: Vec<Timings> = names
        .iter()
        .zip(&dirs)
        .map(|(n, d)| Timings {
            name: n.clone(),
            files: count_files(Path::new(d)),
            ..Timings::default()
        })
        .collect();
    let load_start = load_average();
    for d in &dirs {
        time_one(&nidos, &nidos_args(d))?;
    }
    for round in 1..=runs {
        eprintln!("round {round}/{runs} …");
        for (t, d) in timings.iter_mut().zip(&dirs) {
            for _ in 0..NIDOS_PER_ROUND {
                t.nidos.push(time_one(&nidos, &nidos_args(d))?);
            }
            if let Some(r) = &reference {
                t.reference.push(time_one(r, &[d.as_str(), "--json"])?);
            }
        }
    }
    let load_end = load_average();
    let summary = summarize(&timings);
    let table = render(&summary);
    println!("\n{table}");
    let below: Vec<&str> = summary
        .lines
        .iter()
        .filter(|l| l.ratio < FLOOR)
        .map(|l| l.name.as_str())
        .collect();
    let lowest = summary.lowest.map(|i| &summary.lines[i]);
    let phases = match lowest {
        Some(l) => profile(&nidos, &base.join(&l.name).display().to_string())?,
        None => String::new(),
    };
    if let Some(l) = lowest {
        println!(
            "lowest ratio: {} ({}); NIDOS_TIMING=1 phases:\n{phases}",
            l.name,
            ratio(l.ratio)
        );
    }
    if write {
        let mut section = String::new();
        let _ = writeln!(section, "{BEGIN}\n");
        let _ = writeln!(
            section,
            "Command: `cargo xtask bench --realworld --runs {runs}`  \n\
             Machine: {} CPUs, load average (1, 5, 15 min) {load_start} at the start and {load_end} at the end \
             (other builds share the machine)  \n\
             Each dataset of `../shared/conformance/realworld/datasets/`: `nidos validate DIR --format json -o /dev/null` \
             (release build, bundled rules) and `bids-validator-deno DIR --json > /dev/null`, wall time from spawn \
             to exit; one nidos warm-up per dataset, then {runs} rounds running, on every dataset in turn, nidos \
             {NIDOS_PER_ROUND} times and the reference once; medians of each tool's runs. The total ratio is the sum \
             of the reference's medians over the sum of nidos's.\n",
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        );
        section.push_str(&table);
        if below.is_empty() {
            let _ = writeln!(section, "\nNo dataset below 20×.");
        } else {
            let _ = writeln!(section, "\nBelow 20×: {}.", below.join(", "));
        }
        if let Some(l) = lowest {
            let _ = writeln!(
                section,
                "\nPhases of the lowest ratio, {} (`NIDOS_TIMING=1 nidos validate DIR --format json -o /dev/null`, one run):\n\n```\n{phases}```",
                l.name
            );
        }
        let _ = writeln!(section, "\n{END}");
        let path = root().join("docs/performance.md");
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let new = match (old.find(BEGIN), old.find(END)) {
            (Some(a), Some(b)) if b > a => {
                let rest = old[b + END.len()..].trim_start_matches('\n');
                format!("{}{}\n{}", &old[..a], section, rest)
            }
            _ => format!("{}\n\n{section}", old.trim_end()),
        };
        std::fs::write(&path, new)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, files: usize, nidos: &[f64], reference: &[f64]) -> Timings {
        Timings {
            name: name.to_string(),
            files,
            nidos: nidos.to_vec(),
            reference: reference.to_vec(),
        }
    }

    #[test]
    fn medians_ratios_totals_and_lowest() {
        let s = summarize(&[
            t("a", 10, &[0.030, 0.010, 0.020], &[1.0, 0.6, 0.8]),
            t("b", 5, &[0.1, 0.3], &[2.0, 4.0]),
        ]);
        assert_eq!(s.lines[0].nidos, 0.020);
        assert_eq!(s.lines[0].reference, 0.8);
        assert!((s.lines[0].ratio - 40.0).abs() < 1e-9);
        // Even count: the mean of the middle two.
        assert!((s.lines[1].nidos - 0.2).abs() < 1e-12);
        assert!((s.lines[1].ratio - 15.0).abs() < 1e-9);
        // Totals are sums of medians, not a mean of ratios.
        assert!((s.total_nidos - 0.22).abs() < 1e-12);
        assert!((s.total_reference - 3.8).abs() < 1e-12);
        assert!((s.total_ratio - 3.8 / 0.22).abs() < 1e-9);
        assert_eq!(s.lowest, Some(1));
    }

    #[test]
    fn without_reference_there_is_no_ratio_and_no_lowest() {
        let s = summarize(&[t("a", 1, &[0.01], &[])]);
        assert!(s.lines[0].ratio.is_nan());
        assert_eq!(s.lowest, None);
        let table = render(&s);
        assert!(table.contains("| a | 1 | 10.0 | - | - |"), "{table}");
    }

    #[test]
    fn table_marks_datasets_below_the_floor_and_totals() {
        let s = summarize(&[
            t("fast", 100, &[0.01], &[0.5]),
            t("slow", 7, &[0.1], &[1.0]),
        ]);
        let table = render(&s);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 5, "{table}");
        assert_eq!(lines[2], "| fast | 100 | 10.0 | 500.0 | 50.0× |");
        assert_eq!(
            lines[3],
            "| slow | 7 | 100.0 | 1000.0 | 10.0× (below 20×) |"
        );
        assert_eq!(lines[4], "| **total** | 107 | 110.0 | 1500.0 | **13.6×** |");
    }
}
