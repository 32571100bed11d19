//! Micro-benchmarks of the pieces a validation run is made of:
//! `cargo bench -p nidos-validate --bench validate` (figures in docs/performance.md).
//!
//! - selector evaluation (typical selectors against a file-like context),
//! - file-name parsing,
//! - schema load (the bundled YAML tree and the upstream compiled JSON),
//! - TSV, JSON sidecar and gzipped NIfTI header loading.
//!
//! The upstream schema lives in `../shared`; its benchmark is skipped (with a message)
//! when that directory is absent.

use std::io::Write;
use std::path::PathBuf;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use nidos_expr::{eval, parse, ObjectContext};

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Selectors of the kinds the rule sets use most (constant comparisons of the file's
/// names, membership, regex tests, sidecar and entity access).
const SELECTORS: &[&str] = &[
    r#"suffix == "bold""#,
    r#"datatype == "func""#,
    r#"extension == ".json""#,
    r#"intersects([suffix], ["bold", "cbv", "sbref"])"#,
    r#"match(extension, "^\.nii(\.gz)?$")"#,
    r#"dataset.dataset_description.DatasetType == "derivative""#,
    r#""task" in entities"#,
    r#"type(sidecar.RepetitionTime) != "null""#,
    r#"modality == "mri""#,
    r#"sidecar.EchoTime < sidecar.RepetitionTime"#,
];

fn bench_selectors(c: &mut Criterion) {
    let ctx = ObjectContext::from_json(&serde_json::json!({
        "path": "/sub-01/ses-01/func/sub-01_ses-01_task-rest_bold.nii.gz",
        "suffix": "bold",
        "datatype": "func",
        "extension": ".nii.gz",
        "modality": "mri",
        "entities": {"subject": "01", "session": "01", "task": "rest", "sub": "01", "ses": "01"},
        "sidecar": {"RepetitionTime": 2, "EchoTime": 0.03, "TaskName": "rest"},
        "dataset": {"dataset_description": {"Name": "x", "DatasetType": "raw"}},
    }));
    let exprs: Vec<_> = SELECTORS
        .iter()
        .map(|s| parse(s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect();
    let mut group = c.benchmark_group("selectors");
    group.throughput(Throughput::Elements(exprs.len() as u64));
    group.bench_function("typical mix (elements = evaluations)", |b| {
        b.iter(|| {
            let mut n = 0u32;
            for e in &exprs {
                n += u32::from(eval(e, &ctx).truthy());
            }
            black_box(n)
        })
    });
    group.finish();
}

fn bench_filenames(c: &mut Criterion) {
    let names = [
        "sub-00001_ses-01_task-nback_run-1_bold.nii.gz",
        "sub-00001_ses-01_task-nback_run-1_events.tsv",
        "sub-00001_ses-01_acq-highres_T1w.json",
        "sub-00001_ses-01_dwi.bval",
        "sub-00001_ses-01_magnitude1.nii.gz",
        "sub-00001_ses-01_scans.tsv",
        "participants.tsv",
        "dataset_description.json",
    ];
    let mut group = c.benchmark_group("filenames");
    group.throughput(Throughput::Elements(names.len() as u64));
    group.bench_function("parse_name (elements = names)", |b| {
        b.iter(|| {
            let mut n = 0;
            for name in &names {
                n += nidos_dataset::parse_name(black_box(name), false)
                    .pairs
                    .len();
            }
            black_box(n)
        })
    });
    group.finish();
}

fn bench_schema_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("schema load");
    group.sample_size(10);
    let tree = repo().join("schema");
    if tree.is_dir() {
        group.bench_function("bundled YAML tree schema/", |b| {
            b.iter(|| {
                nidos_schema::load_path(&tree)
                    .map(|s| s.checks.len())
                    .unwrap_or(0)
            })
        });
    }
    let upstream = repo().join("../shared/conformance/schemas/bids-1.11.1-schema-1.2.7.json");
    if upstream.is_file() {
        let opts = nidos_schema::LoadOptions {
            tolerate_expression_errors: true,
            ..Default::default()
        };
        group.bench_function("compiled JSON bids-1.11.1-schema-1.2.7", |b| {
            b.iter(|| {
                nidos_schema::load_path_with(&upstream, &opts)
                    .map(|s| s.checks.len())
                    .unwrap_or(0)
            })
        });
    } else {
        eprintln!(
            "skipping compiled schema load: {} is absent",
            upstream.display()
        );
    }
    group.finish();
}

fn events_tsv(rows: usize) -> Vec<u8> {
    let mut s = String::from("onset\tduration\ttrial_type\tresponse_time\n");
    for i in 0..rows {
        s.push_str(&format!(
            "{}.5\t1.0\t{}\t{}\n",
            i * 3,
            if i % 2 == 0 { "go" } else { "stop" },
            if i % 5 == 0 {
                "n/a".to_string()
            } else {
                format!("0.{}", 300 + i % 400)
            }
        ));
    }
    s.into_bytes()
}

fn nifti_gz() -> Vec<u8> {
    let mut hdr = vec![0u8; 352];
    hdr[0..4].copy_from_slice(&348i32.to_le_bytes());
    let dims: [i16; 8] = [4, 64, 64, 32, 100, 1, 1, 1];
    for (i, d) in dims.iter().enumerate() {
        hdr[40 + 2 * i..42 + 2 * i].copy_from_slice(&d.to_le_bytes());
    }
    hdr[70..72].copy_from_slice(&4i16.to_le_bytes());
    hdr[72..74].copy_from_slice(&16i16.to_le_bytes());
    let pix: [f32; 8] = [1.0, 3.0, 3.0, 3.0, 2.0, 0.0, 0.0, 0.0];
    for (i, p) in pix.iter().enumerate() {
        hdr[76 + 4 * i..80 + 4 * i].copy_from_slice(&p.to_le_bytes());
    }
    hdr[108..112].copy_from_slice(&352f32.to_le_bytes());
    hdr[123] = 2 | 8;
    hdr[344..348].copy_from_slice(b"n+1\0");
    hdr.extend(std::iter::repeat_n(0u8, 64 * 1024));
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&hdr).unwrap_or_default();
    enc.finish().unwrap_or_default()
}

fn bench_loading(c: &mut Criterion) {
    let mut group = c.benchmark_group("loading");
    let tsv = events_tsv(200);
    group.throughput(Throughput::Bytes(tsv.len() as u64));
    group.bench_function("TSV events, 200 rows", |b| {
        b.iter(|| {
            nidos_dataset::loaders::tsv::read_tsv(
                black_box(tsv.as_slice()),
                &nidos_dataset::loaders::tsv::TsvOptions::all(),
            )
            .map(|t| t.value.n_rows)
            .unwrap_or(0)
        })
    });
    let json = serde_json::to_vec_pretty(&serde_json::json!({
        "TaskName": "nback",
        "RepetitionTime": 2.0,
        "EchoTime": 0.03,
        "FlipAngle": 90,
        "SliceTiming": (0..32).map(|i| f64::from(i) * 0.0625).collect::<Vec<_>>(),
        "PhaseEncodingDirection": "j-",
        "Manufacturer": "Synthetic",
        "MagneticFieldStrength": 3,
        "CogAtlasID": "https://www.cognitiveatlas.org/task/id/tsk_4a57abb949bcd",
    }))
    .unwrap_or_default();
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function("JSON sidecar + context value", |b| {
        b.iter(|| {
            nidos_dataset::loaders::json::read_json_object(black_box(&json))
                .map(|m| nidos_dataset::loaders::json::to_value(&m.value).is_object())
                .unwrap_or(false)
        })
    });
    let nii = nifti_gz();
    group.throughput(Throughput::Elements(1));
    // As validation reads it: from the bytes of the file's prefix, in place.
    group.bench_function("NIfTI-1 header from .nii.gz", |b| {
        b.iter(|| {
            nidos_dataset::loaders::nifti::read_nifti_header_gz_bytes(black_box(nii.as_slice()))
                .is_ok()
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    bench_selectors,
    bench_filenames,
    bench_schema_load,
    bench_loading
);
criterion_main!(benches);
