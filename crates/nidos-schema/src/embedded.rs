//! The bundled rule tree, embedded at build time (see `build.rs`): already parsed from
//! YAML, so loading it costs reference resolution and indexing only, and an installed
//! binary needs nothing from the source tree.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::brand::{declared_brands, Brands};
use crate::error::{ErrorKind, SchemaError, SchemaErrors};
use crate::yaml::{resolve_refs, tree_top, version_info, TreeInfo};
use crate::{from_resolved_tree, LoadOptions, Schema};

static BUNDLED: &str = include_str!(concat!(env!("OUT_DIR"), "/bundled.json"));
static BUNDLED_FILES: &str = include_str!(concat!(env!("OUT_DIR"), "/bundled-files.json"));

/// Where embedded errors say they come from.
const ORIGIN: &str = "<embedded schema>";

struct Doc {
    info: TreeInfo,
    parts: Map<String, Value>,
    resolved: OnceLock<Result<Value, SchemaErrors>>,
}

fn error(msg: impl Into<String>) -> SchemaErrors {
    SchemaErrors::single(
        SchemaError::new(ErrorKind::Structure, "", msg).in_file(Some(PathBuf::from(ORIGIN))),
    )
}

fn doc() -> Result<&'static Doc, SchemaErrors> {
    static DOC: OnceLock<Result<Doc, SchemaErrors>> = OnceLock::new();
    DOC.get_or_init(|| {
        let v: Value = serde_json::from_str(BUNDLED)
            .map_err(|e| error(format!("the embedded schema is not JSON: {e}")))?;
        let Value::Object(mut top) = v else {
            return Err(error("the embedded schema is not a mapping"));
        };
        if top.get("parsed") != Some(&Value::Bool(true)) {
            return Err(error(
                "the bundled schema/ had files that did not parse when nidos was built; \
                 run `nidos schema check schema/` to see them",
            ));
        }
        let mut info = TreeInfo {
            root: PathBuf::from(ORIGIN),
            ..TreeInfo::default()
        };
        version_info(
            top.remove("version").unwrap_or(Value::Null),
            &mut info,
            None,
        )
        .map_err(SchemaErrors::single)?;
        let parts = match top.remove("tree") {
            Some(Value::Object(m)) => m,
            _ => return Err(error("the embedded schema has no tree")),
        };
        Ok(Doc {
            info,
            parts,
            resolved: OnceLock::new(),
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The embedded tree with references resolved (computed once per process).
fn resolved(d: &'static Doc) -> Result<&'static Value, SchemaErrors> {
    d.resolved
        .get_or_init(|| resolve_refs(Value::Object(tree_top(&d.info, &d.parts))))
        .as_ref()
        .map_err(Clone::clone)
}

/// Builds the embedded tree with `opts`: pins, serves the brand, parses.
pub(crate) fn build(opts: &LoadOptions) -> Result<Schema, SchemaErrors> {
    let d = doc()?;
    let tree = resolved(d)?;
    let mut s = from_resolved_tree(tree, &d.info, opts, true)?;
    s.source = None;
    Ok(s)
}

/// The annotated entries of the embedded tree serving `brand` (see [`crate::Changes`]).
/// The annotated entries of the embedded tree serving `brand`, gathered from the tree
/// (see [`crate::Changes`]).
pub(crate) fn build_changes(brand: Option<&str>) -> Result<crate::Changes, SchemaErrors> {
    let tree = resolved(doc()?)?;
    crate::Changes::of_tree(tree, brand)
}

/// The brand table and supported versions of the embedded tree, without loading it.
/// The brand table and supported versions of the embedded tree, read from the tree.
pub(crate) fn build_index() -> Result<(Option<Brands>, Vec<String>), SchemaErrors> {
    let d = doc()?;
    let brands = match d.parts.get("meta").and_then(Value::as_object) {
        Some(meta) => declared_brands(meta).map_err(SchemaErrors::single)?,
        None => None,
    };
    Ok((brands, d.info.supported.clone()))
}

/// The files of the embedded tree as written (relative path → text), for export.
pub fn bundled_files() -> Result<Vec<(String, String)>, SchemaErrors> {
    doc()?;
    let files: Map<String, Value> = serde_json::from_str(BUNDLED_FILES)
        .map_err(|e| error(format!("the embedded schema files are not JSON: {e}")))?;
    Ok(files
        .into_iter()
        .filter_map(|(k, v)| match v {
            Value::String(t) => Some((k, t)),
            _ => None,
        })
        .collect())
}
