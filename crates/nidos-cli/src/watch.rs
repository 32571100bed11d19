//! `nidos validate --watch DIR`: validate once, then again on every change to the
//! dataset through an incremental session (`nidos_validate::incremental`), printing what
//! changed. File-system notifications come from `notify`; a burst of them (an editor's
//! save: a temporary file, a rename) is taken as one change once the dataset has been
//! quiet for [`QUIET`]. Ctrl-C stops (exit 0).
//!
//! The report of the first run is written as `validate` writes it; after each change,
//! stdout gets one line per issue resolved (`- `) and new (`+ `), then the totals:
//!
//! ```text
//! changed: /sub-01/anat/sub-01_T1w.json (1 file checked again, 3 ms)
//! + error JSON_SCHEMA_VALIDATION_ERROR /sub-01/anat/sub-01_T1w.json RepetitionTime: …
//! totals: 1 error, 12 warnings (1 new, 0 resolved)
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use nidos_schema::Schema;
use nidos_validate::emit::escape;
use nidos_validate::incremental::{load_rules, totals, Delta, Outcome, Session};
use nidos_validate::{Issue, Report, Request, Severity};
use notify::event::{AccessKind, AccessMode, EventKind, MetadataKind, ModifyKind};
use notify::{RecursiveMode, Watcher};

use crate::schema_arg;

/// How long the dataset must be quiet before a burst of changes is validated.
const QUIET: Duration = Duration::from_millis(30);
/// The longest a burst is gathered before it is validated anyway.
const LONGEST_BURST: Duration = Duration::from_secs(1);

enum Event {
    Changed(Vec<PathBuf>),
    Stop,
}

/// Whether a notification may mean changed content or names (reads, which the
/// validation itself makes, and access times do not).
fn relevant(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Other => false,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        _ => true,
    }
}

/// Watches the dataset at `dir`; `first_report` writes the first run's whole report (as
/// `nidos validate` would, in the format asked for), the changes follow as lines.
pub fn run(
    dir: &std::path::Path,
    request: &Request,
    first_report: &dyn Fn(&mut dyn Write, &Schema, &Report) -> std::io::Result<()>,
) -> anyhow::Result<ExitCode> {
    let (tx, rx) = mpsc::channel::<Event>();
    let stop = tx.clone();
    ctrlc::set_handler(move || {
        let _ = stop.send(Event::Stop);
    })
    .context("cannot catch Ctrl-C")?;
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(e) = res {
            if relevant(&e.kind) && !e.paths.is_empty() {
                let _ = tx.send(Event::Changed(e.paths));
            }
        }
    })
    .context("cannot watch the dataset")?;
    watcher
        .watch(dir, RecursiveMode::Recursive)
        .with_context(|| format!("cannot watch {}", escape::path(dir)))?;
    let mut first = true;
    loop {
        // (Again when the rules' inputs change: the description, the ignore file.)
        let (schema, warnings) = load_rules(dir, request).map_err(schema_arg::run_error)?;
        for w in &warnings {
            eprintln!("nidos: warning: {}", escape::keep_lines(w));
        }
        let mut session = Session::new(&schema, dir, request).map_err(schema_arg::run_error)?;
        let mut out = std::io::stdout().lock();
        if first {
            first_report(&mut out, &schema, session.report())?;
            first = false;
        } else {
            writeln!(out, "rules reloaded: the whole dataset validated again")?;
        }
        print_totals(&mut out, session.report(), None)?;
        out.flush()?;
        drop(out);
        eprintln!(
            "nidos: watching {} for changes (Ctrl-C stops)",
            escape::path(dir)
        );
        loop {
            let Some(paths) = next_burst(&rx) else {
                return Ok(ExitCode::SUCCESS);
            };
            let started = Instant::now();
            let names: Vec<String> = paths
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            match session.update(&names).map_err(schema_arg::run_error)? {
                Outcome::Updated(delta) => {
                    let mut out = std::io::stdout().lock();
                    print_delta(&mut out, dir, &paths, &delta, started.elapsed())?;
                    print_totals(&mut out, session.report(), Some(&delta))?;
                    out.flush()?;
                }
                Outcome::RulesChanged => break,
            }
        }
    }
}

/// The paths of the next burst of changes (`None`: stop).
fn next_burst(rx: &mpsc::Receiver<Event>) -> Option<Vec<PathBuf>> {
    let mut paths = match rx.recv() {
        Ok(Event::Changed(p)) => p,
        Ok(Event::Stop) | Err(_) => return None,
    };
    let began = Instant::now();
    while began.elapsed() < LONGEST_BURST {
        match rx.recv_timeout(QUIET) {
            Ok(Event::Changed(p)) => paths.extend(p),
            Ok(Event::Stop) => return None,
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
    paths.sort();
    paths.dedup();
    Some(paths)
}

fn print_delta(
    out: &mut impl Write,
    dir: &std::path::Path,
    paths: &[PathBuf],
    delta: &Delta,
    took: Duration,
) -> std::io::Result<()> {
    let shown: Vec<String> = paths
        .iter()
        .map(|p| {
            let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
            let rel = p
                .strip_prefix(dir)
                .or_else(|_| p.strip_prefix(&abs))
                .unwrap_or(p);
            format!("/{}", rel.to_string_lossy().trim_start_matches('/'))
        })
        .collect();
    let n = delta.rechecked.len();
    writeln!(
        out,
        "changed: {} ({n} file{} checked again, {} ms)",
        escape::control(&shown.join(", ")),
        if n == 1 { "" } else { "s" },
        took.as_millis()
    )?;
    for i in &delta.resolved {
        writeln!(out, "- {}", line(i))?;
    }
    for i in &delta.new {
        writeln!(out, "+ {}", line(i))?;
    }
    Ok(())
}

/// One issue on one line: severity, code, location, sub-code, message.
fn line(i: &Issue) -> String {
    let severity = match i.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "note",
    };
    let mut s = format!("{severity} {} {}", i.code().as_str(), &*i.location);
    if !i.sub_code().is_empty() {
        s.push(' ');
        s.push_str(i.sub_code().as_str());
    }
    if let Some(m) = i.issue_message() {
        s.push_str(": ");
        s.push_str(m);
    }
    escape::control(&s).into_owned()
}

fn print_totals(
    out: &mut impl Write,
    report: &Report,
    delta: Option<&Delta>,
) -> std::io::Result<()> {
    let (errors, warnings) = totals(report);
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    write!(
        out,
        "totals: {}, {}",
        plural(errors, "error"),
        plural(warnings, "warning")
    )?;
    if let Some(d) = delta {
        write!(out, " ({} new, {} resolved)", d.new.len(), d.resolved.len())?;
    }
    writeln!(out)
}
