//! Parser and interpreter must never panic; printed trees must parse back unchanged.
//! Build: `RUSTC_BOOTSTRAP=1 cargo fuzz build` (from this directory); run:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run parse_eval`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nidos_expr::{eval, parse, ObjectContext};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(expr) = parse(src) else {
        return;
    };
    let ctx = ObjectContext::from_json(&serde_json::json!({
        "suffix": "bold",
        "sidecar": {"RepetitionTime": 2, "EchoTime": [0.01, 0.03]},
        "columns": {"onset": ["1", "n/a", "-3"]},
        "s": "abc",
    }));
    let _ = eval(&expr, &ctx);
    let printed = expr.to_string();
    let again = parse(&printed).unwrap_or_else(|e| panic!("`{printed}` does not parse: {e}"));
    assert_eq!(again, expr, "`{src}` printed as `{printed}`");
});
