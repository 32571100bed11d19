//! `cargo xtask bench-lsp [--subjects N] [--edits K] [--bin PATH]`: how long `nidos lsp` takes to
//! answer an edit on a synthetic dataset (1,000 subjects ≈ 32,000 files by default),
//! beside a whole `nidos validate` of it in the same run. The bench speaks the protocol
//! to the release binary over pipes, as an editor does: it opens a leaf sidecar and the
//! top-level sidecar every bold file inherits, and times each `didChange` (a syntax
//! error put in, then taken out) until the diagnostics of that file arrive. A server
//! that stays silent for two minutes is stopped and the bench fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::bench::{dataset, measure, time_works};
use crate::tools::{build_binary, median};

/// Seconds the bench waits for a message before it gives up on the server.
const SILENCE_S: u64 = 120;

pub fn run(args: &[String]) -> Result<()> {
    let subjects: u32 = crate::flag_or(args, "--subjects", 1000)?;
    let edits: usize = crate::flag_or(args, "--edits", 10)?;
    // `--bin PATH`: an already built binary (the default builds the release one).
    let bin = match crate::flag(args, "--bin") {
        Some(p) => std::fs::canonicalize(&p).with_context(|| format!("--bin {p}"))?,
        None => build_binary()?,
    };
    let (dir, files) = dataset("Std", subjects)?;
    let full = measure(
        &bin,
        &[
            "validate".to_owned(),
            dir.to_string_lossy().into_owned(),
            "--format".to_owned(),
            "json".to_owned(),
            "-o".to_owned(),
            "/dev/null".to_owned(),
        ],
        &[0, 16],
        time_works(),
    )?;
    let leaf = first_leaf_sidecar(&dir)?;
    let top = first_top_sidecar(&dir)?;
    let mut server = Server::start(&bin, &dir)?;
    let started = Instant::now();
    server.initialize(&dir)?;
    let ready = started.elapsed();
    println!(
        "nidos lsp on {} ({files} files); whole `nidos validate`: {:.2} s\n",
        dir.display(),
        full.wall
    );
    println!("| edit | median (ms) | max (ms) |");
    println!("|---|---:|---:|");
    println!(
        "| first validation (initialize → answered) | {:.0} | |",
        ready.as_secs_f64() * 1000.0
    );
    for (what, path) in [("leaf sidecar", &leaf), ("top-level sidecar", &top)] {
        let times = server.edit_cycle(path, edits)?;
        let ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        let max = ms.iter().copied().fold(0.0, f64::max);
        println!(
            "| {what} ({}) | {:.1} | {max:.1} |",
            rel(&dir, path),
            median(ms)
        );
    }
    server.stop()
}

fn rel(dir: &Path, p: &Path) -> String {
    p.strip_prefix(dir)
        .map(|r| r.display().to_string())
        .unwrap_or_default()
}

/// A sidecar next to its data file (inside a datatype folder).
fn first_leaf_sidecar(dir: &Path) -> Result<std::path::PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d)?.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries.iter().rev() {
            if p.is_dir() {
                stack.push(p.clone());
            } else if p.extension().is_some_and(|e| e == "json")
                && p.parent()
                    .is_some_and(|f| f.ends_with("func") || f.ends_with("anat"))
            {
                return Ok(p.clone());
            }
        }
    }
    bail!("no sidecar in a datatype folder under {}", dir.display())
}

/// The top-level sidecar of bold files.
fn first_top_sidecar(dir: &Path) -> Result<std::path::PathBuf> {
    let mut tops: Vec<_> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with("_bold.json"))
        .collect();
    tops.sort();
    tops.into_iter()
        .next()
        .with_context(|| format!("no top-level *_bold.json in {}", dir.display()))
}

struct Server {
    /// Seconds since the last message was asked for; past [`SILENCE_S`] the server is
    /// killed (its output then ends, and the bench fails instead of hanging).
    watchdog: Arc<AtomicU64>,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

impl Server {
    fn start(bin: &Path, dir: &Path) -> Result<Server> {
        let mut child = Command::new(bin)
            .arg("lsp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting nidos lsp")?;
        let watchdog = Arc::new(AtomicU64::new(0));
        let (w, pid) = (watchdog.clone(), child.id());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(1));
            if w.fetch_add(1, Ordering::SeqCst) > SILENCE_S {
                let _ = Command::new("kill").arg(pid.to_string()).status();
                return;
            }
        });
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?);
        Ok(Server {
            watchdog,
            child,
            stdin,
            stdout,
            next_id: 1,
        })
    }

    fn send(&mut self, msg: Value) -> Result<()> {
        let text = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{text}", text.len())?;
        self.stdin.flush()?;
        Ok(())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        Ok(id)
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<()> {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    fn receive(&mut self) -> Result<Value> {
        self.watchdog.store(0, Ordering::SeqCst);
        let mut len = None;
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("nidos lsp closed its output");
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length:") {
                len = Some(v.trim().parse::<usize>()?);
            }
        }
        let mut body = vec![0; len.context("no Content-Length")?];
        self.stdout.read_exact(&mut body)?;
        Ok(serde_json::from_slice(&body)?)
    }

    /// Reads until the response to `id` (notifications before it are dropped).
    fn response(&mut self, id: u64) -> Result<Value> {
        loop {
            let m = self.receive()?;
            if m.get("id").and_then(Value::as_u64) == Some(id) && m.get("method").is_none() {
                return Ok(m);
            }
        }
    }

    fn initialize(&mut self, dir: &Path) -> Result<()> {
        let root = uri(dir);
        let id = self.request(
            "initialize",
            json!({"processId": null, "rootUri": root, "capabilities": {},
                   "workspaceFolders": [{"uri": root, "name": "dataset"}]}),
        )?;
        self.response(id)?;
        self.notify("initialized", json!({}))?;
        // A request is answered after the first validation.
        let id = self.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": root}, "position": {"line": 0, "character": 0}}),
        )?;
        self.response(id)?;
        Ok(())
    }

    /// Opens `path`, then `edits` times puts a wrong value in (or takes it out) and
    /// times each change until the file's diagnostics are published.
    fn edit_cycle(&mut self, path: &Path, edits: usize) -> Result<Vec<Duration>> {
        let text = std::fs::read_to_string(path)?;
        // A syntax error: an issue of this very file, whatever rules apply to it.
        let bad = text.replacen('{', "{\n  \"Broken\": ,", 1);
        let u = uri(path);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "json", "version": 1, "text": text}}),
        )?;
        let mut times = Vec::new();
        for i in 0..edits {
            let now = if i % 2 == 0 { &bad } else { &text };
            let t0 = Instant::now();
            self.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": u, "version": i + 2},
                       "contentChanges": [{"text": now}]}),
            )?;
            loop {
                let m = self.receive()?;
                if m.get("method").and_then(Value::as_str)
                    == Some("textDocument/publishDiagnostics")
                    && m["params"]["uri"].as_str() == Some(u.as_str())
                {
                    break;
                }
            }
            times.push(t0.elapsed());
        }
        self.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}))?;
        Ok(times)
    }

    fn stop(mut self) -> Result<()> {
        let id = self.request("shutdown", Value::Null)?;
        self.response(id)?;
        self.notify("exit", Value::Null)?;
        let status = self.child.wait()?;
        if !status.success() {
            bail!("nidos lsp exited with {status}");
        }
        Ok(())
    }
}
