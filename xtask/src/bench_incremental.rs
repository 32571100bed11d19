//! `cargo xtask bench --incremental [--subjects N] [--runs K]`: the figures of issue 42
//! on a copy of the synthetic dataset (`make_dataset.py`, Std brand, bundled rules):
//!
//! - a whole run (`nidos_validate::validate`, in this process), beside
//! - the incremental session's update after an edit of one leaf sidecar (a T1w's) and
//!   after an edit of the top-level sidecar every n-back bold file inherits, measured
//!   in the library (`Session::update`, the write excluded); the leaf edit also with
//!   the later-version notes on (`Request::explain_later`, as `--watch` and `nidos lsp`
//!   run);
//! - `nidos validate --watch`: from the write of the leaf sidecar to the totals line
//!   of its update on stdout (the release binary; includes the notification and the
//!   30 ms quiet wait);
//! - `nidos validate --cache DIR`: a first run (empty cache) and a second one over the
//!   unchanged dataset (the release binary, wall time).
//!
//! Medians of K runs (default 5). Prints a Markdown table; the figures go into
//! `docs/performance.md` by hand.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use nidos_validate::incremental::{load_rules, Outcome, Session};
use nidos_validate::Request;

use crate::tools::{build_binary, median};

struct Settings {
    subjects: u32,
    runs: usize,
    /// `--loop N`: only the session and N leaf updates, each timed (a driver for
    /// `perf record`).
    looped: Option<usize>,
}

fn parse(args: &[String]) -> Result<Settings> {
    let mut s = Settings {
        subjects: 1000,
        runs: 5,
        looped: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--incremental" => {}
            "--subjects" => {
                s.subjects = it.next().context("--subjects needs a value")?.parse()?;
            }
            "--runs" => s.runs = it.next().context("--runs needs a value")?.parse()?,
            "--loop" => s.looped = Some(it.next().context("--loop needs a value")?.parse()?),
            other => bail!("bench --incremental: unknown argument {other}"),
        }
    }
    if s.runs == 0 {
        bail!("--runs must be at least 1");
    }
    Ok(s)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A JSON sidecar's text with `RepetitionTime` set to `tr` (the edit each round makes).
fn with_tr(text: &str, tr: f64) -> Result<String> {
    let mut v: serde_json::Value = serde_json::from_str(text)?;
    v["RepetitionTime"] = serde_json::json!(tr);
    Ok(serde_json::to_string_pretty(&v)?)
}

/// Times `session.update` after each of `runs` edits of `rel` (the write not counted).
fn updates(
    session: &mut Session<'_>,
    root: &Path,
    rel: &str,
    runs: usize,
) -> Result<(Vec<f64>, usize)> {
    let path = root.join(rel.trim_start_matches('/'));
    let original = std::fs::read_to_string(&path)?;
    let mut times = Vec::new();
    let mut rechecked = 0;
    for k in 0..runs {
        std::fs::write(&path, with_tr(&original, 2.0 + (k as f64 + 1.0) / 10.0)?)?;
        let t = Instant::now();
        let outcome = session.update(&[rel]).map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(ms(t.elapsed()));
        if let Outcome::Updated(d) = outcome {
            rechecked = d.rechecked.len();
        }
    }
    std::fs::write(&path, original)?;
    session.update(&[rel]).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((times, rechecked))
}

/// Times `session.update` after edits of `rel` that alternately add and remove an
/// error (`RepetitionTime` not a number).
fn updates_bad(session: &mut Session<'_>, root: &Path, rel: &str, runs: usize) -> Result<Vec<f64>> {
    let path = root.join(rel.trim_start_matches('/'));
    let original = std::fs::read_to_string(&path)?;
    let mut bad: serde_json::Value = serde_json::from_str(&original)?;
    bad["RepetitionTime"] = serde_json::json!("two");
    let bad = serde_json::to_string_pretty(&bad)?;
    let mut times = Vec::new();
    for k in 0..runs {
        let text = if k % 2 == 0 {
            bad.as_str()
        } else {
            original.as_str()
        };
        std::fs::write(&path, text)?;
        let t = Instant::now();
        session.update(&[rel]).map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(ms(t.elapsed()));
    }
    std::fs::write(&path, original)?;
    session.update(&[rel]).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(times)
}

/// From each write of `rel` to the totals line `nidos validate --watch` prints for it.
fn watch_latency(nidos: &Path, root: &Path, rel: &str, runs: usize) -> Result<Vec<f64>> {
    let path = root.join(rel.trim_start_matches('/'));
    let original = std::fs::read_to_string(&path)?;
    let mut child = Command::new(nidos)
        .args(["validate", "--watch", "--format", "json"])
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().context("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("totals: ") && tx.send(Instant::now()).is_err() {
                break;
            }
        }
    });
    let wait = Duration::from_secs(120);
    rx.recv_timeout(wait).context("the watcher's first run")?;
    let mut times = Vec::new();
    for k in 0..runs {
        let t = Instant::now();
        std::fs::write(&path, with_tr(&original, 3.0 + (k as f64 + 1.0) / 10.0)?)?;
        let seen = rx.recv_timeout(wait).context("the watcher's update")?;
        times.push(ms(seen.duration_since(t)));
        // Quiet between rounds, so each write is a burst of its own.
        std::thread::sleep(Duration::from_millis(200));
        while rx.try_recv().is_ok() {}
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let _ = child.wait();
    std::fs::write(&path, original)?;
    Ok(times)
}

/// Wall times of `nidos validate --cache` runs: (first runs, second runs).
fn cache_runs(nidos: &Path, root: &Path, runs: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    let cache = std::env::temp_dir().join("nidos-bench-cache");
    let run = || -> Result<f64> {
        let t = Instant::now();
        let status = Command::new(nidos)
            .args(["validate", "--format", "json", "-o", "/dev/null", "--cache"])
            .arg(&cache)
            .arg(root)
            .stderr(Stdio::null())
            .status()?;
        if !matches!(status.code(), Some(0 | 16)) {
            bail!("nidos validate --cache failed: {status}");
        }
        Ok(ms(t.elapsed()))
    };
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let _ = std::fs::remove_dir_all(&cache);
        first.push(run()?);
        second.push(run()?);
    }
    let _ = std::fs::remove_dir_all(&cache);
    Ok((first, second))
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let status = Command::new("cp").arg("-a").arg(from).arg(to).status()?;
    if !status.success() {
        bail!("cp -a {} {} failed", from.display(), to.display());
    }
    Ok(())
}

/// `--loop N`: a session, then N edits of the leaf sidecar (alternately adding and
/// removing an error), each update's time on stdout.
fn leaf_loop(
    schema: &nidos_schema::Schema,
    root: &Path,
    request: &Request,
    n: usize,
) -> Result<()> {
    let t = Instant::now();
    let mut session = Session::new(schema, root, request).map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("session: {:.0} ms", ms(t.elapsed()));
    let leaf = "/sub-00001/ses-01/anat/sub-00001_ses-01_T1w.json";
    let good = updates(&mut session, root, leaf, n)?.0;
    let bad = updates_bad(&mut session, root, leaf, n)?;
    println!(
        "leaf update, issues unchanged: median {:.2} ms; an issue new or resolved: median {:.2} ms",
        median(good),
        median(bad)
    );
    std::fs::remove_dir_all(root)?;
    Ok(())
}

pub fn run(args: &[String]) -> Result<()> {
    let s = parse(args)?;
    let (source, files) = crate::bench::dataset("Std", s.subjects)?;
    let root: PathBuf = std::env::temp_dir().join(format!("nidos-bench-incr-s{}", s.subjects));
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    copy_tree(&source, &root)?;
    nidos_bundled::install();
    let request = Request::default();
    let (schema, _) = load_rules(&root, &request).map_err(|e| anyhow::anyhow!("{e}"))?;

    if let Some(n) = s.looped {
        return leaf_loop(&schema, &root, &request, n);
    }
    let mut whole = Vec::new();
    for _ in 0..s.runs {
        let t = Instant::now();
        let done = nidos_validate::validate(&root, &request).map_err(|e| anyhow::anyhow!("{e}"))?;
        whole.push(ms(t.elapsed()));
        drop(done);
    }
    let t = Instant::now();
    let mut session = Session::new(&schema, &root, &request).map_err(|e| anyhow::anyhow!("{e}"))?;
    let first = ms(t.elapsed());
    let leaf = "/sub-00001/ses-01/anat/sub-00001_ses-01_T1w.json";
    let top = "/task-nback_bold.json";
    let (leaf_times, leaf_n) = updates(&mut session, &root, leaf, s.runs)?;
    let leaf_bad = updates_bad(&mut session, &root, leaf, s.runs)?;
    let (top_times, top_n) = updates(&mut session, &root, top, s.runs)?;
    drop(session);
    // As `--watch` and `nidos lsp` run: with the later-version notes (the dataset
    // declares an older version than the newest).
    let later = Request {
        explain_later: true,
        ..Request::default()
    };
    let t = Instant::now();
    let mut session = Session::new(&schema, &root, &later).map_err(|e| anyhow::anyhow!("{e}"))?;
    let later_first = ms(t.elapsed());
    let (later_leaf, later_n) = updates(&mut session, &root, leaf, s.runs)?;
    let later_bad = updates_bad(&mut session, &root, leaf, s.runs)?;
    drop(session);
    let m = |v: &[f64]| median(v.to_vec());
    println!(
        "synthetic Std dataset, {} subjects, {files} files; medians of {} runs\n",
        s.subjects, s.runs
    );
    println!("| measure | median | files validated |");
    println!("|---|---:|---:|");
    println!(
        "| whole run (library, `validate`) | {:.0} ms | {files} |",
        m(&whole)
    );
    println!("| incremental session, first run (library) | {first:.0} ms | {files} |");
    println!(
        "| update after editing one leaf sidecar, issues unchanged (library) | {:.1} ms | {leaf_n} |",
        m(&leaf_times)
    );
    println!(
        "| update after editing one leaf sidecar, an issue new or resolved (library) | {:.1} ms | {leaf_n} |",
        m(&leaf_bad)
    );
    println!(
        "| update after editing the top-level n-back bold sidecar (library) | {:.0} ms | {top_n} |",
        m(&top_times)
    );
    println!(
        "| incremental session with later-version notes, first run (library) | {later_first:.0} ms | {files} |"
    );
    println!(
        "| update after editing one leaf sidecar, later-version notes, issues unchanged (library) | {:.1} ms | {later_n} |",
        m(&later_leaf)
    );
    println!(
        "| update after editing one leaf sidecar, later-version notes, an issue new or resolved (library) | {:.1} ms | {later_n} |",
        m(&later_bad)
    );
    let nidos = build_binary()?;
    let watch = watch_latency(&nidos, &root, leaf, s.runs)?;
    println!(
        "| `--watch`: write of the leaf sidecar → totals printed (binary) | {:.0} ms | |",
        m(&watch)
    );
    let (cache_first, cache_second) = cache_runs(&nidos, &root, s.runs)?;
    println!(
        "| `--cache`: first run (binary, wall) | {:.0} ms | |",
        m(&cache_first)
    );
    println!(
        "| `--cache`: second run, unchanged dataset (binary, wall) | {:.0} ms ({:.1} % of the first) | |",
        m(&cache_second),
        100.0 * m(&cache_second) / m(&cache_first)
    );
    std::fs::remove_dir_all(&root)?;
    Ok(())
}
