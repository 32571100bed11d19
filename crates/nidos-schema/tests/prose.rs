//! Facts upstream compiled schemas state only in prose, read into structured keys at load.
//!
//! Cases: `tests/schema/prose.yaml` at the repository root (see its comments).

use std::path::PathBuf;

use nidos_schema::{Level, LevelCondition, Schema};
use serde::Deserialize;
use serde_json::{json, Value};

fn fixtures() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/schema"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cases {
    level_if: Vec<LevelIfCase>,
    deprecated_values: Vec<DeprecatedCase>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LevelIfCase {
    addendum: String,
    #[serde(default)]
    given: Option<Value>,
    expect: Option<Condition>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Condition {
    key: String,
    is: String,
    level: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeprecatedCase {
    column: String,
    #[serde(default)]
    given: Option<Value>,
    expect: Vec<String>,
}

fn cases() -> Cases {
    let text = std::fs::read_to_string(fixtures().join("prose.yaml")).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

/// A compiled schema with one sidecar rule holding `fields` and the column table `columns`.
fn compiled(fields: Value, columns: Value) -> Schema {
    let raw = json!({
        "schema_version": "1.0.0",
        "bids_version": "1.0.0",
        "objects": {"columns": columns},
        "rules": {"sidecars": {"group": {"Rule": {"selectors": [], "fields": fields}}}},
        "meta": {},
    });
    Schema::from_compiled_json(raw).unwrap()
}

#[test]
fn level_addenda_become_level_conditions() {
    let cases = cases().level_if;
    let mut fields = serde_json::Map::new();
    for (i, case) in cases.iter().enumerate() {
        let mut req = json!({"level": "optional", "level_addendum": case.addendum});
        if let Some(given) = &case.given {
            req["level_if"] = given.clone();
        }
        fields.insert(format!("F{i}"), req);
    }
    let schema = compiled(Value::Object(fields), json!({}));
    let rule = &schema.sidecar_rules[0];
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let got = &rule.fields[&format!("F{i}")].level_if;
        let want = case.expect.as_ref().map(|c| LevelCondition {
            key: c.key.clone(),
            is: c.is.clone(),
            level: Level::parse(&c.level).unwrap(),
        });
        if *got != want {
            failures.push(format!("{:?}: got {got:?}, want {want:?}", case.addendum));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn deprecated_column_values_are_supplied() {
    for case in cases().deprecated_values {
        let mut def = json!({"name": case.column, "description": "A column.", "type": "number"});
        if let Some(given) = &case.given {
            def["deprecated_values"] = given.clone();
        }
        let schema = compiled(json!({}), json!({ case.column.clone(): def }));
        let got: Vec<&str> = schema.columns[&case.column]
            .deprecated_values
            .iter()
            .map(|d| d.value.as_str())
            .collect();
        assert_eq!(got, case.expect, "column {}", case.column);
    }
}

/// A YAML tree states the keys itself: its prose is never read.
#[test]
fn yaml_trees_are_not_read_for_prose() {
    let tree = nidos_schema::load_path(&fixtures().join("tree")).unwrap();
    let fields = &tree.sidecar_rules[0].fields;
    assert_eq!(
        fields["SliceEncodingDirection"].level_if,
        Some(LevelCondition {
            key: "TaskName".into(),
            is: "rest".into(),
            level: Level::Required,
        })
    );
    let bundled = nidos_schema::load_path(&fixtures().join("../../schema")).unwrap();
    let pet = bundled
        .sidecar_rules
        .iter()
        .flat_map(|r| r.fields.iter())
        .find(|(k, _)| *k == "InfusionRadioactivity")
        .map(|(_, f)| f)
        .unwrap();
    assert!(pet
        .level_addendum
        .as_deref()
        .unwrap()
        .contains("required if `"));
    assert_eq!(pet.level_if, None);
}

/// Every upstream release read: the `age` column's `89+`, and the conditions of 1.11.1.
#[test]
fn upstream_schemas_gain_the_structured_keys() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/schemas"
    ));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIP: {} is absent", dir.display());
        return;
    };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    for path in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let s = nidos_schema::load_path(path).unwrap();
        let age: Vec<&str> = s.columns["age"]
            .deprecated_values
            .iter()
            .map(|d| d.value.as_str())
            .collect();
        assert_eq!(age, ["89+"], "{}", path.display());
        let conditions = s
            .sidecar_rules
            .iter()
            .chain(&s.json_rules)
            .flat_map(|r| r.fields.values())
            .filter(|f| f.level_if.is_some())
            .count();
        if s.version == "1.11.1" {
            // 5 MEG coordinate-system descriptions and 6 ASL fields.
            assert_eq!(conditions, 11, "{}", path.display());
        }
    }
}
