//! `nidos repl` driven through stdin, as a scripted session: the schema's warnings
//! are printed once however many `:file` commands follow, and an input with open
//! brackets continues under the continuation prompt.

mod support;

use std::process::Command;

use support::{output_with_stdin, BIN};

/// Runs `script` through `nidos repl` on a new [`dataset`]: (stdout, stderr).
fn repl(script: &str) -> (String, String) {
    let ds = dataset();
    let dir = ds.path();
    let out = output_with_stdin(
        Command::new(BIN)
            .arg("repl")
            .arg(dir)
            .env("HOME", dir.join("home")),
        script,
    );
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn dataset() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    // A version the rules do not cover: choosing the schema warns.
    std::fs::write(
        root.join("dataset_description.json"),
        r#"{"Name": "repl", "BIDSVersion": "1.2.7"}"#,
    )
    .expect("description");
    std::fs::create_dir_all(root.join("sub-01/anat")).expect("dirs");
    std::fs::create_dir_all(root.join("home")).expect("home");
    std::fs::write(root.join("sub-01/anat/sub-01_T1w.nii.gz"), b"x").expect("file");
    std::fs::write(
        root.join("sub-01/anat/sub-01_T1w.json"),
        r#"{"EchoTime": 0.03}"#,
    )
    .expect("sidecar");
    dir
}

#[test]
fn the_schema_warning_is_printed_once() {
    let (stdout, stderr) = repl(
        ":file sub-01/anat/sub-01_T1w.nii.gz\nsuffix\n:file sub-01/anat/sub-01_T1w.json\nextension\n:file sub-01/anat/sub-01_T1w.nii.gz\n:quit\n",
    );
    let warnings = stderr.matches("warning").count();
    assert_eq!(warnings, 1, "stderr: {stderr}");
    assert!(stdout.contains("\"T1w\""), "{stdout}");
    assert!(stdout.contains("\".json\""), "{stdout}");
}

#[test]
fn open_brackets_continue_on_the_next_line() {
    let (stdout, stderr) = repl(
        ":file sub-01/anat/sub-01_T1w.nii.gz\nintersects([suffix,\n  'bold'],\n ['T1w'])\n'a(' + \"b\"\n:quit\n",
    );
    assert!(stdout.contains("[\"T1w\"]"), "{stdout}\n{stderr}");
    assert!(stdout.contains("\"a(b\""), "{stdout}\n{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

/// Before `:file`, reading a context field gives null: the REPL says why, once a file
/// is chosen it does not.
#[test]
fn fields_read_before_file_get_a_hint() {
    let (stdout, stderr) =
        repl("suffix\n1 + 1\n:file sub-01/anat/sub-01_T1w.nii.gz\nsuffix\n:quit\n");
    assert_eq!(
        stdout.matches("hint: no file selected").count(),
        1,
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains(":file PATH"), "{stdout}");
    assert!(stdout.contains("\"T1w\""), "{stdout}");
}

/// `nidos repl DATASET` in a detached tmux session, read through its screen; the server
/// is stopped on drop. `None` when tmux is not installed.
struct Terminal {
    socket: String,
    _ds: tempfile::TempDir,
}

impl Terminal {
    fn start(name: &str) -> Option<Terminal> {
        if Command::new("tmux").arg("-V").output().is_err() {
            println!("skip: tmux is not installed");
            return None;
        }
        let ds = dataset();
        let term = Terminal {
            socket: format!("nidos-test-{name}-{}", std::process::id()),
            _ds: ds,
        };
        let dir = term._ds.path();
        let command = format!(
            "env HOME={} NO_COLOR=1 {BIN} repl {}",
            dir.join("home").display(),
            dir.display()
        );
        let started = term.tmux(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "150",
            "-y",
            "40",
            &command,
        ]);
        assert!(started.status.success(), "{started:?}");
        term.wait_for(&["nidos>"]);
        Some(term)
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Waits (up to 10 s) until the screen shows every one of `what`.
    fn wait_for(&self, what: &[&str]) -> String {
        let mut last = String::new();
        for _ in 0..100 {
            last = String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "t"]).stdout)
                .to_string();
            if what.iter().all(|w| last.contains(w)) {
                return last;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("{what:?} never appeared on the screen:\n{last}");
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// One step of a terminal session: the keys sent, then the texts awaited on the screen.
type Step<'a> = (&'a [&'a str], &'a [&'a str]);

/// Runs `steps` in a new terminal session (named `name`), then quits; nothing when
/// tmux is not installed.
fn in_terminal(name: &str, steps: &[Step<'_>]) {
    let Some(term) = Terminal::start(name) else {
        return;
    };
    for (keys, screen) in steps {
        term.keys(keys);
        term.wait_for(screen);
    }
    term.keys(&[":quit", "Enter"]);
}

/// In a terminal: the continuation prompt, and Tab completing a `:file` path.
#[test]
fn terminal_session_shows_continuation_prompt_and_completes_paths() {
    in_terminal(
        "session",
        &[
            (&[":file sub-0", "Tab"], &[":file sub-01/"]),
            (&["an", "Tab"], &[":file sub-01/anat/"]),
            (
                &["sub-01_T1w.n", "Tab"],
                &[":file sub-01/anat/sub-01_T1w.nii.gz"],
            ),
            (&["Enter"], &["context: sub-01/anat/sub-01_T1w.nii.gz"]),
            (&["[suffix,", "Enter"], &["  ...>"]),
            (&["'x']", "Enter"], &["[\"T1w\",\"x\"]"]),
        ],
    );
}

/// In a terminal: once `:file` chose a file, the prompt names it.
#[test]
fn terminal_prompt_names_the_current_file() {
    in_terminal(
        "prompt",
        &[(
            &[":file sub-01/anat/sub-01_T1w.nii.gz", "Enter"],
            &["nidos sub-01_T1w.nii.gz>"],
        )],
    );
}

/// In a terminal: Tab lists the candidates at once rather than cycling through them
/// one by one.
#[test]
fn terminal_tab_lists_the_candidates() {
    in_terminal(
        "list",
        &[
            (
                &[":file sub-01/anat/sub-01_T1w.nii.gz", "Enter"],
                &["context: sub-01/anat/sub-01_T1w.nii.gz"],
            ),
            // `s` starts several fields and functions: two Tabs list them side by side.
            (&["s", "Tab", "Tab"], &["sidecar", "suffix", "subject"]),
            (&["C-c"], &[]),
        ],
    );
}
