//! Embeds the bundled rule tree (`../../schema`) in the library, precompiled: every YAML
//! file is parsed here, the tree is assembled into one JSON document (directories and
//! files become nested keys, as the run-time loader does) and written to
//! `OUT_DIR/bundled.json`, with each file's text kept for `nidos schema export` in
//! `OUT_DIR/bundled-files.json`.
//! A file that does not parse is left to the run-time loader, which reports it with
//! its location (the embedded copy then holds the text only).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

#[path = "src/dir_entries.rs"]
mod dir_entries;

fn parse(text: &str) -> Option<Value> {
    let opts = serde_saphyr::options! { strict_booleans: true };
    serde_saphyr::from_str_with_options::<Value>(text, opts).ok()
}

fn walk(
    dir: &Path,
    rel: &str,
    files: &mut Map<String, Value>,
    ok: &mut bool,
) -> Map<String, Value> {
    let mut out = Map::new();
    let Ok(entries) = dir_entries::visible_entries(dir) else {
        *ok = false;
        return out;
    };
    for (name, p) in entries {
        let here = format!("{rel}/{name}");
        if p.is_dir() {
            let sub = walk(&p, &here, files, ok);
            out.insert(name, Value::Object(sub));
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            *ok = false;
            continue;
        };
        let is_yaml = name.ends_with(".yaml") || name.ends_with(".yml");
        if is_yaml {
            let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
            match parse(&text) {
                Some(v) => {
                    out.insert(stem.to_owned(), v);
                }
                None => *ok = false,
            }
        }
        files.insert(here.trim_start_matches('/').to_owned(), Value::String(text));
    }
    out
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../../schema");
    println!("cargo:rerun-if-changed={}", root.display());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    let mut files = Map::new();
    let mut ok = root.join("version.yaml").is_file();
    let mut tree = Map::new();
    for d in ["objects", "rules", "meta"] {
        let p = root.join(d);
        if p.is_dir() {
            tree.insert(
                d.to_owned(),
                Value::Object(walk(&p, d, &mut files, &mut ok)),
            );
        }
    }
    // Files at the root (version.yaml, README.md …) and every directory to watch.
    if let Ok(rd) = std::fs::read_dir(&root) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_file() {
                if let (Some(name), Ok(text)) = (
                    p.file_name().and_then(|n| n.to_str()),
                    std::fs::read_to_string(&p),
                ) {
                    files.insert(name.to_owned(), Value::String(text));
                }
            }
        }
    }
    let version = files
        .get("version.yaml")
        .and_then(Value::as_str)
        .and_then(parse)
        .unwrap_or(Value::Null);
    for rel in files.keys() {
        println!("cargo:rerun-if-changed={}", root.join(rel).display());
    }
    let mut doc = Map::new();
    // `parsed` is false when some file could not be read or parsed: the run-time loader
    // then loads from `files`, reporting the problem where it is.
    doc.insert("parsed".into(), Value::Bool(ok));
    doc.insert("version".into(), version);
    doc.insert("tree".into(), Value::Object(tree));
    // The files' texts are only needed by `nidos schema export`: a document of their
    // own, so a run does not parse them.
    for (name, value) in [
        ("bundled.json", Value::Object(doc)),
        ("bundled-files.json", Value::Object(files)),
    ] {
        let text = serde_json::to_string(&value).unwrap_or_default();
        if let Err(e) = std::fs::write(out_dir.join(name), text) {
            panic!("cannot write the embedded schema: {e}");
        }
    }
}
