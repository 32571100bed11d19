//! Every pattern the bundled rules and the upstream compiled schemas hold (formats,
//! columns, metadata, entities) gives the same whole-value answer on the automaton as on
//! the ECMAScript engine (see `nidos_expr::full_match`), on cell-like strings and on
//! random ones.

use std::path::Path;
use std::sync::OnceLock;

use nidos_expr::full_match::FullMatcher;
use nidos_schema::Schema;
use proptest::prelude::*;
use serde_json::Value;

const SCHEMAS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/schemas"
);

fn collect(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("pattern", Value::String(p)) => out.push(p.clone()),
                    _ => collect(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
        _ => {}
    }
}

/// The patterns of the bundled rules and, where `../shared` is present, of every
/// upstream compiled schema, each compiled both ways (once per test process).
fn compiled() -> &'static [(String, FullMatcher, FullMatcher)] {
    static ALL: OnceLock<Vec<(String, FullMatcher, FullMatcher)>> = OnceLock::new();
    ALL.get_or_init(|| {
        patterns()
            .into_iter()
            .filter_map(|p| {
                let fast = FullMatcher::new(&p).ok()?;
                let slow = FullMatcher::backtracking(&p).ok()?;
                Some((p, fast, slow))
            })
            .collect()
    })
}

fn patterns() -> Vec<String> {
    let mut out = Vec::new();
    let bundled = Schema::bundled().expect("the bundled rules load");
    collect(&bundled.raw, &mut out);
    if let Ok(dir) = std::fs::read_dir(Path::new(SCHEMAS)) {
        for e in dir.flatten() {
            let Ok(text) = std::fs::read_to_string(e.path()) else {
                continue;
            };
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                collect(&v, &mut out);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

const SAMPLES: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "+2",
    " 3 ",
    "1.5",
    ".5",
    "5.",
    "1e3",
    "1E-3",
    "1.2.3",
    "n/a",
    "NaN",
    "abc",
    "ABC123",
    "sub-01",
    "ses-pre",
    "a b",
    "a_b",
    "a-b",
    "2020-01-01",
    "2020-01-01T10:20:30",
    "2020-01-01T10:20:30.5Z",
    "10:20:30",
    "M",
    "F",
    "O",
    "true",
    "false",
    "bids::x",
    "std::x",
    "https://example.org/a",
    "doi:10.1/x",
    "0000-0002-1825-0097",
    "x.nii.gz",
    "/sub-01/a.tsv",
    "é",
    "\n",
    "a\nb",
    "8.3.0",
    "sc:score_1.0.0",
    "[1, 2]",
    "ms",
    "µV",
    "%",
    "deg",
];

#[test]
fn automaton_agrees_with_ecmascript_on_samples() {
    let mut automaton = 0;
    for (p, fast, slow) in compiled() {
        automaton += usize::from(fast.is_automaton());
        for s in SAMPLES {
            assert_eq!(fast.matches(s), slow.matches(s), "pattern {p:?} on {s:?}");
        }
    }
    assert!(automaton > 10, "most schema patterns run on the automaton");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn automaton_agrees_with_ecmascript_on_random_text(
        texts in proptest::collection::vec("[ -~éµ\n]{0,12}|[0-9+.eE -]{0,8}", 32)
    ) {
        for (p, fast, slow) in compiled() {
            for s in &texts {
                prop_assert_eq!(fast.matches(s), slow.matches(s), "pattern {:?} on {:?}", p, s);
            }
        }
    }
}
