//! Every expression in every upstream schema parses: any `selectors` or `checks` list
//! anywhere in the document (rules, meta.associations, …) and each `{…}` template
//! inside an issue `message`.

use std::path::Path;

use serde_json::Value as Json;

fn collect(v: &Json, out: &mut Vec<(String, String)>, path: &str) {
    match v {
        Json::Object(map) => {
            for (k, child) in map {
                let p = format!("{path}.{k}");
                match (k.as_str(), child) {
                    ("selectors" | "checks", Json::Array(items)) => {
                        for item in items {
                            if let Json::String(s) = item {
                                out.push((p.clone(), s.clone()));
                            }
                        }
                    }
                    ("message", Json::String(msg)) if path.ends_with(".issue") => {
                        for t in templates(msg) {
                            out.push((p.clone(), t));
                        }
                    }
                    _ => collect(child, out, &p),
                }
            }
        }
        Json::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, out, &format!("{path}[{i}]"));
            }
        }
        _ => {}
    }
}

/// The `{…}` substitutions of a message template.
fn templates(msg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = msg;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) => {
                out.push(after[..end].to_string());
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out
}

#[test]
fn every_schema_expression_parses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/schemas");
    if !dir.exists() {
        println!("skipped: {} is absent", dir.display());
        return;
    }
    let files = nidos_testkit::files_with_extension(&dir, "json");
    let mut failures = Vec::new();
    let mut total = 0;
    let mut templates_total = 0;
    let mut distinct = std::collections::BTreeSet::new();
    let mut unknown = std::collections::BTreeSet::new();
    for f in &files {
        let doc: Json = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let mut exprs = Vec::new();
        collect(&doc, &mut exprs, "");
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let mut n = 0;
        for (path, src) in &exprs {
            n += 1;
            if path.ends_with(".message") {
                templates_total += 1;
            }
            distinct.insert(src.clone());
            match nidos_expr::parse(src) {
                Ok(e) => {
                    unknown.extend(e.unknown_functions());
                    // The printed form parses back to the same tree.
                    let again = nidos_expr::parse(&e.to_string())
                        .unwrap_or_else(|err| panic!("reprint of `{src}` as `{e}`: {err}"));
                    assert_eq!(again, e, "reprint of `{src}` as `{e}`");
                }
                Err(err) => failures.push(format!("{name} {path}: `{src}`: {err}")),
            }
        }
        println!("{name}: {n} expressions");
        total += n;
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    println!(
        "{total} expressions ({} distinct, {templates_total} message templates) in {} schemas; {} failed to parse; unknown functions: {:?}",
        distinct.len(),
        files.len(),
        failures.len(),
        unknown
    );
    assert!(failures.is_empty());
    assert!(total > 0);
}
