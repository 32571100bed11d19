//! `cargo xtask bench-small [--runs K] [--no-reference] [--no-write]`: wall time of
//! `nidos validate` on small real datasets, where start-up (loading the rules) dominates,
//! beside the reference validator in the same run. The datasets are examples of
//! `../shared/conformance/examples` as published (they declare `BIDSVersion`), validated
//! with the rules built into the binary (no `--schema`), JSON report to `/dev/null`.
//! Times are taken around the child process (spawn to exit), median of K runs after a
//! one-second pause (the machine settles after the reference's previous run) and one
//! warm-up. Writes its section of `docs/performance.md` (between its markers).

use std::fmt::Write as _;

use anyhow::Result;

use crate::tools::{build_binary, count_files, median, time_one};
use crate::{flag, root, shared};

const DATASETS: &[&str] = &["ds001", "eeg_matchingpennies", "ds000117"];
const BEGIN: &str = "<!-- bench-small:begin -->";
const END: &str = "<!-- bench-small:end -->";

pub fn run(args: &[String]) -> Result<()> {
    let runs: usize = flag(args, "--runs")
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(21);
    let with_reference = !args.iter().any(|a| a == "--no-reference");
    let write = !args.iter().any(|a| a == "--no-write");
    let examples = shared().join("conformance/examples");
    if !examples.is_dir() {
        println!("skipped: {} is absent", examples.display());
        return Ok(());
    }
    let nidos = build_binary()?;
    let reference = with_reference
        .then(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|p| p.join("bids-validator-deno"))
                    .find(|p| p.is_file())
            })
        })
        .flatten();
    let config = examples.join("default-config.json");
    let config = config.to_string_lossy().to_string();
    let mut table = String::from(
        "| dataset | files | nidos median wall | reference median wall | reference / nidos |\n|---|---|---|---|---|\n",
    );
    for name in DATASETS {
        let dir = examples.join(name);
        if !dir.is_dir() {
            continue;
        }
        let d = dir.to_string_lossy().to_string();
        let nidos_args = [
            "validate",
            d.as_str(),
            "--format",
            "json",
            "-o",
            "/dev/null",
            "--config",
            config.as_str(),
            "--ignore-nifti-headers",
        ];
        // The machine settles first: for a few hundred milliseconds after the reference
        // exits (it frees over a gigabyte), runs here took 18–21 ms instead of 12–13
        // (ds001; docs/performance.md).
        std::thread::sleep(std::time::Duration::from_secs(1));
        time_one(&nidos, &nidos_args)?;
        let mut ours = Vec::with_capacity(runs);
        for _ in 0..runs {
            ours.push(time_one(&nidos, &nidos_args)?);
        }
        let ours = median(ours);
        let theirs = match &reference {
            Some(r) => {
                let ref_args = [
                    d.as_str(),
                    "--format",
                    "json",
                    "--outfile",
                    "/dev/null",
                    "--config",
                    config.as_str(),
                    "--ignoreNiftiHeaders",
                ];
                let mut v = Vec::new();
                for _ in 0..3 {
                    v.push(time_one(r, &ref_args)?);
                }
                Some(median(v))
            }
            None => None,
        };
        let files = count_files(&dir);
        println!(
            "{name:24} {files:6} files  nidos {:7.1} ms  reference {}",
            ours * 1e3,
            theirs.map_or("-".to_string(), |t| format!(
                "{:7.1} ms ({:.0}×)",
                t * 1e3,
                t / ours
            ))
        );
        let _ = writeln!(
            table,
            "| {name} | {files} | {:.1} ms | {} | {} |",
            ours * 1e3,
            theirs.map_or("-".to_string(), |t| format!("{:.0} ms", t * 1e3)),
            theirs.map_or("-".to_string(), |t| format!("{:.0}×", t / ours)),
        );
    }
    if write {
        let path = root().join("docs/performance.md");
        let mut section = String::new();
        let _ = writeln!(section, "{BEGIN}\n");
        let _ = writeln!(
            section,
            "## Small datasets: start-up\n\nCommand: `cargo xtask bench-small --runs {runs}`. Each example as published \
             (`BIDSVersion`), rules built into the binary (no `--schema`, `NIDOS_SCHEMA_DIR` unset): \
             `nidos validate DIR --format json -o /dev/null --config default-config.json --ignore-nifti-headers`, \
             release build (a copy of it, as installed); wall time from spawn to exit, median of {runs} runs after \
             a one-second pause and one warm-up; the reference (`bids-validator-deno`, same options) median of 3 \
             runs in the same run.\n"
        );
        section.push_str(&table);
        // No newline after the end mark: the text after it keeps its own.
        let _ = write!(section, "\n{END}");
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let new = match (old.find(BEGIN), old.find(END)) {
            (Some(a), Some(b)) if b > a => {
                format!("{}{}{}", &old[..a], section, &old[b + END.len()..])
            }
            _ => format!("{}\n\n{section}", old.trim_end()),
        };
        std::fs::write(&path, new)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
