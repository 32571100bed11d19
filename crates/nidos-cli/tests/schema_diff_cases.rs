//! Runs `tests/data/schema-diff/*.yaml`: each file one `nidos schema diff A B` between two
//! versions of the bundled rules, with the changelog items (per section, `<mark> <name>`,
//! marks `+` added, `~` changed, `!` deprecated, `-` removed) its output must and must not
//! list. One trial per file.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;

const BIN: &str = env!("CARGO_BIN_EXE_nidos");
const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/schema-diff");
const SCHEMA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    a: String,
    b: String,
    /// Section → items the changelog lists.
    #[serde(default)]
    has: BTreeMap<String, Vec<String>>,
    /// Section → items it must not list.
    #[serde(default)]
    lacks: BTreeMap<String, Vec<String>>,
}

/// The changelog's items: section → `<mark> <name>` (the detail after `: ` left out).
fn items(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut section = String::new();
    for line in text.lines() {
        if let Some(item) = line.strip_prefix("  ") {
            let name = item.split(": ").next().unwrap_or(item);
            out.entry(section.clone())
                .or_default()
                .push(name.to_owned());
        } else if let Some(s) = line.strip_suffix(':') {
            section = s.to_owned();
        }
    }
    out
}

fn run(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: Case = serde_saphyr::from_str(&text).map_err(|e| e.to_string())?;
    let out = Command::new(BIN)
        .args(["schema", "diff", &case.a, &case.b])
        .env("NIDOS_SCHEMA_DIR", SCHEMA_DIR)
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let got = items(&stdout);
    let mut wrong = Vec::new();
    for (section, want) in &case.has {
        let listed = got.get(section).cloned().unwrap_or_default();
        for w in want {
            if !listed.contains(w) {
                wrong.push(format!("{section}: lacks {w:?}"));
            }
        }
    }
    for (section, unwanted) in &case.lacks {
        let listed = got.get(section).cloned().unwrap_or_default();
        for w in unwanted {
            if listed.contains(w) {
                wrong.push(format!("{section}: lists {w:?}"));
            }
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n--- output\n{stdout}", wrong.join("\n")).into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut files: Vec<_> = std::fs::read_dir(CASES)
        .expect("the schema-diff cases directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let trials = files
        .into_iter()
        .map(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            Trial::test(name, move || run(&p))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
