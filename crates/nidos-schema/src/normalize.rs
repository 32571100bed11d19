//! Normalises the structural differences between schema versions into one model.
//!
//! The normalised raw tree has, at the top level, `version`, `schema_version` (when
//! known), `objects`, `rules` and `meta`, and always these keys:
//! `rules.json`, `rules.dataset_metadata`, `rules.directories`, `meta.associations`,
//! `meta.context`, `meta.versions`, `meta.brand`.

use serde_json::{Map, Value};

use crate::error::{ErrorKind, SchemaError};
use crate::model::Brand;

/// Old extension keys renamed to the current convention (dots become underscores).
const EXTENSION_RENAMES: &[(&str, &str)] = &[("niigz", "nii_gz"), ("tsvgz", "tsv_gz")];

/// Keys that may carry the standard version at the top level of a compiled schema.
const VERSION_KEYS: &[&str] = &["version", "std_version", "bids_version"];

pub(crate) struct Normalised {
    pub raw: Value,
    pub version: String,
    pub schema_version: Option<String>,
    pub brand: Brand,
}

pub(crate) fn normalise(input: Value) -> Result<Normalised, SchemaError> {
    let Value::Object(mut top) = input else {
        return Err(SchemaError::new(
            ErrorKind::Structure,
            "",
            "a schema must be a mapping with objects, rules and meta",
        ));
    };
    let mut version = None;
    for k in VERSION_KEYS {
        if let Some(v) = top.shift_remove(*k) {
            match v {
                Value::String(s) if version.is_none() => version = Some(s),
                Value::String(_) => {}
                other => {
                    return Err(SchemaError::new(
                        ErrorKind::Version,
                        *k,
                        format!("the version must be a string, found {other}"),
                    ))
                }
            }
        }
    }
    let Some(version) = version else {
        return Err(SchemaError::new(
            ErrorKind::Version,
            "",
            "no standard version: expected a top-level `version` (or `bids_version`) string",
        ));
    };
    let schema_version = match top.shift_remove("schema_version") {
        Some(Value::String(s)) => Some(s),
        Some(Value::Null) | None => None,
        Some(other) => {
            return Err(SchemaError::new(
                ErrorKind::Version,
                "schema_version",
                format!("expected a string, found {other}"),
            ))
        }
    };

    let mut objects = take_map(&mut top, "objects")?;
    let mut rules = take_map(&mut top, "rules")?;
    let mut meta = take_map(&mut top, "meta")?;
    if let Some(k) = top.keys().next() {
        return Err(SchemaError::new(
            ErrorKind::UnknownKey,
            k.clone(),
            "unknown top-level key",
        ));
    }

    // objects.extensions: old keys without separators.
    if let Some(Value::Object(ext)) = objects.get_mut("extensions") {
        if EXTENSION_RENAMES
            .iter()
            .any(|(old, _)| ext.contains_key(*old))
        {
            let old = std::mem::take(ext);
            for (k, v) in old {
                let k = EXTENSION_RENAMES
                    .iter()
                    .find(|(o, _)| *o == k)
                    .map(|(_, n)| (*n).to_owned())
                    .unwrap_or(k);
                ext.insert(k, v);
            }
        }
    }

    // meta.context.context (≤ 1.9) → meta.context.
    if let Some(Value::Object(ctx)) = meta.get_mut("context") {
        if ctx.len() == 1 {
            if let Some(inner @ Value::Object(_)) = ctx.get("context") {
                let inner = inner.clone();
                meta.insert("context".into(), inner);
            }
        }
    }

    for key in ["json", "dataset_metadata", "directories"] {
        rules
            .entry(key)
            .or_insert_with(|| Value::Object(Map::new()));
    }
    meta.entry("associations")
        .or_insert_with(|| Value::Object(Map::new()));
    meta.entry("context")
        .or_insert_with(|| Value::Object(Map::new()));
    meta.entry("versions")
        .or_insert_with(|| Value::Array(vec![Value::String(version.clone())]));

    let brand = detect_brand(&meta, &rules, &objects)?;
    meta.insert("brand".into(), brand_value(&brand));

    let mut out = Map::new();
    out.insert("version".into(), Value::String(version.clone()));
    if let Some(sv) = &schema_version {
        out.insert("schema_version".into(), Value::String(sv.clone()));
    }
    out.insert("objects".into(), Value::Object(objects));
    out.insert("rules".into(), Value::Object(rules));
    out.insert("meta".into(), Value::Object(meta));
    Ok(Normalised {
        raw: Value::Object(out),
        version,
        schema_version,
        brand,
    })
}

fn take_map(top: &mut Map<String, Value>, key: &str) -> Result<Map<String, Value>, SchemaError> {
    match top.shift_remove(key) {
        Some(Value::Object(m)) => Ok(m),
        None | Some(Value::Null) if key == "meta" => Ok(Map::new()),
        None | Some(Value::Null) => Err(SchemaError::new(ErrorKind::Structure, key, "missing")),
        Some(_) => Err(SchemaError::new(
            ErrorKind::Structure,
            key,
            "expected a mapping",
        )),
    }
}

pub(crate) fn brand_value(b: &Brand) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(b.name.clone()));
    m.insert("version_key".into(), Value::String(b.version_key.clone()));
    m.insert("uri_scheme".into(), Value::String(b.uri_scheme.clone()));
    m.insert("ignore_file".into(), Value::String(b.ignore_file.clone()));
    Value::Object(m)
}

/// A brand named `name` with the conventional derived names.
pub fn brand_named(name: &str) -> Brand {
    match name {
        "Std" => Brand::std(),
        "BIDS" => Brand::bids(),
        other => {
            let lower = other.to_ascii_lowercase();
            Brand {
                name: other.to_owned(),
                version_key: format!("{other}Version"),
                uri_scheme: lower.clone(),
                ignore_file: format!(".{lower}ignore"),
            }
        }
    }
}

/// The brand: an explicit `meta.brand` (a name, or a mapping with `name` and optional
/// `version_key`, `uri_scheme`, `ignore_file`), else the version key the
/// `dataset_description` rule requires, else BIDS.
fn detect_brand(
    meta: &Map<String, Value>,
    rules: &Map<String, Value>,
    objects: &Map<String, Value>,
) -> Result<Brand, SchemaError> {
    match meta.get("brand") {
        Some(Value::String(name)) => return Ok(brand_named(name)),
        Some(Value::Object(m)) => {
            let Some(name) = m.get("name").and_then(Value::as_str) else {
                return Err(SchemaError::new(
                    ErrorKind::Structure,
                    "meta.brand.name",
                    "a brand needs a name",
                ));
            };
            let mut b = brand_named(name);
            for (k, v) in m {
                let Some(s) = v.as_str() else {
                    return Err(SchemaError::new(
                        ErrorKind::Structure,
                        format!("meta.brand.{k}"),
                        "expected a string",
                    ));
                };
                match k.as_str() {
                    "name" => {}
                    "version_key" => b.version_key = s.to_owned(),
                    "uri_scheme" => b.uri_scheme = s.trim_end_matches(':').to_owned(),
                    "ignore_file" => b.ignore_file = s.to_owned(),
                    _ => {
                        return Err(SchemaError::new(
                            ErrorKind::UnknownKey,
                            format!("meta.brand.{k}"),
                            "unknown brand key",
                        ))
                    }
                }
            }
            return Ok(b);
        }
        Some(Value::Null) | None => {}
        Some(_) => {
            return Err(SchemaError::new(
                ErrorKind::Structure,
                "meta.brand",
                "expected a name or a mapping",
            ))
        }
    }
    let fields = rules
        .get("dataset_metadata")
        .and_then(|d| d.get("dataset_description"))
        .and_then(|d| d.get("fields"))
        .and_then(Value::as_object);
    if let Some(f) = fields {
        if f.contains_key("StdVersion") {
            return Ok(Brand::std());
        }
        if f.contains_key("BIDSVersion") {
            return Ok(Brand::bids());
        }
    }
    if let Some(Value::Object(md)) = objects.get("metadata") {
        if md.contains_key("StdVersion") && !md.contains_key("BIDSVersion") {
            return Ok(Brand::std());
        }
    }
    Ok(Brand::bids())
}
