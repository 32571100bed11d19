//! `cargo xtask sort-diff [--cases N] [--seed S] [--require]`: compares nidos's
//! `sorted(list, method)` with the reference's own implementation, run by the
//! reference's own JavaScript runtime, on random lists that mix numbers, numeric
//! strings and `n/a` (whose NaN comparisons make the result depend on the exact sort
//! algorithm). The reference comes from `pip install bids-validator-deno`: its wheel
//! carries the validator bundle, and the `deno` package it depends on the runtime.
//! The function is taken out of the installed bundle at run time; nothing of it is
//! kept in this repository.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context as _, Result};
use serde_json::{json, Value};

use crate::flag;

/// A small deterministic generator (64-bit LCG, high bits), so runs are reproducible.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One list element: mostly numeric strings, some `n/a`, numbers and odd spellings.
fn element(rng: &mut Lcg, base: f64) -> Value {
    match rng.below(20) {
        0..=2 => json!("n/a"),
        3 => json!(base),
        4 => json!(format!(" {base} ")),
        5 => json!(""),
        6 => json!(format!("{}e1", base / 10.0)),
        7 => json!("abc"),
        _ => json!(format!("{base}")),
    }
}

/// A random list; long ones are built from sorted and reversed stretches so that the
/// merge and galloping paths of the algorithm run.
fn list(rng: &mut Lcg) -> Vec<Value> {
    let len = match rng.below(10) {
        0..=4 => rng.below(12),
        5..=7 => 12 + rng.below(90),
        _ => 100 + rng.below(700),
    } as usize;
    let mut out = Vec::with_capacity(len);
    let mut v = rng.below(50) as f64;
    while out.len() < len {
        let stretch = 1 + rng.below(80) as usize;
        let step = match rng.below(4) {
            0 => -1.0,
            1 => 0.0,
            _ => 1.0,
        };
        for _ in 0..stretch.min(len - out.len()) {
            if rng.below(6) == 0 {
                v = rng.below(200) as f64;
            }
            v += step * (1 + rng.below(3)) as f64;
            out.push(element(rng, v));
        }
    }
    out
}

fn python_path(code: &str) -> Option<PathBuf> {
    let out = Command::new("python3").args(["-c", code]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?;
    Some(PathBuf::from(s.trim()))
}

/// The JavaScript run by the reference's runtime: it cuts the `sorted` function out of
/// the bundle and applies it to every case read from the file given as argument.
const RUNNER: &str = r#"
const bundle = Deno.readTextFileSync(Deno.args[0]);
const marker = 'sorted: (list, method = "auto") =>';
const at = bundle.indexOf(marker);
if (at < 0) throw new Error("sorted() not found in the bundle");
let i = bundle.indexOf("{", at), depth = 0, end = -1;
for (; i < bundle.length; i++) {
  if (bundle[i] === "{") depth++;
  else if (bundle[i] === "}") { depth--; if (depth === 0) { end = i + 1; break; } }
}
const fn = (0, eval)("(" + bundle.slice(at + "sorted: ".length, end) + ")");
const cases = JSON.parse(Deno.readTextFileSync(Deno.args[1]));
console.log(JSON.stringify(cases.map((c) => fn(c.list, c.method))));
"#;

pub fn run(args: &[String]) -> Result<()> {
    let cases: usize = flag(args, "--cases")
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(3000);
    let seed: u64 = flag(args, "--seed")
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(20261123);
    let require = args.iter().any(|a| a == "--require");
    let bundle = python_path(
        "import os, bids_validator_deno as b; print(os.path.join(os.path.dirname(b.__file__), 'bids-validator.js'))",
    );
    let deno = python_path("from deno import find_deno_bin; print(find_deno_bin())");
    let (Some(bundle), Some(deno)) = (bundle, deno) else {
        let msg = "the reference is not installed (pip install bids-validator-deno)";
        if require {
            bail!("{msg}");
        }
        println!("skipped: {msg}");
        return Ok(());
    };

    let mut rng = Lcg(seed);
    let mut input = Vec::with_capacity(cases);
    for i in 0..cases {
        let method = if i % 4 == 3 { "auto" } else { "numeric" };
        input.push(json!({"list": list(&mut rng), "method": method}));
    }
    let dir = std::env::temp_dir().join(format!("nidos-sortdiff-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (script, data) = (dir.join("runner.js"), dir.join("cases.json"));
    std::fs::write(&script, RUNNER)?;
    std::fs::write(&data, serde_json::to_vec(&input)?)?;
    let out = Command::new(&deno)
        .arg("run")
        .arg("--allow-read")
        .arg(&script)
        .arg(&bundle)
        .arg(&data)
        .output()
        .with_context(|| format!("running {}", deno.display()))?;
    let _ = std::fs::remove_dir_all(&dir);
    if !out.status.success() {
        bail!(
            "the reference runtime failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let want: Vec<Value> = serde_json::from_slice(&out.stdout).context("reading its results")?;

    let expr = nidos_expr::parse("sorted(list, method)").map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut mismatches = 0usize;
    let mut with_na = 0usize;
    let mut shortest: Option<(usize, String)> = None;
    for (case, want) in input.iter().zip(&want) {
        let ctx = nidos_expr::ObjectContext::from_json(case);
        let got = nidos_expr::eval(&expr, &ctx).to_json();
        if case["list"]
            .as_array()
            .is_some_and(|l| l.iter().any(|v| v == "n/a"))
        {
            with_na += 1;
        }
        if &got != want {
            mismatches += 1;
            let len = case["list"].as_array().map_or(0, Vec::len);
            if shortest.as_ref().is_none_or(|(l, _)| len < *l) {
                let text = format!(
                    "shortest mismatch ({}, {len} elements):\n  list      {}\n  reference {want}\n  nidos     {got}",
                    case["method"], case["list"]
                );
                shortest = Some((len, text));
            }
        }
    }
    if let Some((_, text)) = &shortest {
        println!("{text}");
    }
    println!(
        "sort-diff: {} lists ({with_na} with n/a, seed {seed}): {} identical to the reference, {mismatches} differ",
        input.len(),
        input.len() - mismatches
    );
    if mismatches > 0 {
        bail!("{mismatches} lists sorted differently from the reference");
    }
    Ok(())
}
