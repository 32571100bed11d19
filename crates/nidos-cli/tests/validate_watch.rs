//! `nidos validate --watch` and `--cache` through the binary: the watcher prints the
//! issues an edit of a sidecar brings and takes away, and stops cleanly on Ctrl-C
//! (SIGINT); a second cached run gives the first run's report, and a damaged cache is
//! ignored with a warning.

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The longest any awaited line may take (a debug build validating on a busy machine).
const PATIENCE: Duration = Duration::from_secs(60);

fn dataset() -> tempfile::TempDir {
    support::dataset(&[
        (
            "dataset_description.json",
            r#"{"Name": "x", "StdVersion": "1.11.1", "Authors": ["A", "B"]}"#,
        ),
        (
            "README.md",
            "A small dataset for the watcher's test, nothing more.",
        ),
        ("participants.tsv", "participant_id\nsub-01\n"),
        ("sub-01/anat/sub-01_T1w.nii.gz", "x"),
        ("sub-01/anat/sub-01_T1w.json", r#"{"RepetitionTime": 2}"#),
    ])
}

/// Kills the watcher if the test fails before it stops it.
struct Watcher(Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lines of `rx` until one satisfies `want`; panics after [`PATIENCE`].
fn await_line(rx: &mpsc::Receiver<String>, seen: &mut Vec<String>, want: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                let done = want(&line);
                seen.push(line);
                if done {
                    return;
                }
            }
            Err(e) => panic!("no awaited line ({e}); stdout so far:\n{}", seen.join("\n")),
        }
    }
}

#[test]
fn watch_prints_what_an_edit_changes_and_stops_on_ctrl_c() {
    let ds = dataset();
    let sidecar = ds.path().join("sub-01/anat/sub-01_T1w.json");
    let child = support::nidos_with_schema()
        .args(["validate", "--watch"])
        .arg(ds.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut watcher = Watcher(child);
    let stdout = watcher.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    // The first run's report, then its totals: the dataset is watched from before it.
    await_line(&rx, &mut seen, |l| l.starts_with("totals: "));

    std::fs::write(&sidecar, r#"{"RepetitionTime": 2, "Manufacturer": 3}"#).unwrap();
    let bad = "error JSON_SCHEMA_VALIDATION_ERROR /sub-01/anat/sub-01_T1w.json Manufacturer";
    await_line(&rx, &mut seen, |l| {
        l.starts_with("changed: /sub-01/anat/sub-01_T1w.json")
    });
    await_line(&rx, &mut seen, |l| l.starts_with(&format!("+ {bad}")));
    await_line(&rx, &mut seen, |l| {
        l.starts_with("totals: ") && l.contains("new,")
    });

    std::fs::write(&sidecar, r#"{"RepetitionTime": 2}"#).unwrap();
    await_line(&rx, &mut seen, |l| l.starts_with(&format!("- {bad}")));
    await_line(&rx, &mut seen, |l| {
        l.starts_with("totals: ") && l.contains("1 resolved")
    });

    let pid = watcher.0.id().to_string();
    let sent = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = watcher.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the watcher did not stop on SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "stdout:\n{}", seen.join("\n"));
}

fn validate_json(ds: &Path, extra: &[&str]) -> (Option<i32>, Vec<u8>, String) {
    let out = support::validate_json_output(ds, extra);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), out.stdout, stderr)
}

#[test]
fn cached_runs_report_as_a_whole_run_does() {
    let ds = dataset();
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    let whole = validate_json(ds.path(), &[]);
    let first = validate_json(ds.path(), &["--cache", dir]);
    let second = validate_json(ds.path(), &["--cache", dir]);
    assert_eq!(first.1, whole.1);
    assert_eq!(second.1, whole.1);
    assert!(!second.2.contains("cache"), "{}", second.2);

    // An edit: the cached run equals a whole run of the edited dataset.
    let sidecar = ds.path().join("sub-01/anat/sub-01_T1w.json");
    std::fs::write(&sidecar, r#"{"RepetitionTime": 2, "Manufacturer": 3}"#).unwrap();
    let whole = validate_json(ds.path(), &[]);
    let cached = validate_json(ds.path(), &["--cache", dir]);
    assert_eq!(cached.1, whole.1);
    assert_ne!(cached.1, first.1);

    // Damaged: ignored with a warning, the report still a whole run's.
    let files: Vec<_> = std::fs::read_dir(cache.path()).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let file = files[0].path();
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let damaged = validate_json(ds.path(), &["--cache", dir]);
    assert_eq!(damaged.1, whole.1);
    assert!(damaged.2.contains("ignoring the cache"), "{}", damaged.2);

    // A folder inside the dataset is refused.
    let inside = ds.path().join("cache");
    let refused = validate_json(ds.path(), &["--cache", inside.to_str().unwrap()]);
    assert_eq!(refused.0, Some(2), "{}", refused.2);
    assert!(!inside.exists());
}

/// A run over an unchanged dataset writes the stored report: byte for byte a whole
/// run's, with its exit code, in JSON and in text; a format not stored yet is
/// validated (then stored in its turn).
#[test]
fn stored_reports_equal_whole_runs_in_each_format() {
    let ds = dataset();
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let out = support::nidos_with_schema()
            .arg("validate")
            .arg(ds.path())
            .args(args)
            .env("NIDOS_TIMING", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), out.stdout, stderr)
    };
    for format in ["json", "text", "json"] {
        let whole = run(&["--format", format]);
        let first = run(&["--format", format, "--cache", dir]);
        let second = run(&["--format", format, "--cache", dir]);
        assert!(!first.2.contains("stored report"), "{format}: {}", first.2);
        assert!(
            second.2.contains("write stored report"),
            "{format}: {}",
            second.2
        );
        assert_eq!(first.0, whole.0, "{format}");
        assert_eq!(second.0, whole.0, "{format}");
        assert_eq!(first.1, whole.1, "{format}");
        assert_eq!(second.1, whole.1, "{format}");
    }
}
