//! Fuzz seeds and crash inputs replayed as ordinary tests: every file under
//! `fuzz/seeds/<target>/` and `fuzz/regressions/<target>/` goes through the same library
//! calls as the cargo-fuzz target of that name (fuzz/fuzz_targets/<target>.rs), so a crash
//! once found stays fixed without needing a nightly toolchain. A crash input found by the
//! fuzzer is added by copying it to `fuzz/regressions/<target>/`.

use std::io::{Cursor, Write};
use std::path::Path;

use nidos_dataset::loaders::{gzip, json, nifti, tiff, tsv};

const FUZZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz");

fn json_sidecar(data: &[u8]) {
    if let Ok(l) = json::read_json_object(data) {
        let _ = json::to_value(&l.value);
    }
}

fn tsv_target(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let opts = if mode & 1 == 0 {
        tsv::TsvOptions::all()
    } else {
        tsv::TsvOptions::max_rows(usize::from(mode >> 4))
    };
    let cols = vec!["a".to_string(), "b".to_string()];
    let res = match (mode >> 1) & 3 {
        0 => tsv::read_tsv(rest, &opts),
        1 => tsv::read_tsv_gz(rest, &opts),
        2 => tsv::read_tsv_headerless(rest, &cols, &opts),
        _ => tsv::read_tsv_gz_headerless(rest, &cols, &opts),
    };
    if let Ok(l) = res {
        let t = &l.value;
        let n = t.kept_rows();
        for i in 0..t.n_cols() {
            let col = t.column_at(i).unwrap();
            assert_eq!(col.iter().count(), n);
            assert!(col.get(n).is_none());
        }
        assert!(n <= t.n_rows);
        let _ = t.to_value();
    }
}

fn nifti_target(data: &[u8]) {
    if let Ok(h) = nifti::read_nifti_header(data) {
        let _ = h.to_value();
    }
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    let gz = enc.finish().unwrap();
    // The in-memory reader validation uses agrees with the streaming one.
    for bytes in [data, gz.as_slice()] {
        let streamed = nifti::read_nifti_header_gz(Cursor::new(bytes)).map(|h| h.to_value());
        let in_memory = nifti::read_nifti_header_gz_bytes(bytes).map(|h| h.to_value());
        assert_eq!(format!("{streamed:?}"), format!("{in_memory:?}"));
    }
}

fn gzip_target(data: &[u8]) {
    if let Ok(h) = gzip::read_gzip_header(data) {
        assert!(h.header_len <= data.len());
        let _ = h.to_value();
    }
}

fn tiff_target(data: &[u8]) {
    if let Ok(t) = tiff::read_tiff(data) {
        let _ = t.to_value();
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = tiff::read_ome_xml(s);
    }
}

fn filename_target(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let name = String::from_utf8_lossy(rest);
    let _ = nidos_dataset::parse_name(&name, mode & 1 == 1);
    let (stem, ext) = nidos_dataset::filename::split_extension(&name);
    assert!(name.ends_with(ext) && name.starts_with(stem));
}

fn schema_target(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let _ = nidos_schema::check_value(&v, false);
    let _ = nidos_schema::check_value(&v, true);
    let _ = nidos_schema::resolve_refs(v.clone());
    let _ = nidos_schema::Schema::from_compiled_json(v);
}

fn parse_eval_target(data: &[u8]) {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(expr) = nidos_expr::parse(src) else {
        return;
    };
    let ctx = nidos_expr::ObjectContext::from_json(&serde_json::json!({"suffix": "bold"}));
    let _ = nidos_expr::eval(&expr, &ctx);
    let printed = expr.to_string();
    assert_eq!(nidos_expr::parse(&printed).ok(), Some(expr));
}

type Target = fn(&[u8]);

const TARGETS: &[(&str, Target)] = &[
    ("json_sidecar", json_sidecar),
    ("tsv", tsv_target),
    ("nifti", nifti_target),
    ("gzip_header", gzip_target),
    ("tiff", tiff_target),
    ("filename", filename_target),
    ("schema", schema_target),
    ("parse_eval", parse_eval_target),
];

#[test]
fn replay_seeds_and_regressions() {
    let mut n = 0;
    for (name, f) in TARGETS {
        for kind in ["seeds", "regressions"] {
            let dir = Path::new(FUZZ).join(kind).join(name);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
            files.sort();
            for p in files {
                let data = std::fs::read(&p).unwrap();
                // A panic names the input that caused it.
                let r = std::panic::catch_unwind(|| f(&data));
                assert!(r.is_ok(), "{name}: {} panics", p.display());
                n += 1;
            }
        }
    }
    println!("{n} inputs replayed");
    assert!(n > 0, "no fuzz inputs found under {FUZZ}");
}
