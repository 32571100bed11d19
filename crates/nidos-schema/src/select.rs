//! Choosing the schema for a dataset: its brand from the version key its
//! `dataset_description.json` sets, then the version to pin.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::brand::{declared_brands, signs_of, BrandChoice, Brands};
use crate::error::{ErrorKind, SchemaError, SchemaErrors, Warning};
use crate::model::Brand;
use crate::version::{bundled_override, compare_versions, select_version};
use crate::{load_path_with, LoadOptions, Schema};

/// Where the rules come from.
#[derive(Clone, Debug, Default)]
pub enum Source {
    /// The bundled rules.
    #[default]
    Bundled,
    /// A YAML rule tree (directory) or a compiled JSON file.
    Path(PathBuf),
}

/// A schema chosen for one dataset.
#[derive(Debug)]
pub struct ForDataset {
    pub schema: Schema,
    /// The brand and declared version read from the dataset description.
    pub choice: BrandChoice,
    /// What choosing had to say (a replaced version, …).
    pub warnings: Vec<Warning>,
}

/// The brands and supported versions of a tree, read without loading all of it (its
/// `version.yaml` and `meta/brands.yaml`). `None` brands: the tree declares no table.
fn tree_index(root: &Path) -> Result<(Option<Brands>, Vec<String>), SchemaErrors> {
    let info = crate::yaml::read_tree_info(root).map_err(SchemaErrors::single)?;
    let file = root.join("meta").join("brands.yaml");
    let brands = if file.is_file() {
        let text = std::fs::read_to_string(&file).map_err(|e| {
            SchemaErrors::single(
                SchemaError::new(ErrorKind::Io, "meta.brands", format!("cannot read: {e}"))
                    .in_file(Some(file.clone())),
            )
        })?;
        let v = crate::yaml::parse_yaml(&text, &file).map_err(SchemaErrors::single)?;
        let mut meta = serde_json::Map::new();
        meta.insert("brands".into(), v);
        declared_brands(&meta).map_err(|e| SchemaErrors::single(e.in_file(Some(file.clone()))))?
    } else {
        None
    };
    Ok((brands, info.supported))
}

/// Loads the schema for validating a dataset with description `description` (`None`:
/// the dataset has none, as in file-name mode, where no dataset is on disk). This crate
/// reads no dataset file: `nidos_dataset::read_description` reads the description with
/// the guards every dataset file gets.
///
/// The brand is the one whose version key the dataset description sets (see
/// [`Brands::choose`]); the version is `requested` (e.g. `--std-version`), else the
/// declared one, else the newest, each replaced by a supported one with a warning
/// ([`select_version`]). A compiled JSON holds one version: it is used whatever the
/// dataset declares, with a warning when `requested` differs.
pub fn load_for_description(
    source: &Source,
    description: Option<Value>,
    requested: Option<&str>,
) -> Result<ForDataset, SchemaErrors> {
    load_guessing(source, description, requested, None, false)
}

/// Like [`load_for_description`], for a dataset on disk at `dataset` whose description
/// was read already (`nidos_dataset::read_description`): when it declares no brand, the
/// brand the dataset directory shows ([`signs_of`]: its ignore file at the root, URIs of
/// the brand's scheme in the description) is chosen over the default. The ignore file
/// is only tested for existence as a regular file, never read.
pub fn load_for_dir(
    source: &Source,
    dataset: &Path,
    description: Option<Value>,
    requested: Option<&str>,
) -> Result<ForDataset, SchemaErrors> {
    load_in_dir(source, dataset, description, requested, false)
}

/// Like [`load_for_dir`], for listing files as a layout does: when nothing is
/// requested, what any version of the tree defines ([`LoadOptions::and_later`] from the
/// oldest version: nothing the declared version defines is dropped, nothing a later
/// one adds is missed). The bundled rules serve it precompiled. Not for validation.
pub fn load_for_dir_listing(
    source: &Source,
    dataset: &Path,
    description: Option<Value>,
    requested: Option<&str>,
) -> Result<ForDataset, SchemaErrors> {
    load_in_dir(source, dataset, description, requested, requested.is_none())
}

/// [`load_for_dir`], and with `and_later` the listing union of [`load_for_dir_listing`].
fn load_in_dir(
    source: &Source,
    dataset: &Path,
    description: Option<Value>,
    requested: Option<&str>,
    and_later: bool,
) -> Result<ForDataset, SchemaErrors> {
    let shows = |b: &Brand| {
        signs_of(
            b,
            &|name: &str| dataset.join(name).is_file(),
            description.as_ref(),
        )
    };
    load_guessing(
        source,
        description.clone(),
        requested,
        Some(&shows),
        and_later,
    )
}

/// What a dataset shows of a brand besides its version key (see [`signs_of`]).
type Shows<'a> = &'a dyn Fn(&Brand) -> Option<String>;

/// [`load_for_description`]; when the description declares no brand, the brand the
/// dataset shows (`shows`, see [`Brands::guess`]) is chosen instead of the default.
fn load_guessing(
    source: &Source,
    description: Option<Value>,
    requested: Option<&str>,
    shows: Option<Shows<'_>>,
    and_later: bool,
) -> Result<ForDataset, SchemaErrors> {
    let guess = |b: &Brands| shows.and_then(|f| b.guess(f));
    let root = match source {
        Source::Bundled => match bundled_override() {
            Some(dir) => dir,
            None => return embedded_for_dataset(description.as_ref(), requested, shows, and_later),
        },
        Source::Path(p) => p.clone(),
    };
    if !root.is_dir() {
        // A compiled JSON: one brand, one version.
        let opts = LoadOptions {
            version: requested.map(str::to_owned),
            ..LoadOptions::default()
        };
        let schema = load_path_with(&root, &opts)?;
        let choice = schema.brands.choose(description.as_ref());
        return Ok(ForDataset {
            schema,
            choice,
            warnings: Vec::new(),
        });
    }
    let (brands, supported) = tree_index(&root)?;
    let mut warnings = Vec::new();
    let (choice, brand) = match &brands {
        Some(b) => {
            let c = b.choose_guessing(description.as_ref(), guess(b).as_ref());
            let name = c.brand.name.clone();
            (Some(c), Some(name))
        }
        None => (None, None),
    };
    let declared = match &choice {
        Some(c) => c.declared_version.clone(),
        None => None,
    };
    let (version, warning) = select_version(requested, declared.as_deref(), &supported);
    warnings.extend(warning);
    if let Some(c) = &choice {
        warnings.extend(undeclared(description.as_ref(), c, requested, &version));
    }
    let opts = LoadOptions {
        version: Some(listing_version(version, and_later, &supported)),
        brand,
        and_later,
        ..LoadOptions::default()
    };
    let mut schema = load_path_with(&root, &opts)?;
    let choice = match choice {
        Some(c) => c,
        None => {
            // One brand only: read the declared version under its key, and pin to it
            // when nothing was requested.
            let c = schema.brands.choose(description.as_ref());
            if requested.is_none() {
                if let Some(d) = &c.declared_version {
                    let (v, w) = select_version(None, Some(d), &supported);
                    if compare_versions(&v, &schema.version) != std::cmp::Ordering::Equal {
                        let opts = LoadOptions {
                            version: Some(v),
                            ..LoadOptions::default()
                        };
                        schema = load_path_with(&root, &opts)?;
                    }
                    warnings.extend(w);
                }
            }
            c
        }
    };
    Ok(ForDataset {
        schema,
        choice,
        warnings,
    })
}

/// Where the compiled schemas of the bundled rules' brands are published (a URL with
/// `{tag}`, see [`crate::model::Brand::published_schema`]): the template of the brand the
/// dataset description `description` selects, else of the first declared brand that has
/// one. The bundled rules are the embedded tree, or the one `NIDOS_SCHEMA_DIR` names.
pub fn published_schema_template(
    description: Option<&Value>,
) -> Result<Option<String>, SchemaErrors> {
    let brands = match bundled_override() {
        Some(dir) => tree_index(&dir)?.0,
        None => crate::embedded_index()?.0,
    };
    let Some(brands) = brands else {
        return Ok(None);
    };
    let chosen = brands.choose(description).brand;
    Ok(chosen
        .published_schema
        .or_else(|| brands.list.iter().find_map(|b| b.published_schema.clone())))
}

/// [`load_for_description`] on the embedded rules.
fn embedded_for_dataset(
    description: Option<&Value>,
    requested: Option<&str>,
    shows: Option<Shows<'_>>,
    and_later: bool,
) -> Result<ForDataset, SchemaErrors> {
    let (brands, supported) = crate::embedded_index()?;
    let brands = brands.ok_or_else(|| {
        SchemaErrors::single(SchemaError::new(
            ErrorKind::Structure,
            "meta.brands",
            "the embedded rules declare no brands",
        ))
    })?;
    let guessed = shows.and_then(|f| brands.guess(f));
    let choice = brands.choose_guessing(description, guessed.as_ref());
    let (version, warning) =
        select_version(requested, choice.declared_version.as_deref(), &supported);
    let mut warnings: Vec<Warning> = warning.into_iter().collect();
    warnings.extend(undeclared(description, &choice, requested, &version));
    let opts = LoadOptions {
        version: Some(listing_version(version, and_later, &supported)),
        brand: Some(choice.brand.name.clone()),
        and_later,
        ..LoadOptions::default()
    };
    Ok(ForDataset {
        schema: crate::embedded_load(&opts)?,
        choice,
        warnings,
    })
}

/// The version a load starts from: `version`, or for a listing (`and_later`) the oldest
/// supported one, so the union holds what any version defines. One union per brand is
/// then enough (the bundled build precompiles it), and it holds everything the declared
/// version defines and everything a later one adds (besides what earlier versions
/// defined and later removed, which a pybids layout lists too).
fn listing_version(version: String, and_later: bool, supported: &[String]) -> String {
    if !and_later {
        return version;
    }
    supported
        .iter()
        .min_by(|a, b| crate::compare_versions(a, b))
        .cloned()
        .unwrap_or(version)
}

/// The warning for a description that declares no version (as text) under its brand's
/// key, when none was requested: the newest rules, `version`, apply. Nothing when there
/// is no description at all (file-name mode).
fn undeclared(
    description: Option<&Value>,
    choice: &BrandChoice,
    requested: Option<&str>,
    version: &str,
) -> Option<Warning> {
    if requested.is_some() || choice.declared_version.is_some() {
        return None;
    }
    let Some(Value::Object(_)) = description else {
        return None;
    };
    Some(SchemaError::new(
        ErrorKind::Version,
        "",
        format!(
            "dataset_description.json declares no {} (as text); using the rules of the newest version, {version}",
            choice.brand.version_key
        ),
    ))
}
