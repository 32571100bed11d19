//! Load time of the compiled upstream schemas (target: < 20 ms in release; measured
//! about 9 ms for 1.11.1 and 8.5 ms for 1.8.0 on the 2-core project machine).
//! Run: `cargo bench -p nidos-schema --bench load`.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};

fn schemas_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/schemas"
    ))
}

fn bench_load(c: &mut Criterion) {
    let dir = schemas_dir();
    for name in ["bids-1.8.0.json", "bids-1.11.1.json"] {
        let path = dir.join(name);
        if !path.is_file() {
            eprintln!("skipping {name}: {} is absent", path.display());
            continue;
        }
        let opts = nidos_schema::LoadOptions {
            tolerate_expression_errors: true,
            ..Default::default()
        };
        c.bench_function(&format!("load {name}"), |b| {
            b.iter(|| {
                nidos_schema::load_path_with(&path, &opts)
                    .map(|s| s.checks.len())
                    .unwrap_or(0)
            })
        });
    }
}

criterion_group!(benches, bench_load);
criterion_main!(benches);
