//! Timing of walking a 32,000-file dataset and building every file's context with the
//! parts rules read most (entities, sidecar, associations). Ignored by default:
//! `cargo test --release -p nidos-dataset --test dataset_perf -- --ignored --nocapture`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use nidos_dataset::{Dataset, OpenOptions, SchemaInfo};
use nidos_expr::Context;

const SCHEMA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/schemas/bids-1.11.1-schema-1.2.7.json"
);

#[test]
#[ignore]
fn dataset_perf_32k() {
    if !Path::new(SCHEMA).exists() {
        eprintln!("SKIPPED: {SCHEMA} is absent");
        return;
    }
    let schema = nidos_schema::load_path(Path::new(SCHEMA)).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(
        root.join("dataset_description.json"),
        r#"{"Name":"perf","BIDSVersion":"1.11.1"}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("task-rest_bold.json"),
        r#"{"RepetitionTime":2,"TaskName":"rest"}"#,
    )
    .unwrap();
    let mut participants = String::from("participant_id\n");
    let mut n = 2;
    for s in 0..400 {
        let sub = format!("sub-{s:03}");
        participants.push_str(&format!("{sub}\n"));
        for dt in ["anat", "func"] {
            let d = root.join(&sub).join(dt);
            std::fs::create_dir_all(&d).unwrap();
            for r in 0..20 {
                let stem = if dt == "anat" {
                    format!("{sub}_acq-a{r}_T1w")
                } else {
                    format!("{sub}_task-rest_run-{r}_bold")
                };
                std::fs::write(d.join(format!("{stem}.nii.gz")), b"").unwrap();
                std::fs::write(d.join(format!("{stem}.json")), br#"{"EchoTime":0.03}"#).unwrap();
                n += 2;
            }
        }
    }
    std::fs::write(root.join("participants.tsv"), participants).unwrap();
    let t0 = Instant::now();
    let info = Arc::new(SchemaInfo::from_schema(&schema));
    let t_info = t0.elapsed();
    let t1 = Instant::now();
    let ds = Dataset::open_with(root, info, &OpenOptions::default()).unwrap();
    let t_open = t1.elapsed();
    let t2 = Instant::now();
    let mut with_sidecar = 0usize;
    for f in ds.files() {
        let ctx = ds.context(f);
        let _ = ctx.lookup("entities");
        if ctx
            .lookup("sidecar")
            .as_object()
            .is_some_and(|o| !o.is_empty())
        {
            with_sidecar += 1;
        }
        let _ = ctx.lookup("associations");
        let _ = ctx.lookup("dataset");
    }
    let t_ctx = t2.elapsed();
    eprintln!(
        "{} files (made {n}): schema facts {t_info:?}, walk {t_open:?}, contexts {t_ctx:?} ({with_sidecar} with sidecar)",
        ds.files().len()
    );
    assert!(ds.files().len() >= 32_000);
}
