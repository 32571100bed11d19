//! Runs the hostile cases of `tests/hostile/*.yaml` (at the repository root): one file a
//! case, one trial a file. A case is data: a bash `setup` that builds whatever the
//! attack needs in a fresh temporary directory, the `nidos` arguments to run there, what
//! may run beside it (`background`), what must hold after it (`after`), and the expected
//! outcome (exit code, texts in its output). Every run is watched: it is killed, and the
//! case fails, when it passes its wall-clock or resident-memory limit (10 s and 512 MB
//! unless the case says more), and a panic message in its stderr fails the case too.
//!
//! The format is described in `tests/hostile/README.md`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;

const BUILT: &str = env!("CARGO_BIN_EXE_nidos");

/// The binary under test: the one built with the tests, or `NIDOS_HOSTILE_BIN` (to show
/// that a case fails on an older build).
fn bin() -> String {
    std::env::var("NIDOS_HOSTILE_BIN")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| BUILT.to_string())
}
const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/hostile");
const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared");

#[derive(Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
struct Limits {
    /// Wall-clock seconds.
    wall_s: Option<f64>,
    /// Peak resident memory in MB (VmHWM, sampled while the run lasts).
    rss_mb: Option<u64>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Case {
    /// What was found (the issue it came from), in a sentence.
    finding: String,
    /// Bash run in the case's temporary directory before the command. `$NIDOS` is the
    /// binary, `$SHARED` the `../shared` folder.
    #[serde(default)]
    setup: String,
    /// The `nidos` arguments, run in the temporary directory.
    run: Vec<String>,
    /// Text written to the command's stdin (none: stdin is empty).
    #[serde(default)]
    stdin: Option<String>,
    /// A file (made by `setup`, relative to the case's directory) to use as the
    /// command's stdin instead of `stdin`, for input too large to write in the case.
    #[serde(default)]
    stdin_file: Option<String>,
    /// Bash started just before the command, beside it; killed when the command ends
    /// unless it ended first. Its exit status is not checked (`after` checks results).
    #[serde(default)]
    background: Option<String>,
    /// Seconds to wait after starting `background` before starting the command.
    #[serde(default)]
    background_lead_s: Option<f64>,
    /// Bash run after the command (with `$EXIT` its exit code); must exit 0.
    #[serde(default)]
    after: Option<String>,
    /// The accepted exit codes.
    exit: Vec<i32>,
    #[serde(default)]
    stdout_has: Vec<String>,
    #[serde(default)]
    stdout_lacks: Vec<String>,
    #[serde(default)]
    stderr_has: Vec<String>,
    #[serde(default)]
    stderr_lacks: Vec<String>,
    #[serde(default)]
    limits: Limits,
    /// Run the whole case (setup included) this many times (races).
    #[serde(default)]
    repeat: Option<u32>,
    /// Conditions without which the case is reported as ignored: `root`, `shared`,
    /// `chromium`.
    #[serde(default)]
    requires: Vec<String>,
}

const WALL_S: f64 = 10.0;
const RSS_MB: u64 = 512;

fn bash(script: &str, dir: &Path, extra: &[(&str, String)]) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg("-euo")
        .arg("pipefail")
        .arg("-c")
        .arg(script)
        .current_dir(dir);
    env(&mut cmd, dir);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd
}

/// The environment every process of a case sees: the binary, the shared folder, and a
/// cache and home inside the case's directory (nothing outside it is written).
fn env(cmd: &mut Command, dir: &Path) {
    cmd.env("PORT", port_of(dir))
        .env("NIDOS", bin())
        .env("SHARED", SHARED)
        .env("HOME", dir.join("home"))
        .env("NIDOS_CACHE_DIR", dir.join("cache"))
        .env("NO_COLOR", "1")
        .env_remove("NIDOS_SCHEMA_DIR");
}

/// The case's free local TCP port (`$PORT`), for a server the case starts in
/// `background`: chosen once per case directory, by binding port 0 and letting go.
fn port_of(dir: &Path) -> String {
    let file = dir.join(".port");
    if let Ok(p) = std::fs::read_to_string(&file) {
        return p;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port().to_string())
        .unwrap_or_default();
    let _ = std::fs::write(&file, &port);
    port
}

fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct Outcome {
    exit: Option<i32>,
    stdout: String,
    stderr: String,
    peak_kb: u64,
    elapsed: Duration,
}

/// Runs the command under the watchdog; `Err` when a limit is passed (the run is killed).
fn watched(case: &Case, dir: &Path) -> Result<Outcome, String> {
    let wall = Duration::from_secs_f64(case.limits.wall_s.unwrap_or(WALL_S));
    let rss_kb = case.limits.rss_mb.unwrap_or(RSS_MB) * 1024;
    let out_path = dir.join(".nidos-stdout");
    let err_path = dir.join(".nidos-stderr");
    let in_path = dir.join(".nidos-stdin");
    let in_path = match &case.stdin_file {
        Some(file) => dir.join(file),
        None => {
            std::fs::write(&in_path, case.stdin.as_deref().unwrap_or(""))
                .map_err(|e| e.to_string())?;
            in_path
        }
    };
    let bin = bin();
    let mut cmd = Command::new(&bin);
    let port = port_of(dir);
    cmd.args(case.run.iter().map(|a| a.replace("$PORT", &port)))
        .current_dir(dir);
    env(&mut cmd, dir);
    cmd.stdin(Stdio::from(
        std::fs::File::open(&in_path).map_err(|e| e.to_string())?,
    ))
    .stdout(Stdio::from(
        std::fs::File::create(&out_path).map_err(|e| e.to_string())?,
    ))
    .stderr(Stdio::from(
        std::fs::File::create(&err_path).map_err(|e| e.to_string())?,
    ));
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {bin}: {e}"))?;
    let pid = child.id();
    let mut peak = 0u64;
    let status = loop {
        if let Some(kb) = vm_hwm_kb(pid) {
            peak = peak.max(kb);
        }
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        let over_time = start.elapsed() > wall;
        let over_memory = peak > rss_kb;
        if over_time || over_memory {
            let _ = child.kill();
            let _ = child.wait();
            let what = if over_time {
                format!("ran past {wall:?}")
            } else {
                format!("passed {} MB resident ({} KiB)", rss_kb / 1024, peak)
            };
            let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
            let tail: String = stderr.chars().take(2000).collect();
            return Err(format!(
                "nidos {:?} {what}: killed\n--- stderr\n{tail}",
                case.run
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let read = |p: &Path| {
        std::fs::read(p)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    Ok(Outcome {
        exit: status.code(),
        stdout: read(&out_path),
        stderr: read(&err_path),
        peak_kb: peak,
        elapsed: start.elapsed(),
    })
}

fn check(case: &Case, o: &Outcome) -> Vec<String> {
    let mut wrong = Vec::new();
    if o.exit.is_none_or(|c| !case.exit.contains(&c)) {
        wrong.push(format!(
            "exit {:?}, expected one of {:?}",
            o.exit, case.exit
        ));
    }
    if o.stderr.contains("panicked") {
        wrong.push("nidos panicked".to_string());
    }
    let texts = [
        (&case.stdout_has, &o.stdout, "stdout", true),
        (&case.stdout_lacks, &o.stdout, "stdout", false),
        (&case.stderr_has, &o.stderr, "stderr", true),
        (&case.stderr_lacks, &o.stderr, "stderr", false),
    ];
    for (list, text, name, want) in texts {
        for t in list {
            if text.contains(t.as_str()) != want {
                let verb = if want { "lacks" } else { "has" };
                wrong.push(format!("{name} {verb} {t:?}"));
            }
        }
    }
    wrong
}

fn run_once(case: &Case) -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = tmp.path();
    for sub in ["home", "cache"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
    }
    if !case.setup.is_empty() {
        let out = bash(&case.setup, dir, &[])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "setup failed ({:?}):\n{}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
    }
    let mut background = match &case.background {
        Some(script) => {
            let child = bash(script, dir, &[])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| e.to_string())?;
            if let Some(s) = case.background_lead_s {
                std::thread::sleep(Duration::from_secs_f64(s));
            }
            Some(child)
        }
        None => None,
    };
    let outcome = watched(case, dir);
    if let Some(child) = background.as_mut() {
        if child.try_wait().ok().flatten().is_none() {
            // Let a writer that is mid-step finish it, then stop it.
            std::thread::sleep(Duration::from_millis(50));
            let _ = child.kill();
        }
        let _ = child.wait();
    }
    let o = outcome?;
    let mut wrong = check(case, &o);
    if let Some(script) = &case.after {
        let exit = o.exit.map_or("none".to_string(), |c| c.to_string());
        let out = bash(script, dir, &[("EXIT", exit)])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            wrong.push(format!(
                "`after` failed ({:?}):\n{}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    println!(
        "  {:.2} s, peak {} MB",
        o.elapsed.as_secs_f64(),
        o.peak_kb / 1024
    );
    if wrong.is_empty() {
        return Ok(());
    }
    let out: String = o.stdout.chars().take(1500).collect();
    let err: String = o.stderr.chars().take(1500).collect();
    Err(format!(
        "{}\n--- finding: {}\n--- stderr (start)\n{err}\n--- stdout (start)\n{out}",
        wrong.join("\n"),
        case.finding
    )
    .into())
}

fn run(case: &Case) -> Result<(), Failed> {
    for _ in 0..case.repeat.unwrap_or(1).max(1) {
        run_once(case)?;
    }
    Ok(())
}

/// Why a case cannot run here, if it cannot.
fn missing(case: &Case) -> Option<String> {
    for need in &case.requires {
        let ok = match need.as_str() {
            "root" => Command::new("id")
                .arg("-u")
                .output()
                .is_ok_and(|o| o.stdout.trim_ascii() == b"0"),
            "shared" => Path::new(SHARED).join("conformance").is_dir(),
            "chromium" => Command::new("chromium")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success()),
            other => return Some(format!("unknown requirement {other:?}")),
        };
        if !ok {
            return Some(format!("needs {need}"));
        }
    }
    None
}

fn case_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(CASES)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn main() {
    let args = Arguments::from_args();
    let trials = case_files()
        .into_iter()
        .map(|path| {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let parsed = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_saphyr::from_str::<Case>(&t).map_err(|e| e.to_string()));
            match parsed {
                Err(e) => Trial::test(
                    name,
                    move || Err(format!("case does not parse: {e}").into()),
                ),
                Ok(case) => {
                    let why = missing(&case);
                    let ignored = why.is_some();
                    Trial::test(name, move || run(&case))
                        .with_ignored_flag(ignored)
                        .with_kind(why.unwrap_or_default())
                }
            }
        })
        .collect();
    // Cases bound their memory one by one; running them one at a time keeps the bound
    // meaningful on a small machine.
    let mut args = args;
    args.test_threads = Some(1);
    libtest_mimic::run(&args, trials).exit();
}
