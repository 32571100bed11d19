//! Normalises the structural differences between schema versions into one model.
//!
//! The normalised raw tree has, at the top level, `version`, `schema_version` (when
//! known), `objects`, `rules` and `meta`, and always these keys:
//! `rules.json`, `rules.dataset_metadata`, `rules.directories`, `meta.associations`,
//! `meta.context`, `meta.versions`, `meta.brand`.

use serde_json::{Map, Value};

use crate::brand::Brands;
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
    pub brands: Brands,
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

    // The brand served: an explicit `meta.brand` (set when a tree is loaded for one of
    // its brands), else the tree's own brand, else the one the rules imply.
    let declared = crate::brand::declared_brands(&meta)?;
    let brand = match &declared {
        Some(b) if !meta.contains_key("brand") => b.tree_brand().clone(),
        _ => crate::brand::single_brand(&meta, &rules)?,
    };
    let brands = match declared {
        Some(b) if b.list.contains(&brand) => b,
        Some(b) => {
            return Err(SchemaError::new(
                ErrorKind::Structure,
                "meta.brand",
                format!(
                    "the brand {} is not among the declared brands ({})",
                    brand.name,
                    b.names().join(", ")
                ),
            ))
        }
        None => Brands::single(brand.clone()),
    };
    meta.insert(
        "brand".into(),
        Value::Object(crate::brand::brand_value(&brand)),
    );
    if brands.list.len() > 1 {
        meta.insert("brands".into(), brands.to_value());
    }

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
        brands,
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
