//! The bundled tree serves every brand it declares: loading it for a brand other than
//! the one it is written in leaves no token of the tree's brand behind.

use nidos_schema::{LoadOptions, Schema};

const BUNDLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema");

fn load(brand: Option<&str>) -> Schema {
    let opts = LoadOptions {
        brand: brand.map(str::to_owned),
        ..Default::default()
    };
    nidos_schema::load_path_with(std::path::Path::new(BUNDLED), &opts).unwrap()
}

/// Every string and key of `v` outside `meta.brand(s)`, with its dotted path.
fn strings(v: &serde_json::Value, at: &str, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::String(s) => out.push((at.to_owned(), s.clone())),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                strings(x, &format!("{at}[{i}]"), out);
            }
        }
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let here = format!("{at}.{k}");
                if here == ".meta.brand" || here == ".meta.brands" {
                    continue;
                }
                out.push((here.clone(), k.clone()));
                strings(x, &here, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_declared_brand_is_served() {
    let own = load(None);
    assert!(
        own.brands.list.len() >= 2,
        "the bundled tree declares its brands"
    );
    assert_eq!(own.brand, *own.brands.tree_brand());
    for b in &own.brands.list {
        let s = load(Some(&b.name));
        assert_eq!(s.brand, *b);
        assert!(s.metadata.contains_key(&b.version_key), "{}", b.name);
        let mut all = Vec::new();
        strings(&s.raw, "", &mut all);
        for other in own.brands.list.iter().filter(|o| o.name != b.name) {
            for (at, text) in &all {
                for token in [
                    other.version_key.clone(),
                    other.ignore_file.clone(),
                    format!("{}-uri", other.uri_scheme),
                    format!(" {}:", other.uri_scheme),
                ] {
                    assert!(
                        !text.contains(&token),
                        "served as {}: {at} still says {token:?}: {text}",
                        b.name
                    );
                }
            }
        }
        // The same rules, only renamed.
        assert_eq!(s.checks.len(), own.checks.len());
        assert_eq!(s.sidecar_rules.len(), own.sidecar_rules.len());
        assert_eq!(s.file_rules.len(), own.file_rules.len());
    }
}

#[test]
fn an_undeclared_brand_is_an_error() {
    let opts = LoadOptions {
        brand: Some("Nope".into()),
        ..Default::default()
    };
    let e = nidos_schema::load_path_with(std::path::Path::new(BUNDLED), &opts).unwrap_err();
    assert!(e.to_string().contains("declares only"), "{e}");
}

#[test]
fn the_published_schema_place_is_the_selected_brands_or_the_first_declared() {
    let upstream = "https://bids-specification.readthedocs.io/en/{tag}/schema.json";
    for (description, expected) in [
        (r#"{"BIDSVersion": "1.9.0"}"#, upstream),
        // Std publishes no compiled schemas: the first brand that does.
        (r#"{"StdVersion": "1.9.0"}"#, upstream),
    ] {
        let description: serde_json::Value = serde_json::from_str(description).unwrap();
        let got = nidos_schema::published_schema_template(Some(&description)).unwrap();
        assert_eq!(got.as_deref(), Some(expected), "{description}");
    }
    assert!(nidos_schema::published_schema_template(None)
        .unwrap()
        .is_some());
}
