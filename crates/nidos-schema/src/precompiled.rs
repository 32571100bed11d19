//! The bundled rules in their precompiled form: a loaded [`Schema`] (views, parsed
//! expressions and the pinned tree) written as compact binary (postcard, see
//! [`crate::compact`]), one per brand and version. Reading one back skips what a load of the embedded tree does at run time
//! (reference resolution, pinning, brand rewriting, parsing every expression).
//!
//! This crate cannot produce them itself: they are made at build time by a crate that
//! depends on it (`nidos-bundled`, whose build script loads every brand × version with
//! [`build_embedded`] and writes it with [`encode_schema`], and the [`Changes`] index of each brand that
//! version pinning consults), and handed back here at start-up with [`provide`]. Without a provider, or for a brand or version it lacks, loads build the
//! embedded tree as before; `NIDOS_SCHEMA_DIR` bypasses both.

use std::sync::OnceLock;

use crate::{Changes, LoadOptions, Schema, SchemaErrors};

/// One precompiled schema: the brand name and version it serves, and its bytes. An
/// empty brand stands for "the tree's own brand" and an empty version for "the newest",
/// the loads that name neither.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub brand: &'static str,
    pub version: &'static str,
    pub bytes: &'static [u8],
}

/// What a program hands over: the precompiled schemas, and the precompiled
/// [`Changes`] of each brand (their `version` is empty).
#[derive(Clone, Copy, Debug)]
pub struct Tables {
    pub schemas: &'static [Entry],
    pub changes: &'static [Entry],
    /// The tree's brands and supported versions ([`build_embedded_index`]).
    pub index: &'static [u8],
}

static TABLES: OnceLock<Tables> = OnceLock::new();

/// Hands the precompiled tables to this crate; later loads of the embedded rules (and
/// of their changes) read them. Only the first call counts.
pub fn provide(tables: Tables) {
    let _ = TABLES.set(tables);
}

/// Writes [`Changes`] (or any other value) in the precompiled form.
pub fn encode<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, String> {
    crate::compact::writing(|| postcard::to_allocvec(value)).map_err(|e| e.to_string())
}

/// The parts of a schema that [`decode_schema`] reads beside the rest, on a second
/// thread: about half of the decoding work, so a load takes about half as long on two
/// cores. Taken out of the schema written first, put back after reading.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Side {
    metadata: indexmap::IndexMap<String, crate::Definition>,
    columns: indexmap::IndexMap<String, crate::Definition>,
    sidecar_rules: Vec<crate::FieldRule>,
    json_rules: Vec<crate::FieldRule>,
}

/// Writes a schema in the precompiled form: the length of the main part (4 bytes, little
/// endian), the main part, then the [`Side`] part.
pub fn encode_schema(schema: &Schema) -> Result<Vec<u8>, String> {
    let mut main = schema.clone();
    let side = Side {
        metadata: std::mem::take(&mut main.views.metadata),
        columns: std::mem::take(&mut main.views.columns),
        sidecar_rules: std::mem::take(&mut main.views.sidecar_rules),
        json_rules: std::mem::take(&mut main.views.json_rules),
    };
    let main = encode(&main)?;
    let side = encode(&side)?;
    let len = u32::try_from(main.len()).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(4 + main.len() + side.len());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&main);
    out.extend_from_slice(&side);
    Ok(out)
}

/// Reads a schema written by [`encode_schema`], its two parts in parallel.
pub fn decode(bytes: &[u8]) -> Result<Schema, String> {
    let damaged = || "the precompiled schema is damaged".to_string();
    let (len, rest) = bytes.split_first_chunk::<4>().ok_or_else(damaged)?;
    let len = usize::try_from(u32::from_le_bytes(*len)).map_err(|e| e.to_string())?;
    if len > rest.len() {
        return Err(damaged());
    }
    let (main, side) = rest.split_at(len);
    let read_side = || postcard::from_bytes::<Side>(side).map_err(|e| e.to_string());
    // On the worker pool the validation uses next: a thread of its own would leave its
    // allocator pages, partly used, to the process.
    let (schema, side) = rayon::join(
        || postcard::from_bytes::<Schema>(main).map_err(|e| e.to_string()),
        read_side,
    );
    let (mut schema, side) = (schema?, side?);
    schema.views.metadata = side.metadata;
    schema.views.columns = side.columns;
    schema.views.sidecar_rules = side.sidecar_rules;
    schema.views.json_rules = side.json_rules;
    Ok(schema)
}

/// Reads [`Changes`] written by [`encode`].
pub fn decode_changes(bytes: &[u8]) -> Result<Changes, String> {
    postcard::from_bytes(bytes).map_err(|e| e.to_string())
}

/// The changes of the embedded tree serving `brand` (`None`: its own), built the slow
/// way: what a build script precompiles.
pub fn build_embedded_changes(brand: Option<&str>) -> Result<Changes, SchemaErrors> {
    crate::embedded::build_changes(brand)
}

/// Loads the embedded tree for `brand` (`None`: its own) at `version` (`None`: the
/// newest) the slow way, ignoring `NIDOS_SCHEMA_DIR` and any provided table: what a
/// build script precompiles.
pub fn build_embedded(brand: Option<&str>, version: Option<&str>) -> Result<Schema, SchemaErrors> {
    let opts = LoadOptions {
        version: version.map(str::to_owned),
        brand: brand.map(str::to_owned),
        ..LoadOptions::default()
    };
    crate::embedded::build(&opts)
}

/// The brand names and versions of the embedded tree, each pair a build script should
/// precompile.
pub fn embedded_pairs() -> Result<Vec<(String, String)>, SchemaErrors> {
    let (brands, versions) = crate::embedded::build_index()?;
    let names: Vec<String> = match brands {
        Some(b) => b.list.iter().map(|b| b.name.clone()).collect(),
        None => Vec::new(),
    };
    Ok(names
        .iter()
        .flat_map(|b| versions.iter().map(move |v| (b.clone(), v.clone())))
        .collect())
}

/// The table key of the union of the versions from `version` on
/// ([`LoadOptions::and_later`]): the version followed by `+`.
pub fn and_later_key(version: &str) -> String {
    format!("{version}+")
}

/// Loads the embedded tree for `brand` at `version` with what any later version defines
/// ([`LoadOptions::and_later`]) the slow way: what a build script precompiles under
/// [`and_later_key`].
pub fn build_embedded_and_later(brand: &str, version: &str) -> Result<Schema, SchemaErrors> {
    let opts = LoadOptions {
        version: Some(version.to_owned()),
        brand: Some(brand.to_owned()),
        and_later: true,
        ..LoadOptions::default()
    };
    crate::embedded::build(&opts)
}

/// The provided schema for `opts`, when there is one and it reads back.
pub(crate) fn find(opts: &LoadOptions) -> Option<Schema> {
    if opts.tolerate_expression_errors {
        return None;
    }
    let brand = opts.brand.as_deref().unwrap_or("");
    let version = opts.version.as_deref().unwrap_or("");
    let later;
    let version = if opts.and_later {
        later = and_later_key(version);
        later.as_str()
    } else {
        version
    };
    let entry = TABLES
        .get()?
        .schemas
        .iter()
        .find(|e| e.brand == brand && e.version == version)?;
    decode(entry.bytes).ok()
}

/// The brand table and supported versions of the embedded tree, read from the tree:
/// what a build script precompiles for [`Tables::index`].
pub fn build_embedded_index() -> Result<Index, SchemaErrors> {
    crate::embedded::build_index()
}

/// The brand table and supported versions of a tree.
pub type Index = (Option<crate::Brands>, Vec<String>);

/// The provided index, when there is one and it reads back.
pub(crate) fn find_index() -> Option<Index> {
    postcard::from_bytes(TABLES.get()?.index).ok()
}

/// The provided changes for `brand` (`None`: the tree's own), when there are some and
/// they read back.
pub(crate) fn find_changes(brand: Option<&str>) -> Option<Changes> {
    let brand = brand.unwrap_or("");
    let entry = TABLES.get()?.changes.iter().find(|e| e.brand == brand)?;
    decode_changes(entry.bytes).ok()
}
