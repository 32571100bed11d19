//! Runs `tests/data/cli/validate_cases.yaml`: each entry one `nidos` invocation with its
//! expected exit code and what its output must (not) say. One trial per entry.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;

const BIN: &str = env!("CARGO_BIN_EXE_nidos");
const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/cli/validate_cases.yaml"
);
const SCHEMA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema");

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    args: Vec<String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    links: BTreeMap<String, String>,
    /// Environment variables of the run (`{tmp}` in values is replaced).
    #[serde(default)]
    env: BTreeMap<String, String>,
    exit: i32,
    #[serde(default)]
    stderr_once: Vec<String>,
    #[serde(default)]
    stderr_has: Vec<String>,
    #[serde(default)]
    stderr_lacks: Vec<String>,
    #[serde(default)]
    stdout_starts: Option<String>,
    #[serde(default)]
    stdout_has: Vec<String>,
    #[serde(default)]
    stdout_lacks: Vec<String>,
    #[serde(default)]
    stdout_once: Vec<String>,
    /// The case reads `../shared` (upstream schemas, examples): reported ignored when
    /// absent.
    #[serde(default)]
    requires_shared: bool,
    /// Edits of a copy of the bundled rule tree at `{tmp}/tree`, which the command then
    /// reads through NIDOS_SCHEMA_DIR (the dataset is still made with the bundled one).
    #[serde(default)]
    tree_edits: Vec<TreeEdit>,
}

/// One text replacement in one file of the copied rule tree; the text must occur.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct TreeEdit {
    file: String,
    find: String,
    replace: String,
}

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared");

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// Copies the bundled tree to `tree` and applies `edits`.
fn edited_tree(tree: &Path, edits: &[TreeEdit]) -> Result<(), Failed> {
    copy_dir(Path::new(SCHEMA_DIR), tree).map_err(|e| e.to_string())?;
    for e in edits {
        let path = tree.join(&e.file);
        let text = std::fs::read_to_string(&path).map_err(|x| format!("{}: {x}", e.file))?;
        if !text.contains(&e.find) {
            return Err(format!("tree edit: {:?} not found in {}", e.find, e.file).into());
        }
        std::fs::write(&path, text.replacen(&e.find, &e.replace, 1)).map_err(|x| x.to_string())?;
    }
    Ok(())
}

fn nidos(args: &[String]) -> std::process::Output {
    nidos_in(args, SCHEMA_DIR, &BTreeMap::new())
}

fn nidos_in(
    args: &[String],
    schema_dir: &str,
    env: &BTreeMap<String, String>,
) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("NIDOS_SCHEMA_DIR", schema_dir)
        .env("NO_COLOR", "1")
        .envs(env)
        .output()
        .map_err(|e| format!("cannot run {BIN}: {e}"))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn run(case: &Case) -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = tmp.path();
    let ds = root.join("ds").to_string_lossy().to_string();
    let init = nidos(&["init".into(), ds, "--name".into(), "cases".into()]);
    if !init.status.success() {
        return Err(format!(
            "nidos init failed: {}",
            String::from_utf8_lossy(&init.stderr)
        )
        .into());
    }
    for (name, text) in &case.files {
        let path = root.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        std::fs::write(path, text).map_err(|e| e.to_string())?;
    }
    for (name, target) in &case.links {
        let path = root.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        symlink(target, &path)?;
    }
    let tmp_text = root.to_string_lossy().to_string();
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| a.replace("{tmp}", &tmp_text).replace("{shared}", SHARED))
        .collect();
    let schema_dir = if case.tree_edits.is_empty() {
        SCHEMA_DIR.to_string()
    } else {
        let tree = root.join("tree");
        edited_tree(&tree, &case.tree_edits)?;
        tree.to_string_lossy().to_string()
    };
    let env: BTreeMap<String, String> = case
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.replace("{tmp}", &tmp_text)))
        .collect();
    let out = nidos_in(&args, &schema_dir, &env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut wrong = Vec::new();
    if out.status.code() != Some(case.exit) {
        wrong.push(format!(
            "exit {:?}, expected {}",
            out.status.code(),
            case.exit
        ));
    }
    for t in &case.stderr_once {
        let n = stderr.matches(t.as_str()).count();
        if n != 1 {
            wrong.push(format!("stderr has {t:?} {n} times, expected once"));
        }
    }
    for t in &case.stderr_has {
        if !stderr.contains(t.as_str()) {
            wrong.push(format!("stderr lacks {t:?}"));
        }
    }
    for t in &case.stderr_lacks {
        if stderr.contains(t.as_str()) {
            wrong.push(format!("stderr has {t:?}"));
        }
    }
    if let Some(p) = &case.stdout_starts {
        if !stdout.starts_with(p.as_str()) {
            wrong.push(format!("stdout does not start with {p:?}"));
        }
    }
    for t in &case.stdout_has {
        if !stdout.contains(t.as_str()) {
            wrong.push(format!("stdout lacks {t:?}"));
        }
    }
    for t in &case.stdout_once {
        let n = stdout.matches(t.as_str()).count();
        if n != 1 {
            wrong.push(format!("stdout has {t:?} {n} times, expected once"));
        }
    }
    for t in &case.stdout_lacks {
        if stdout.contains(t.as_str()) {
            wrong.push(format!("stdout has {t:?}"));
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        let shown: String = stdout.chars().take(600).collect();
        Err(format!(
            "{}\n--- stderr\n{stderr}\n--- stdout (start)\n{shown}",
            wrong.join("\n")
        )
        .into())
    }
}

#[cfg(unix)]
fn symlink(target: &str, path: &Path) -> Result<(), Failed> {
    std::os::unix::fs::symlink(target, path).map_err(|e| e.to_string().into())
}

#[cfg(not(unix))]
fn symlink(_: &str, _: &Path) -> Result<(), Failed> {
    Err("symbolic link cases need a unix system".into())
}

fn main() {
    let args = Arguments::from_args();
    let text = std::fs::read_to_string(Path::new(CASES)).expect("cases file");
    let cases: Vec<Case> = serde_saphyr::from_str(&text).expect("cases parse");
    let trials = cases
        .into_iter()
        .map(|c| {
            // A case that reads ../shared is reported ignored where it is absent.
            let absent = c.requires_shared && !Path::new(SHARED).join("conformance").is_dir();
            Trial::test(c.name.clone(), move || run(&c))
                .with_ignored_flag(absent)
                .with_kind(if absent { "needs ../shared" } else { "" })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
