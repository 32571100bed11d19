//! Small helpers the chores share: building the release binary, medians, file counts,
//! finding a program on `PATH`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::root;

/// The wall time of one run of `program args`, from spawn to exit, in seconds (output
/// discarded; no `NIDOS_SCHEMA_DIR` or `NIDOS_TIMING` from the caller's environment). A
/// run must end with code 0 or 16 (issues found).
pub(crate) fn time_one(program: &Path, args: &[&str]) -> Result<f64> {
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .env_remove("NIDOS_SCHEMA_DIR")
        .env_remove("NIDOS_TIMING")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("running {}", program.display()))?;
    let elapsed = start.elapsed().as_secs_f64();
    match status.code() {
        Some(0) | Some(16) => Ok(elapsed),
        other => bail!(
            "{} {} exited with {other:?}",
            program.display(),
            args.join(" ")
        ),
    }
}

/// Builds `nidos` in release mode in this checkout; returns the path of a fresh copy of
/// the binary ([`installed_copy`]).
pub(crate) fn build_binary() -> Result<PathBuf> {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "-p", "nidos-cli"])
        .current_dir(root())
        .status()?;
    if !status.success() {
        bail!("building nidos failed");
    }
    installed_copy(&root().join("target/release/nidos"))
}

/// A fresh copy of the built binary in `target/bench/`, which the benches run: the form a
/// user runs (`cargo install` copies the binary into place). The linker's own output file
/// sits in the page cache in small pieces, so running it takes about 30 more page faults
/// on the program's code than running a copy (0.7 ms on a 135-file dataset here).
fn installed_copy(built: &Path) -> Result<PathBuf> {
    let dir = root().join("target/bench");
    std::fs::create_dir_all(&dir)?;
    let copy = dir.join("nidos");
    if !copy_is_current(built, &copy) {
        // A new file (not overwritten in place: the old one may be running elsewhere).
        let _ = std::fs::remove_file(&copy);
        std::fs::copy(built, &copy)?;
    }
    // A build and a copy leave over 100 MB to write back to disk, which the kernel would
    // do during the first timings: written out now, before any is taken.
    let _ = Command::new("sync").status();
    Ok(copy)
}

/// Whether `copy` was made from `built` as it is now: of its size, and written after it
/// (a build rewrites the binary; `false` when either cannot be read).
fn copy_is_current(built: &Path, copy: &Path) -> bool {
    match (std::fs::metadata(built), std::fs::metadata(copy)) {
        (Ok(b), Ok(c)) => {
            b.len() == c.len()
                && matches!((b.modified(), c.modified()), (Ok(bt), Ok(ct)) if ct >= bt)
        }
        _ => false,
    }
}

/// The median (NaN for no values).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The number of files under `dir` (directories not counted, unreadable ones skipped).
pub(crate) fn count_files(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(_) => n += 1,
                Err(_) => {}
            }
        }
    }
    n
}

/// The first executable file named `name` on `PATH`.
pub(crate) fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}
