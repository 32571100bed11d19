//! The Std / BIDS schema as data.
//!
//! A schema is loaded either from a **compiled JSON** file (the upstream published
//! form, any version from 1.8.0 on) or from a **YAML rule tree** (a directory with
//! `objects/`, `rules/` and `meta/`; see the crate README for the format). Both give
//! the same model: a normalised [`Schema::raw`] JSON tree plus typed views built once
//! at load, with every selector and check expression already parsed.
//!
//! ```no_run
//! let schema = nidos_schema::load_path(std::path::Path::new("schema.json"))?;
//! println!("{} {} has {} entities", schema.brand.name, schema.version, schema.entities.len());
//! for check in &schema.checks {
//!     println!("{} → {:?}", check.id, check.issue.as_ref().map(|i| &i.code));
//! }
//! # Ok::<(), nidos_schema::SchemaErrors>(())
//! ```
//!
//! Architecture invariant: loading never panics on bad input; every problem comes
//! back as a [`SchemaError`] naming its file (for YAML trees) and dotted key path,
//! and all problems of a load are reported together.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod brand;
mod changes;
use brand::serve_brand;
mod check;
mod compact;
mod dir_entries;
mod embedded;
mod error;
mod lifecycle;
mod model;
mod normalize;
pub mod precompiled;
mod raised;
mod raw;
mod select;
mod shape;
mod version;
mod views;
mod yaml;

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::Value;

pub use brand::{
    brand_named, signs_of, BrandChoice, BrandIssue, Brands, BRAND_AMBIGUOUS, BRAND_UNDECLARED,
};
pub use changes::{bundled_changes, Changes, Subject};
pub use check::{check_path, check_value, duplicate_codes, structure_findings, CheckReport};
pub use embedded::bundled_files;
pub use error::{ErrorKind, SchemaError, SchemaErrors, Warning};
pub use lifecycle::{filter_for_version, LIFECYCLE_KEYS};
pub use model::*;
pub use raw::Raw;
pub use select::{
    load_for_description, load_for_dir, load_for_dir_listing, published_schema_template,
    ForDataset, Source,
};
pub use version::{
    bundled_override, bundled_schema_dir, compare_versions, read_version, select_version, Reading,
    BUNDLED_ENV,
};
pub use views::{
    called_functions, rule_kind, rule_markers, rule_nodes, Codes, Layout, RuleAt, RuleKind,
    RULE_KINDS,
};
pub use yaml::{load_tree_raw, resolve_refs, TreeInfo};

/// Options for loading.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Report expressions that do not parse as warnings instead of failing the load
    /// (their [`Expression::parsed`] is then `None`). Used by `nidos schema show/diff`.
    pub tolerate_expression_errors: bool,
    /// For a YAML tree with lifecycle annotations: the version to select. `None`
    /// selects the tree's own (newest) version.
    pub version: Option<String>,
    /// For a schema that declares several brands (`meta.brands`): the brand to serve,
    /// by name. `None` serves the brand the tree is written in.
    pub brand: Option<String>,
    /// With `version`: also keep what any later version of the tree defines (the union
    /// of the versions from `version` on, nothing `version` defines dropped), for
    /// listing files as a layout does. Not for validation.
    pub and_later: bool,
}

/// A loaded, resolved and indexed schema.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Schema {
    /// The whole resolved tree, normalised: `version`, `schema_version`, `objects`,
    /// `rules`, `meta` (with `meta.brand`, `meta.context`, `meta.versions`,
    /// `meta.associations` always present). Parsed on first use when the schema was
    /// read from its precompiled form.
    pub raw: Raw,
    /// What expressions reach through the context's `schema`: an object holding the
    /// top-level parts of [`Schema::raw`] that some expression reads
    /// (`schema.meta.versions` needs `meta`), or the whole tree when one reads `schema`
    /// otherwise.
    #[serde(with = "crate::compact::json_text")]
    pub expr_sections: Value,
    /// `rules.citation`, the rules for a citation file (see the validator's `cff`).
    #[serde(with = "crate::compact::json_text")]
    pub citation: Option<Value>,
    /// The standard version, e.g. `"1.11.1"`.
    pub version: String,
    /// The schema's own version, e.g. `"1.2.7"`, when known.
    pub schema_version: Option<String>,
    /// The brand this schema serves (its version key, URI scheme, ignore file).
    pub brand: Brand,
    /// Every brand the schema can serve (`meta.brands`; a compiled schema serves one).
    pub brands: Brands,
    /// The typed views (entities, terms, definitions, rules…); `Schema` dereferences
    /// to them.
    pub views: Views,
    /// Versions this schema can be pinned to, newest first: a YAML tree's
    /// `version.yaml` `supported` list; `[version]` for a compiled schema.
    pub supported_versions: Vec<String>,
    /// Deprecations that apply at this version: dotted key → version deprecated in.
    pub deprecations: IndexMap<String, String>,
    /// Problems that did not stop loading (unknown functions, upstream quirks…).
    pub warnings: Vec<Warning>,
    /// Where the schema was loaded from, if from a file or directory.
    pub source: Option<PathBuf>,
    /// For a YAML tree read from disk: `(rule id, field key)` of each field it requires
    /// where the bundled rules do not (an edited tree's raised levels, see `raised.rs`).
    /// Empty for the bundled rules and compiled schemas. Not part of the precompiled form.
    #[serde(skip)]
    pub raised_fields: std::collections::BTreeSet<(String, String)>,
}

impl std::ops::Deref for Schema {
    type Target = Views;
    fn deref(&self) -> &Views {
        &self.views
    }
}

impl std::ops::DerefMut for Schema {
    fn deref_mut(&mut self) -> &mut Views {
        &mut self.views
    }
}

/// Loads a schema from a compiled JSON file or a YAML tree directory.
pub fn load_path(path: &Path) -> Result<Schema, SchemaErrors> {
    load_path_with(path, &LoadOptions::default())
}

/// [`load_path`] with options.
pub fn load_path_with(path: &Path, opts: &LoadOptions) -> Result<Schema, SchemaErrors> {
    let mut schema = if path.is_dir() {
        let (raw, info) = yaml::load_tree_raw(path)?;
        let mut s = from_resolved_tree(&raw, &info, opts, false)?;
        s.raised_fields = raised::raised_fields(&s, opts);
        s
    } else {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SchemaErrors::single(
                SchemaError::new(ErrorKind::Io, "", format!("cannot read schema: {e}"))
                    .in_file(Some(path.to_owned())),
            )
        })?;
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            SchemaErrors::single(
                SchemaError::new(ErrorKind::Json, "", format!("invalid JSON: {e}"))
                    .in_file(Some(path.to_owned())),
            )
        })?;
        let mut s = Schema::build(value, opts, Strictness::Lenient).map_err(|errs| {
            SchemaErrors(
                errs.into_iter()
                    .map(|e| e.in_file(Some(path.to_owned())))
                    .collect(),
            )
        })?;
        for w in &mut s.warnings {
            if w.file.is_none() {
                w.file = Some(path.to_owned());
            }
        }
        if let Some(v) = &opts.version {
            if compare_versions(v, &s.version) != std::cmp::Ordering::Equal {
                s.warnings.push(SchemaError::new(
                    ErrorKind::Version,
                    "version",
                    format!(
                        "version {v} requested, but {} holds only version {}",
                        path.display(),
                        s.version
                    ),
                ));
            }
        }
        s
    };
    schema.source = Some(path.to_owned());
    Ok(schema)
}

/// Loads the bundled rules: the YAML tree `NIDOS_SCHEMA_DIR` names, else the copy
/// embedded at build time.
pub fn load_bundled(opts: &LoadOptions) -> Result<Schema, SchemaErrors> {
    match version::bundled_override() {
        Some(dir) => load_path_with(&dir, opts),
        None => embedded_load(opts),
    }
}

/// The embedded rules with `opts`: their precompiled form when one was provided (see
/// [`precompiled`]), else built from the tree. Here, above both modules, so that neither
/// imports the other's way.
pub(crate) fn embedded_load(opts: &LoadOptions) -> Result<Schema, SchemaErrors> {
    match precompiled::find(opts) {
        Some(s) => Ok(s),
        None => embedded::build(opts),
    }
}

/// The changes of the embedded rules serving `brand`, precompiled when provided.
pub(crate) fn embedded_changes(brand: Option<&str>) -> Result<Changes, SchemaErrors> {
    match precompiled::find_changes(brand) {
        Some(c) => Ok(c),
        None => embedded::build_changes(brand),
    }
}

/// The brand table and supported versions of the embedded rules, precompiled when
/// provided.
pub(crate) fn embedded_index() -> Result<(Option<Brands>, Vec<String>), SchemaErrors> {
    match precompiled::find_index() {
        Some(i) => Ok(i),
        None => embedded::build_index(),
    }
}

/// Pins a resolved YAML tree to a version, serves the requested brand and builds it.
/// `trusted`: the tree is the embedded one, whose structure the crate's tests check at
/// every version and brand, so the structural checks are not run again.
pub(crate) fn from_resolved_tree(
    raw: &Value,
    info: &TreeInfo,
    opts: &LoadOptions,
    trusted: bool,
) -> Result<Schema, SchemaErrors> {
    let at = opts.version.clone().unwrap_or_else(|| info.version.clone());
    let (raw, deprecations) = lifecycle::pinned_copy_in(raw, &at, opts.and_later)
        .map_err(|e| info.locate(SchemaErrors::single(e)))?;
    let strictness = if trusted {
        Strictness::Trusted
    } else {
        Strictness::Strict
    };
    let mut s = Schema::build(raw, opts, strictness).map_err(|e| info.locate(e))?;
    s.deprecations = deprecations;
    s.supported_versions = info.supported.clone();
    if !info
        .supported
        .iter()
        .any(|v| compare_versions(v, &at) == std::cmp::Ordering::Equal)
    {
        s.warnings.push(SchemaError::new(
            ErrorKind::Version,
            "version",
            format!(
                "version {at} is not among the tree's supported versions ({})",
                info.supported.join(", ")
            ),
        ));
    }
    s.warnings = info.locate(SchemaErrors(std::mem::take(&mut s.warnings))).0;
    Ok(s)
}

/// How [`Schema::build`] treats problems of structure.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strictness {
    /// A compiled upstream schema: unknown keys and loose levels are warnings.
    Lenient,
    /// Our YAML trees: they are errors.
    Strict,
    /// The embedded tree, checked by the tests: the structural checks are skipped.
    Trusted,
}

/// The versions a schema at `path` can be pinned to, newest first, without loading
/// all of it (a YAML tree's `version.yaml`; a compiled JSON's own version).
pub fn supported_versions(path: &Path) -> Result<Vec<String>, SchemaErrors> {
    if path.is_dir() {
        Ok(yaml::read_tree_info(path)
            .map_err(SchemaErrors::single)?
            .supported)
    } else {
        let opts = LoadOptions {
            tolerate_expression_errors: true,
            ..LoadOptions::default()
        };
        Ok(load_path_with(path, &opts)?.supported_versions)
    }
}

impl Schema {
    /// Builds a schema from a compiled (already resolved) JSON value.
    pub fn from_compiled_json(v: Value) -> Result<Schema, SchemaErrors> {
        Schema::build(v, &LoadOptions::default(), Strictness::Lenient)
    }

    /// [`Schema::from_compiled_json`] with options.
    pub fn from_compiled_json_with(v: Value, opts: &LoadOptions) -> Result<Schema, SchemaErrors> {
        Schema::build(v, opts, Strictness::Lenient)
    }

    /// Normalises, checks and indexes a resolved tree (see [`Strictness`]).
    fn build(
        mut v: Value,
        opts: &LoadOptions,
        strictness: Strictness,
    ) -> Result<Schema, SchemaErrors> {
        let strict = strictness != Strictness::Lenient;
        if let Some(name) = &opts.brand {
            serve_brand(&mut v, name).map_err(SchemaErrors::single)?;
        }
        let mut n = normalize::normalise(v).map_err(SchemaErrors::single)?;
        if !strict {
            // Upstream compiled schemas state a few facts only in prose.
            views::structure_prose(&mut n.raw);
        }
        let mut b = views::Builder {
            errors: Vec::new(),
            warnings: Vec::new(),
            tolerate_expression_errors: opts.tolerate_expression_errors,
            strict,
        };
        // The structure is checked while the expressions are parsed on other workers.
        let (checked, ()) = rayon::join(
            || {
                (strictness != Strictness::Trusted).then(|| {
                    (
                        check::structure_findings(&n.raw, strict),
                        check::duplicate_codes(&n.raw),
                    )
                })
            },
            || views::parse_expressions_ahead(&n.raw),
        );
        if let Some((findings, duplicates)) = checked {
            if strict {
                b.errors.extend(findings);
            } else {
                b.warnings.extend(findings);
            }
            b.warnings.extend(duplicates);
        }
        let views = b.build(&n.raw);
        if !b.errors.is_empty() {
            // One report per (key, kind): the structural check and the typed views may
            // both notice the same bad level.
            let mut seen = std::collections::HashSet::new();
            b.errors.retain(|e| seen.insert((e.key.clone(), e.kind)));
            return Err(SchemaErrors(b.errors));
        }
        let expr_sections = {
            let parsed = views
                .expressions()
                .into_iter()
                .filter_map(|(_, x)| x.parsed.as_deref());
            match raw::schema_sections(parsed) {
                Some(keys) => Value::Object(
                    keys.into_iter()
                        .filter_map(|k| n.raw.get(&k).map(|v| (k, v.clone())))
                        .collect(),
                ),
                None => n.raw.clone(),
            }
        };
        let citation = n.raw.get("rules").and_then(|r| r.get("citation")).cloned();
        Ok(Schema {
            expr_sections,
            citation,
            raw: Raw::new(n.raw),
            version: n.version.clone(),
            schema_version: n.schema_version,
            brand: n.brand,
            brands: n.brands,
            views,
            supported_versions: vec![n.version.clone()],
            deprecations: IndexMap::new(),
            warnings: b.warnings,
            source: None,
            raised_fields: Default::default(),
        })
    }

    /// The bundled schema serving `brand` (a declared brand's name; `None`: the tree's
    /// own) at version `version` (`None`: the newest).
    pub fn bundled_for(brand: Option<&str>, version: Option<&str>) -> Result<Schema, SchemaErrors> {
        let opts = LoadOptions {
            version: version.map(str::to_owned),
            brand: brand.map(str::to_owned),
            ..LoadOptions::default()
        };
        load_bundled(&opts)
    }

    /// Loads the bundled schema ([`load_bundled`]) at version `v`
    /// (see [`select_version`] to choose `v`).
    pub fn for_version(v: &str) -> Result<Schema, SchemaErrors> {
        let opts = LoadOptions {
            version: Some(v.to_owned()),
            ..LoadOptions::default()
        };
        load_bundled(&opts)
    }

    /// The bundled schema at its newest version.
    pub fn bundled() -> Result<Schema, SchemaErrors> {
        load_bundled(&LoadOptions::default())
    }

    /// The part of [`Schema::raw`] at a dotted path (`objects.entities.subject`);
    /// the empty path is the whole tree.
    pub fn get(&self, path: &str) -> Option<&Value> {
        let mut v = self.raw.value();
        if path.is_empty() {
            return Some(v);
        }
        for part in path.split('.') {
            v = match v {
                Value::Object(m) => m.get(part)?,
                Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(v)
    }

    /// An entity by long name (`subject`).
    pub fn entity(&self, name: &str) -> Option<&Entity> {
        self.entities.iter().find(|e| e.name == name)
    }

    /// An entity by short name as used in file names (`sub`).
    pub fn entity_by_key(&self, key: &str) -> Option<&Entity> {
        self.entities.iter().find(|e| e.key == key)
    }

    /// A format by name (`label`, `index`, `participant_relative`…).
    pub fn format(&self, name: &str) -> Option<&Format> {
        self.formats.get(name)
    }

    /// A metadata definition by field name (keys and names coincide for metadata).
    pub fn metadata_def(&self, name: &str) -> Option<&Definition> {
        self.metadata
            .get(name)
            .or_else(|| self.metadata.values().find(|d| d.name == name))
    }

    /// A column definition by table key (`name__segmentations`) or, failing that,
    /// by column name (first match).
    pub fn column_def(&self, key_or_name: &str) -> Option<&Definition> {
        self.columns
            .get(key_or_name)
            .or_else(|| self.columns.values().find(|d| d.name == key_or_name))
    }

    /// Suffix values as they appear in file names (`2PE`, `bold`…).
    pub fn suffix_values(&self) -> impl Iterator<Item = &str> {
        self.suffixes.values().map(|t| t.value.as_str())
    }

    /// Extension values as they appear in file names (`.nii.gz`, `.json`…).
    pub fn extension_values(&self) -> impl Iterator<Item = &str> {
        self.extensions.values().map(|t| t.value.as_str())
    }

    /// Datatype values (`anat`, `func`…).
    pub fn datatype_values(&self) -> impl Iterator<Item = &str> {
        self.datatypes.values().map(|t| t.value.as_str())
    }
}

impl Views {
    /// Every expression of the schema with its rule path, in schema order.
    pub fn expressions(&self) -> Vec<(String, &Expression)> {
        let mut out = Vec::new();
        for kind in RULE_KINDS {
            (kind.expressions)(self, &mut out);
        }
        out
    }
}
