//! Evaluations per second of typical selectors against an object context, on one core:
//! `cargo run --release -p nidos-expr --example throughput`.

use std::time::Instant;

use nidos_expr::{eval, parse, ObjectContext};

fn main() {
    let ctx = ObjectContext::from_json(&serde_json::json!({
        "suffix": "bold",
        "datatype": "func",
        "extension": ".nii.gz",
        "entities": {"sub": "01", "task": "rest"},
        "sidecar": {"RepetitionTime": 2, "EchoTime": 0.03},
    }));
    let selectors = [
        r#"suffix == "bold""#,
        r#"intersects([suffix], ["dwi", "epi"])"#,
        r#"match(extension, '^\.nii(\.gz)?$')"#,
        r#""RepetitionTime" in sidecar"#,
        r#"sidecar.EchoTime < sidecar.RepetitionTime && entities.task != "rest""#,
    ];
    for src in selectors {
        let expr = parse(src).expect("parses");
        let n = 2_000_000u32;
        let start = Instant::now();
        let mut truthy = 0u32;
        for _ in 0..n {
            truthy += u32::from(eval(&expr, &ctx).truthy());
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{:>6.1} M evals/s  {src}  ({truthy} true)",
            f64::from(n) / secs / 1e6
        );
    }
}
