//! Snapshots of the displayed context (`nidos context DIR PATH` output) of one file per
//! datatype found in the shared example datasets. Set `UPDATE_SNAPSHOTS=1` to rewrite.
//! Skips with a message when `../shared` is absent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nidos_dataset::{display_json, Dataset, OpenOptions, SchemaInfo};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance");

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn dataset_snapshots() {
    let shared = Path::new(SHARED);
    let schema_path = shared.join("schemas/bids-1.11.1-schema-1.2.7.json");
    if !schema_path.exists() {
        eprintln!(
            "SKIPPED: {} is absent (../shared not available)",
            schema_path.display()
        );
        return;
    }
    let schema = nidos_schema::load_path(&schema_path).unwrap();
    let info = Arc::new(SchemaInfo::from_schema(&schema));
    let mut examples: Vec<PathBuf> = std::fs::read_dir(shared.join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    // `synthetic` first (its NIfTI files have real headers), then by name.
    examples.sort_by_key(|p| (!p.ends_with("synthetic"), p.clone()));
    // One (dataset, file) per datatype: the best-ranked data file (not .json), first in
    // sorted order among equals. Rank 0: suffix named after the datatype (`eeg`, `dwi`…);
    // 1: a main imaging suffix; 2: anything else; NIfTI files first within a rank.
    const MAIN: &[&str] = &[
        "T1w",
        "bold",
        "asl",
        "phasediff",
        "epi",
        "svs",
        "mrsi",
        "SEM",
        "events",
    ];
    let rank = |dt: &str, suffix: Option<&str>| match suffix {
        Some(s) if s == dt => 0,
        Some(s) if MAIN.contains(&s) => 1,
        _ => 2,
    };
    let mut chosen: BTreeMap<String, (usize, PathBuf, String)> = BTreeMap::new();
    for ex in &examples {
        let ds = Dataset::open_with(ex, info.clone(), &OpenOptions::default()).unwrap();
        for f in ds.files().iter().filter(|f| f.validated()) {
            if let Some(dt) = &f.datatype {
                let r = 2 * rank(dt, f.name.suffix.as_deref())
                    + usize::from(!f.name.extension.contains(".nii"));
                if f.name.extension != ".json" && chosen.get(dt).is_none_or(|c| c.0 > r) {
                    chosen.insert(dt.clone(), (r, ex.clone(), f.path.clone()));
                }
            }
        }
    }
    assert!(!chosen.is_empty());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/snapshots");
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    std::fs::create_dir_all(&dir).unwrap();
    let mut failed = Vec::new();
    for (dt, (_, ex, path)) in &chosen {
        let ds = Dataset::open_with(ex, info.clone(), &OpenOptions::default()).unwrap();
        let ctx = ds.context(ds.find(path).unwrap());
        let name = ex.file_name().unwrap().to_string_lossy();
        let snapshot = serde_json::json!({
            "command": format!("nidos context examples/{name} {path}"),
            "output": display_json(&ctx, false),
        });
        let text = serde_json::to_string_pretty(&snapshot).unwrap() + "\n";
        let file = dir.join(format!("context_{dt}.json"));
        if update {
            std::fs::write(&file, &text).unwrap();
            continue;
        }
        match std::fs::read_to_string(&file) {
            Ok(old) if old == text => {}
            Ok(_) => failed.push(format!(
                "{dt}: {} differs (UPDATE_SNAPSHOTS=1 to accept)",
                file.display()
            )),
            Err(_) => failed.push(format!(
                "{dt}: no snapshot {} (UPDATE_SNAPSHOTS=1 to create)",
                file.display()
            )),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
