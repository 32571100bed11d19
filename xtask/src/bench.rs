//! `cargo xtask bench [--subjects N[,N…]] [--runs K] [--no-reference] [--no-write]`:
//! end-to-end timing of `nidos validate` on the synthetic datasets of
//! `../shared/bench/make_dataset.py`, both brands (Std with the bundled schema, BIDS with
//! the upstream 1.11.1 schema), text and JSON reports. When `bids-validator-deno` is on
//! PATH it validates the BIDS copy once in the same run and the ratio is printed.
//! Writes `docs/performance.md` (unless `--no-write`).
//!
//! Measurements come from `/usr/bin/time -f` (wall, user, system, peak RSS of the child).
//! Datasets are generated once per parameters under `$TMPDIR/nidos-bench/` and reused.
//!
//! `cargo xtask bench --realworld [--runs K]` measures the real-world corpus instead
//! (see `bench_realworld.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::tools::{build_binary, count_files, median, which};
use crate::{root, shared};

const UPSTREAM_SCHEMA: &str = "conformance/schemas/bids-1.11.1-schema-1.2.7.json";
const TIME: &str = "/usr/bin/time";

const USAGE: &str =
    "usage: cargo xtask bench [--subjects N[,N…]] [--runs K] [--no-reference] [--no-write]
       cargo xtask bench --realworld [--runs K] [--no-reference] [--no-write]
       cargo xtask bench --hed [--runs K]
       cargo xtask bench --incremental [--subjects N] [--runs K]

  --subjects N[,N…]  synthetic dataset sizes (subjects; 1000 ≈ 32k files), default 1000
  --runs K           measured runs per configuration after one warm-up, default 3
  --no-reference     do not run bids-validator-deno even when it is on PATH
  --no-write         print the table only; leave docs/performance.md unchanged
  --realworld        the real-world corpus (../shared/conformance/realworld) instead of
                     the synthetic datasets: per-dataset medians beside the reference,
                     the total ratio, the phase profile of the lowest ratio
  --hed              what HED validation adds to the wall time of each real-world
                     dataset that names HEDVersion (with HED against --no-hed, alternated)
  --incremental      issue 42's figures: a whole run beside the incremental updates after
                     a leaf and a top-level sidecar edit (library), --watch latency and a
                     second --cache run (see bench_incremental.rs)

Runs `nidos validate DIR --format text|json -o /dev/null` for both brands under
/usr/bin/time (wall, user+sys, peak RSS). Set NIDOS_TIMING=1 on a single `nidos validate`
run for per-phase durations and RSS.";

struct Settings {
    help: bool,
    realworld: bool,
    hed: bool,
    subjects: Vec<u32>,
    runs: u32,
    reference: bool,
    write: bool,
}

fn parse_args(args: &[String]) -> Result<Settings> {
    let mut s = Settings {
        help: false,
        realworld: false,
        hed: false,
        subjects: vec![1000],
        runs: 3,
        reference: true,
        write: true,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--subjects" => {
                let v = it.next().context("--subjects needs a value")?;
                s.subjects = v
                    .split(',')
                    .map(|x| x.trim().parse::<u32>())
                    .collect::<Result<_, _>>()
                    .with_context(|| format!("--subjects {v}"))?;
            }
            "--runs" => {
                let v = it.next().context("--runs needs a value")?;
                s.runs = v.parse().with_context(|| format!("--runs {v}"))?;
                if s.runs == 0 {
                    bail!("--runs must be at least 1");
                }
            }
            "--no-reference" => s.reference = false,
            "--no-write" => s.write = false,
            "--realworld" => s.realworld = true,
            "--hed" => s.hed = true,
            "--help" | "-h" => s.help = true,
            other => bail!(
                "unknown bench option {other}; usage: cargo xtask bench [--subjects N[,N…]] \
                 [--runs K] [--no-reference] [--no-write] [--realworld] [--hed]"
            ),
        }
    }
    Ok(s)
}

/// One measured child process.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    pub(crate) wall: f64,
    pub(crate) cpu: f64,
    pub(crate) rss_mb: f64,
}

/// Runs `cmd` under `/usr/bin/time` (or with wall time only when it is missing);
/// exit codes in `ok_codes` count as success.
pub(crate) fn measure(
    program: &Path,
    args: &[String],
    ok_codes: &[i32],
    have_time: bool,
) -> Result<Sample> {
    let stats = tempfile_path("time");
    let mut cmd = if have_time {
        let mut c = Command::new(TIME);
        c.arg("-f")
            .arg("%e %U %S %M")
            .arg("-o")
            .arg(&stats)
            .arg(program);
        c
    } else {
        Command::new(program)
    };
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    let start = Instant::now();
    let out = cmd
        .output()
        .with_context(|| format!("running {}", program.display()))?;
    let wall = start.elapsed().as_secs_f64();
    let code = out.status.code().unwrap_or(-1);
    if !ok_codes.contains(&code) {
        bail!(
            "{} {} exited with {code}: {}",
            program.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    if !have_time {
        return Ok(Sample {
            wall,
            cpu: f64::NAN,
            rss_mb: f64::NAN,
        });
    }
    let text = std::fs::read_to_string(&stats).context("reading /usr/bin/time output")?;
    let _ = std::fs::remove_file(&stats);
    // `time` prints "Command exited with non-zero status N" first when the child fails.
    let line = text.lines().last().unwrap_or("");
    let f: Vec<f64> = line
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if f.len() != 4 {
        bail!("unexpected /usr/bin/time output: {text:?}");
    }
    Ok(Sample {
        // The in-process clock has better resolution than `%e` (10 ms).
        wall,
        cpu: f[1] + f[2],
        rss_mb: f[3] / 1024.0,
    })
}

fn tempfile_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nidos-bench-{tag}-{}", std::process::id()))
}

pub(crate) fn time_works() -> bool {
    Command::new(TIME)
        .args(["-f", "%e %U %S %M", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Generates (once) the dataset for `brand` and `subjects`; returns its path and
/// number of files.
pub(crate) fn dataset(brand: &str, subjects: u32) -> Result<(PathBuf, usize)> {
    let base = std::env::temp_dir().join("nidos-bench");
    std::fs::create_dir_all(&base)?;
    let dir = base.join(format!("{brand}-s{subjects}"));
    let done = base.join(format!("{brand}-s{subjects}.complete"));
    if !done.is_file() {
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        eprintln!("generating {} …", dir.display());
        let status = Command::new("python3")
            .arg(shared().join("bench/make_dataset.py"))
            .arg(&dir)
            .args(["--subjects", &subjects.to_string(), "--brand", brand])
            .status()
            .context("running python3")?;
        if !status.success() {
            bail!("make_dataset.py failed for {brand} --subjects {subjects}");
        }
        let n = count_files(&dir);
        std::fs::write(&done, n.to_string())?;
    }
    let n = std::fs::read_to_string(&done)?.trim().parse().unwrap_or(0);
    Ok((dir, n))
}

struct Row {
    brand: String,
    subjects: u32,
    files: usize,
    what: String,
    runs: usize,
    wall_median: f64,
    wall_min: f64,
    cpu: f64,
    rss_mb: f64,
}

impl Row {
    fn new(brand: &str, subjects: u32, files: usize, what: &str, samples: &[Sample]) -> Row {
        Row {
            brand: brand.to_string(),
            subjects,
            files,
            what: what.to_string(),
            runs: samples.len(),
            wall_median: median(samples.iter().map(|s| s.wall).collect()),
            wall_min: samples.iter().map(|s| s.wall).fold(f64::INFINITY, f64::min),
            cpu: median(samples.iter().map(|s| s.cpu).collect()),
            rss_mb: samples.iter().map(|s| s.rss_mb).fold(0.0, f64::max),
        }
    }
}

fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| brand | subjects | files | run | n | wall median (s) | wall min (s) | user+sys (s) | peak RSS (MB) |"
    );
    let _ = writeln!(s, "|---|---:|---:|---|---:|---:|---:|---:|---:|");
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.2} | {:.1} |",
            r.brand,
            r.subjects,
            r.files,
            r.what,
            r.runs,
            r.wall_median,
            r.wall_min,
            r.cpu,
            r.rss_mb
        );
    }
    s
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .map(|l| l.trim_start_matches("MemTotal:").trim().to_string())
        })
        .unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_default();
    format!("{cpus} CPUs (nproc), {model}, MemTotal {mem}, 1-min load average at the end {load} (other builds share the machine)")
}

/// Entry point of `cargo xtask bench`.
pub fn run(args: &[String]) -> Result<()> {
    let settings = parse_args(args)?;
    if settings.help {
        println!("{USAGE}");
        return Ok(());
    }
    if settings.hed {
        return crate::bench_hed::run(settings.runs);
    }
    if settings.realworld {
        return crate::bench_realworld::run(settings.runs, settings.reference, settings.write);
    }
    if !shared().join("bench/make_dataset.py").is_file() {
        println!(
            "skipping bench: {} is absent (the shared reference material is needed)",
            shared().join("bench/make_dataset.py").display()
        );
        return Ok(());
    }
    let have_time = time_works();
    if !have_time {
        eprintln!("warning: {TIME} is unusable; only wall time is measured");
    }
    let nidos = build_binary()?;
    let upstream = shared().join(UPSTREAM_SCHEMA);
    let reference = if settings.reference {
        which("bids-validator-deno")
    } else {
        None
    };
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let mut scaling = Vec::new();
    for brand in ["Std", "BIDS"] {
        // Every size of a brand is warmed up once and then measured in turns (run 1 of
        // each size and format, then run 2…). The machine's speed drifts over minutes on
        // shared cores; measured in turns, the sizes see the same machine and their
        // ratio (the scaling target) is fair.
        let mut sets = Vec::new();
        for &subjects in &settings.subjects {
            let (dir, files) = dataset(brand, subjects)?;
            let mut base = vec!["validate".to_string(), dir.display().to_string()];
            if brand == "BIDS" {
                base.push("--schema".into());
                base.push(upstream.display().to_string());
            }
            // One unmeasured run warms the page cache.
            let mut warm = base.clone();
            warm.extend(["--format", "json", "-o", "/dev/null"].map(String::from));
            measure(&nidos, &warm, &[0, 16], have_time)?;
            sets.push((subjects, dir, files, base));
        }
        let mut samples: Vec<Vec<Vec<Sample>>> = vec![vec![Vec::new(); FORMATS.len()]; sets.len()];
        for _ in 0..settings.runs {
            for (k, (_, _, _, base)) in sets.iter().enumerate() {
                for (f, format) in FORMATS.iter().enumerate() {
                    let mut a = base.clone();
                    a.extend(["--format", format, "-o", "/dev/null"].map(String::from));
                    samples[k][f].push(measure(&nidos, &a, &[0, 16], have_time)?);
                }
            }
        }
        let mut walls: Vec<[f64; FORMATS.len()]> = Vec::new();
        for ((subjects, dir, files, _), by_format) in sets.iter().zip(&samples) {
            let mut wall = [f64::NAN; FORMATS.len()];
            let mut json_rss = f64::NAN;
            for (f, format) in FORMATS.iter().enumerate() {
                let row = Row::new(
                    brand,
                    *subjects,
                    *files,
                    &format!("nidos {format}"),
                    &by_format[f],
                );
                wall[f] = row.wall_median;
                if *format == "json" {
                    json_rss = row.rss_mb;
                }
                eprintln!(
                    "{brand} s{subjects} {format}: {:.3} s wall, {:.2} s cpu, {:.1} MB",
                    row.wall_median, row.cpu, row.rss_mb
                );
                rows.push(row);
            }
            walls.push(wall);
            if let (Some(deno), "BIDS") = (&reference, brand) {
                let a = vec![
                    dir.display().to_string(),
                    "--format".to_string(),
                    "json".to_string(),
                    "--outfile".to_string(),
                    "/dev/null".to_string(),
                ];
                // The reference exits 16 when it finds errors, like nidos.
                match measure(deno, &a, &[0, 16], have_time) {
                    Ok(s) => {
                        let row = Row::new(brand, *subjects, *files, "bids-validator-deno", &[s]);
                        let json_wall = wall[FORMATS.len() - 1];
                        ratios.push((*subjects, s.wall / json_wall, s.rss_mb / json_rss));
                        rows.push(row);
                    }
                    Err(e) => eprintln!("reference validator failed: {e:#}"),
                }
            }
        }
        // Each size against the smallest, per format.
        if let (Some(first), Some(small)) = (sets.first(), walls.first()) {
            for ((subjects, ..), wall) in sets.iter().zip(&walls).skip(1) {
                for (f, format) in FORMATS.iter().enumerate() {
                    scaling.push(Scaling {
                        brand,
                        format,
                        small: first.0,
                        large: *subjects,
                        ratio: wall[f] / small[f],
                    });
                }
            }
        }
    }
    let table = table(&rows);
    println!("\n{table}");
    for (subjects, wall, rss) in &ratios {
        println!(
            "reference / nidos (BIDS, {subjects} subjects, JSON): {wall:.1}× wall, {rss:.1}× peak RSS"
        );
    }
    for sc in &scaling {
        println!("{sc}");
    }
    if reference.is_none() && settings.reference {
        println!("bids-validator-deno is not on PATH: no reference ratio (pip install bids-validator-deno)");
    }
    if settings.write {
        write_doc(&settings, &table, (&ratios, &scaling), reference.is_some())?;
    }
    Ok(())
}

/// The report formats measured, JSON last (the reference is compared with it).
const FORMATS: [&str; 2] = ["text", "json"];

/// One size's wall time (median) against the smallest size's, same brand and format.
struct Scaling {
    brand: &'static str,
    format: &'static str,
    small: u32,
    large: u32,
    ratio: f64,
}

impl std::fmt::Display for Scaling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "scaling ({}, {}): {} subjects / {} subjects = {:.2}× wall (medians, measured in turns)",
            self.brand, self.format, self.large, self.small, self.ratio
        )
    }
}

const DOC_BEGIN: &str = "<!-- bench:begin (written by `cargo xtask bench`) -->";
const DOC_END: &str = "<!-- bench:end -->";

/// Replaces the generated section of docs/performance.md (the rest of the document is
/// hand-written and kept).
fn write_doc(
    settings: &Settings,
    table: &str,
    (ratios, scaling): (&[(u32, f64, f64)], &[Scaling]),
    reference: bool,
) -> Result<()> {
    let path = root().join("docs/performance.md");
    let subjects: Vec<String> = settings.subjects.iter().map(u32::to_string).collect();
    let mut s = String::new();
    let _ = writeln!(s, "{DOC_BEGIN}");
    let _ = writeln!(
        s,
        "\nCommand: `cargo xtask bench --subjects {} --runs {}`  \nMachine: {}  \n\
         Each nidos row: `nidos validate DIR [--schema ../shared/{UPSTREAM_SCHEMA}] --format FMT -o /dev/null`, \
         release build, warm page cache, one warm-up run per dataset, then {} measured runs of each size and format taken in turns; peak RSS is the maximum over the runs.\n",
        subjects.join(","),
        settings.runs,
        machine(),
        settings.runs
    );
    s.push_str(table);
    if !ratios.is_empty() {
        s.push('\n');
        for (subjects, wall, rss) in ratios {
            let _ = writeln!(
                s,
                "- reference (`bids-validator-deno DIR --format json --outfile /dev/null`) / nidos JSON, BIDS, {subjects} subjects: **{wall:.1}×** wall, {rss:.1}× peak RSS"
            );
        }
    } else if !reference {
        s.push_str("\n(bids-validator-deno was not on PATH: no reference ratio in this run.)\n");
    }
    if !scaling.is_empty() {
        s.push('\n');
        for sc in scaling {
            let _ = writeln!(s, "- {sc}");
        }
    }
    let _ = writeln!(s, "\n{DOC_END}");
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let new = match (old.find(DOC_BEGIN), old.find(DOC_END)) {
        (Some(a), Some(b)) if b > a => {
            format!(
                "{}{}\n{}",
                &old[..a],
                s,
                &old[b + DOC_END.len()..].trim_start_matches('\n')
            )
        }
        _ if old.is_empty() => format!("# Performance\n\n{s}"),
        _ => format!("{}\n{s}", old.trim_end()),
    };
    std::fs::write(&path, new)?;
    println!("wrote {}", path.display());
    Ok(())
}
