//! Random JSON sidecars, valid and not, written in random layouts (indent, one line,
//! CRLF, a byte-order mark, duplicate keys, truncated text): `plan` + `apply` with the
//! bundled rules never leaves invalid JSON where there was valid JSON, never loses a key
//! it did not mean to change, and a second plan finds nothing more to do.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value};

/// Validates the dataset at `root` with the bundled rules (as `nidos fix` does) and plans
/// its fixes.
fn validate_and_plan(root: &std::path::Path) -> nidos_fix::Plan {
    let request = nidos_validate::Request {
        options: nidos_validate::Options {
            max_rows: None,
            ..nidos_validate::Options::default()
        },
        ..nidos_validate::Request::default()
    };
    let done = nidos_validate::validate(root, &request).expect("the dataset validates");
    nidos_fix::plan(&done, &nidos_fix::Options::default()).expect("the fixes are planned")
}

/// Keys the built-in fixes touch, and some they do not.
const KEYS: &[&str] = &[
    "BasedOn",
    "Sources",
    "DatasetDOI",
    "AssociatedEmptyRoom",
    "MEGCoordinateSystem",
    "EEGCoordinateSystem",
    "AcquisitionDuration",
    "RepetitionTime",
    "TaskName",
    "Notes",
    "ünïcode \"key\"",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        prop_oneof![
            Just("10.1234/abc".to_string()),
            Just("ElektaNeuromag".to_string()),
            Just("/sub-er/meg/x.fif".to_string()),
            Just("sub-01/anat/sub-01_T1w.nii.gz".to_string()),
            ".{0,12}",
        ]
        .prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..4).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

fn object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((prop::sample::select(KEYS), value()), 0..8)
        .prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The object's text in one of several layouts, possibly damaged.
fn render(map: &Map<String, Value>, layout: u8, damage: u8) -> Vec<u8> {
    let v = Value::Object(map.clone());
    let mut text = match layout % 4 {
        0 => serde_json::to_string_pretty(&v).unwrap(),
        1 => serde_json::to_string(&v).unwrap(),
        2 => serde_json::to_string_pretty(&v)
            .unwrap()
            .replace('\n', "\r\n"),
        _ => {
            let mut buf = Vec::new();
            let f = serde_json::ser::PrettyFormatter::with_indent(b"\t");
            let mut ser = serde_json::Serializer::with_formatter(&mut buf, f);
            serde::Serialize::serialize(&v, &mut ser).unwrap();
            String::from_utf8(buf).unwrap()
        }
    };
    if layout & 4 != 0 {
        text.push('\n');
    }
    match damage % 6 {
        0 => text = format!("\u{feff}{text}"),
        1 if text.len() > 2 => {
            let mut at = text.len() / 2;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at)
        }
        2 if text.starts_with('{') && text.len() > 2 => {
            text = format!("{{\"Notes\": 1, \"Notes\": 2, {}", &text[1..])
        }
        _ => {}
    }
    text.into_bytes()
}

fn write_dataset(root: &Path, sidecar: &[u8], coordsystem: &[u8]) {
    std::fs::create_dir_all(root.join("sub-01/anat")).unwrap();
    std::fs::create_dir_all(root.join("sub-01/meg")).unwrap();
    std::fs::write(
        root.join("dataset_description.json"),
        "{\"Name\": \"fuzz\", \"StdVersion\": \"1.11.1\", \"Authors\": [\"A\"]}\n",
    )
    .unwrap();
    std::fs::write(root.join("README.md"), "# fuzz\n").unwrap();
    std::fs::write(root.join("sub-01/anat/sub-01_T1w.nii.gz"), b"").unwrap();
    std::fs::write(root.join("sub-01/anat/sub-01_T1w.json"), sidecar).unwrap();
    std::fs::write(root.join("sub-01/meg/sub-01_task-rest_meg.fif"), b"").unwrap();
    std::fs::write(root.join("sub-01/meg/sub-01_coordsystem.json"), coordsystem).unwrap();
}

/// The JSON object of a file's text (a leading byte-order mark allowed), if valid.
fn parse(bytes: &[u8]) -> Option<Map<String, Value>> {
    let body = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    match serde_json::from_slice(body) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// Checks one file before and after the fixes.
fn check(name: &str, before: &[u8], after: &[u8]) -> Result<(), TestCaseError> {
    let Some(old) = parse(before) else {
        // Invalid JSON is never rewritten (a byte-order mark may go).
        let stripped = before.strip_prefix("\u{feff}".as_bytes()).unwrap_or(before);
        prop_assert!(
            after == before || after == stripped,
            "{name}: invalid JSON was rewritten"
        );
        return Ok(());
    };
    let new = parse(after);
    prop_assert!(
        new.is_some(),
        "{name}: the fixed file is not valid JSON: {}",
        String::from_utf8_lossy(after)
    );
    let new = new.unwrap();
    for (k, v) in &old {
        let renamed = k == "BasedOn" && !old.contains_key("Sources") && new.contains_key("Sources");
        prop_assert!(new.contains_key(k) || renamed, "{name}: lost the key {k}");
        let edited = matches!(
            k.as_str(),
            "DatasetDOI" | "AssociatedEmptyRoom" | "MEGCoordinateSystem" | "EEGCoordinateSystem"
        );
        if !edited && !renamed {
            prop_assert_eq!(new.get(k), Some(v), "{}: changed the value of {}", name, k);
        }
    }
    let was_renamed =
        old.contains_key("BasedOn") && !old.contains_key("Sources") && !new.contains_key("BasedOn");
    let keys_old: Vec<&str> = old
        .keys()
        .map(|k| {
            if was_renamed && k == "BasedOn" {
                "Sources"
            } else {
                k.as_str()
            }
        })
        .collect();
    let keys_new: Vec<&str> = new.keys().map(String::as_str).collect();
    prop_assert_eq!(keys_old, keys_new, "{}: key order changed", name);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn fixes_keep_json_valid_and_keys(
        a in object(), b in object(),
        la in 0u8..8, lb in 0u8..8, da in 0u8..12, db in 0u8..12,
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let (sidecar, coordsystem) = (render(&a, la, da), render(&b, lb, db));
        write_dataset(root, &sidecar, &coordsystem);
        let plan = validate_and_plan(root);
        let lock = nidos_fix::DatasetLock::acquire(root, std::time::Duration::ZERO, |_| {}).unwrap();
        nidos_fix::apply(&plan, &lock).unwrap();
        let after_sidecar = std::fs::read(root.join("sub-01/anat/sub-01_T1w.json")).unwrap();
        let after_coords = std::fs::read(root.join("sub-01/meg/sub-01_coordsystem.json")).unwrap();
        check("sidecar", &sidecar, &after_sidecar)?;
        check("coordsystem", &coordsystem, &after_coords)?;
        let again = validate_and_plan(root);
        prop_assert!(again.edits.is_empty(), "a second run plans {:?}", again.edits.iter().map(|e| &e.path).collect::<Vec<_>>());
    }
}
