//! Brands as data: the names under which the standard is published, and how one rule
//! tree serves each of them.
//!
//! A tree declares its brands in `meta.brands`:
//!
//! ```yaml
//! tree: Std          # the brand whose names the files of the tree are written in
//! default: Std       # applied when a dataset declares no brand's version key, or several
//! init: Other        # optional: the brand `nidos init` writes (default: `default`)
//! declared:
//!   Std:  {version_key: StdVersion,  uri_scheme: std,  ignore_file: .stdignore}
//!   Other: {version_key: OtherVersion, uri_scheme: other, ignore_file: .otherignore}
//! ```
//!
//! Loading the tree for a brand other than `tree` rewrites the tree brand's tokens in
//! every key and string (expressions, patterns, messages, descriptions) into the chosen
//! brand's: the version key, the URI scheme (`std:`, `std-uri`, `std_uri`), the ignore
//! file name and the brand name. A token is replaced only where it stands as a whole
//! word, so `Std` inside `StdVersion` or `UNKNOWN_STD_X` is left alone.
//!
//! A schema without `meta.brands` (a compiled upstream schema, a one-brand tree) serves
//! exactly one brand: an explicit `meta.brand`, else the one whose `<Name>Version` field
//! `dataset_description.json` requires.

use serde_json::{Map, Value};

use crate::error::{ErrorKind, SchemaError};
use crate::model::Brand;

mod rewrite;
pub(crate) use rewrite::Tokens;

pub(crate) use rewrite::translate;

/// Issue code: `dataset_description.json` declares the version keys of several brands.
pub const BRAND_AMBIGUOUS: &str = "BRAND_AMBIGUOUS";
/// Issue code: `dataset_description.json` declares no brand's version key.
pub const BRAND_UNDECLARED: &str = "BRAND_UNDECLARED";

/// The brands a schema can serve.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Brands {
    /// Every declared brand, in declaration order (never empty).
    pub list: Vec<Brand>,
    /// Index in `list` of the brand the tree is written in.
    pub tree: usize,
    /// Index in `list` of the brand used when a dataset does not say.
    pub default: usize,
    /// Index in `list` of the brand a new dataset is written in (`nidos init`).
    pub init: usize,
}

/// A brand-choice problem worth reporting on the dataset description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrandIssue {
    /// [`BRAND_AMBIGUOUS`] or [`BRAND_UNDECLARED`].
    pub code: &'static str,
    /// What was found and which brand's rules apply.
    pub message: String,
}

/// What a dataset description says about its brand and version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrandChoice {
    pub brand: Brand,
    /// The version the description declares under the chosen brand's key.
    pub declared_version: Option<String>,
    pub issue: Option<BrandIssue>,
}

impl Brands {
    /// One brand and nothing else.
    pub fn single(brand: Brand) -> Brands {
        Brands {
            list: vec![brand],
            tree: 0,
            default: 0,
            init: 0,
        }
    }

    /// The brand the tree is written in.
    pub fn tree_brand(&self) -> &Brand {
        &self.list[self.tree.min(self.list.len() - 1)]
    }

    /// The brand used when a dataset does not say.
    pub fn default_brand(&self) -> &Brand {
        &self.list[self.default.min(self.list.len() - 1)]
    }

    /// The brand a new dataset is written in.
    pub fn init_brand(&self) -> &Brand {
        &self.list[self.init.min(self.list.len() - 1)]
    }

    /// A declared brand by name (exact, then ignoring ASCII case).
    pub fn named(&self, name: &str) -> Option<&Brand> {
        self.list
            .iter()
            .find(|b| b.name == name)
            .or_else(|| self.list.iter().find(|b| b.name.eq_ignore_ascii_case(name)))
    }

    /// The names of the declared brands, for messages.
    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|b| b.name.as_str()).collect()
    }

    /// The one declared brand a dataset shows signs of besides its version key, with
    /// what it shows: `shows` answers, for a brand, what of it the dataset has (its
    /// ignore file, its URI scheme), or `None`. No brand, or several: `None`.
    pub fn guess(&self, shows: &dyn Fn(&Brand) -> Option<String>) -> Option<(Brand, String)> {
        let mut found = self
            .list
            .iter()
            .filter_map(|b| shows(b).map(|why| (b.clone(), why)));
        let one = found.next()?;
        found.next().is_none().then_some(one)
    }

    /// Which brand a dataset description selects, given a test for "the description
    /// sets this key". With one declared brand there is never an issue.
    pub fn choose_by(&self, has_key: &dyn Fn(&str) -> bool) -> (Brand, Option<BrandIssue>) {
        self.choose_by_guessing(has_key, None)
    }

    /// [`Brands::choose_by`], with the brand the dataset otherwise shows ([`Brands::guess`])
    /// taking the default's place when the description sets no version key.
    pub fn choose_by_guessing(
        &self,
        has_key: &dyn Fn(&str) -> bool,
        guessed: Option<&(Brand, String)>,
    ) -> (Brand, Option<BrandIssue>) {
        let present: Vec<&Brand> = self
            .list
            .iter()
            .filter(|b| has_key(&b.version_key))
            .collect();
        let default = self.default_brand();
        let keys = |bs: &[&Brand]| {
            bs.iter()
                .map(|b| b.version_key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match present.as_slice() {
            [one] => ((*one).clone(), None),
            _ if self.list.len() < 2 => (default.clone(), None),
            [] => {
                let all: Vec<&Brand> = self.list.iter().collect();
                let (brand, why) = match guessed {
                    Some((b, shows)) => (
                        b.clone(),
                        format!("the dataset has {shows}, so the rules of {} apply", b.name),
                    ),
                    None => (
                        default.clone(),
                        format!("the rules of the default brand, {}, apply", default.name),
                    ),
                };
                (
                    brand,
                    Some(BrandIssue {
                        code: BRAND_UNDECLARED,
                        message: format!(
                            "dataset_description.json sets none of the version keys {}; {why}",
                            keys(&all)
                        ),
                    }),
                )
            }
            several => {
                let chosen = several
                    .iter()
                    .find(|b| b.name == default.name)
                    .copied()
                    .unwrap_or(several[0]);
                (
                    chosen.clone(),
                    Some(BrandIssue {
                        code: BRAND_AMBIGUOUS,
                        message: format!(
                            "dataset_description.json sets the version keys of several \
                             brands ({}); keep only one. The rules of {} apply",
                            keys(several),
                            chosen.name
                        ),
                    }),
                )
            }
        }
    }

    /// [`Brands::choose_by`] on a parsed `dataset_description.json` (`None` or a
    /// value that is not a mapping: the default brand, no issue).
    pub fn choose(&self, description: Option<&Value>) -> BrandChoice {
        self.choose_guessing(description, None)
    }

    /// [`Brands::choose`], with the brand the dataset otherwise shows ([`Brands::guess`])
    /// in the default's place when the description declares none.
    pub fn choose_guessing(
        &self,
        description: Option<&Value>,
        guessed: Option<&(Brand, String)>,
    ) -> BrandChoice {
        let Some(Value::Object(desc)) = description else {
            return BrandChoice {
                brand: guessed
                    .map(|(b, _)| b.clone())
                    .unwrap_or_else(|| self.default_brand().clone()),
                declared_version: None,
                issue: None,
            };
        };
        let (brand, issue) =
            self.choose_by_guessing(&|k| desc.get(k).is_some_and(|v| !v.is_null()), guessed);
        let declared_version = desc
            .get(&brand.version_key)
            .and_then(Value::as_str)
            .map(str::to_owned);
        BrandChoice {
            brand,
            declared_version,
            issue,
        }
    }

    /// The `meta.brands` value of this table.
    pub(crate) fn to_value(&self) -> Value {
        let mut declared = Map::new();
        for b in &self.list {
            let mut m = brand_value(b);
            m.shift_remove("name");
            declared.insert(b.name.clone(), Value::Object(m));
        }
        let mut out = Map::new();
        out.insert("tree".into(), self.tree_brand().name.clone().into());
        out.insert("default".into(), self.default_brand().name.clone().into());
        if self.init != self.default {
            out.insert("init".into(), self.init_brand().name.clone().into());
        }
        out.insert("declared".into(), Value::Object(declared));
        Value::Object(out)
    }
}

/// What a dataset shows of `brand` besides its version key, for [`Brands::guess`]: its
/// ignore file at the root (`has_file` answers for a root file name), else a string of
/// the dataset description that is a URI of its scheme (`bids:…`). `None`: nothing.
pub fn signs_of(
    brand: &Brand,
    has_file: &dyn Fn(&str) -> bool,
    description: Option<&Value>,
) -> Option<String> {
    if !brand.ignore_file.is_empty() && has_file(&brand.ignore_file) {
        return Some(brand.ignore_file.clone());
    }
    if brand.uri_scheme.is_empty() {
        return None;
    }
    let prefix = format!("{}:", brand.uri_scheme);
    fn any_string(v: &Value, f: &dyn Fn(&str) -> bool) -> bool {
        match v {
            Value::String(s) => f(s),
            Value::Array(a) => a.iter().any(|x| any_string(x, f)),
            Value::Object(m) => m.values().any(|x| any_string(x, f)),
            _ => false,
        }
    }
    description
        .is_some_and(|d| any_string(d, &|s: &str| s.starts_with(prefix.as_str())))
        .then(|| format!("{prefix} URIs"))
}

/// A brand's table as a mapping (`name`, `version_key`, `uri_scheme`, `ignore_file`).
pub(crate) fn brand_value(b: &Brand) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(b.name.clone()));
    m.insert("version_key".into(), Value::String(b.version_key.clone()));
    m.insert("uri_scheme".into(), Value::String(b.uri_scheme.clone()));
    m.insert("ignore_file".into(), Value::String(b.ignore_file.clone()));
    if let Some(url) = &b.published_schema {
        m.insert("published_schema".into(), Value::String(url.clone()));
    }
    m
}

/// A brand named `name` with the conventional derived names: `<name>Version`, the
/// lower-cased name as URI scheme, `.<lower-cased name>ignore`.
pub fn brand_named(name: &str) -> Brand {
    let lower = name.to_ascii_lowercase();
    Brand {
        name: name.to_owned(),
        version_key: format!("{name}Version"),
        uri_scheme: lower.clone(),
        ignore_file: format!(".{lower}ignore"),
        published_schema: None,
    }
}

/// A brand from its name and a table overriding the derived names.
fn brand_from_table(
    name: &str,
    table: &Map<String, Value>,
    at: &str,
) -> Result<Brand, SchemaError> {
    let mut b = brand_named(name);
    for (k, v) in table {
        let Some(s) = v.as_str().filter(|s| !s.is_empty()) else {
            return Err(SchemaError::new(
                ErrorKind::Structure,
                format!("{at}.{k}"),
                "expected a non-empty string",
            ));
        };
        match k.as_str() {
            "name" if s == name => {}
            "name" => {
                return Err(SchemaError::new(
                    ErrorKind::Structure,
                    format!("{at}.name"),
                    format!("the brand is declared as {name:?} but named {s:?}"),
                ))
            }
            "version_key" => b.version_key = s.to_owned(),
            "uri_scheme" => b.uri_scheme = s.trim_end_matches(':').to_owned(),
            "ignore_file" => b.ignore_file = s.to_owned(),
            "published_schema" if s.contains("{tag}") => b.published_schema = Some(s.to_owned()),
            "published_schema" => {
                return Err(SchemaError::new(
                    ErrorKind::Structure,
                    format!("{at}.{k}"),
                    "expected a URL containing {tag}, the place of the release tag",
                ))
            }
            _ => return Err(SchemaError::new(
                ErrorKind::UnknownKey,
                format!("{at}.{k}"),
                "unknown brand key (name, version_key, uri_scheme, ignore_file, published_schema)",
            )),
        }
    }
    Ok(b)
}

/// The brand table of a (raw, unnormalised or normalised) `meta` mapping:
/// `meta.brands` when present, else `None`.
pub(crate) fn declared_brands(meta: &Map<String, Value>) -> Result<Option<Brands>, SchemaError> {
    let Some(v) = meta.get("brands") else {
        return Ok(None);
    };
    let Value::Object(m) = v else {
        return Err(SchemaError::new(
            ErrorKind::Structure,
            "meta.brands",
            "expected a mapping with tree, default and declared",
        ));
    };
    let mut list = Vec::new();
    match m.get("declared") {
        Some(Value::Object(d)) if !d.is_empty() => {
            for (name, table) in d {
                let at = format!("meta.brands.declared.{name}");
                let table = match table {
                    Value::Object(t) => t.clone(),
                    Value::Null => Map::new(),
                    _ => {
                        return Err(SchemaError::new(
                            ErrorKind::Structure,
                            at,
                            "expected a mapping of the brand's names",
                        ))
                    }
                };
                list.push(brand_from_table(name, &table, &at)?);
            }
        }
        _ => {
            return Err(SchemaError::new(
                ErrorKind::Structure,
                "meta.brands.declared",
                "expected a non-empty mapping of brand name → names",
            ))
        }
    }
    for (i, a) in list.iter().enumerate() {
        for b in &list[..i] {
            for (what, x, y) in [
                ("version key", &a.version_key, &b.version_key),
                ("URI scheme", &a.uri_scheme, &b.uri_scheme),
                ("ignore file", &a.ignore_file, &b.ignore_file),
            ] {
                if x == y {
                    return Err(SchemaError::new(
                        ErrorKind::Structure,
                        format!("meta.brands.declared.{}", a.name),
                        format!("{} and {} share the {what} {x:?}", b.name, a.name),
                    ));
                }
            }
        }
    }
    let index_of = |key: &str| -> Result<usize, SchemaError> {
        let name = m.get(key).and_then(Value::as_str).ok_or_else(|| {
            SchemaError::new(
                ErrorKind::Structure,
                format!("meta.brands.{key}"),
                "expected the name of a declared brand",
            )
        })?;
        list.iter().position(|b| b.name == name).ok_or_else(|| {
            SchemaError::new(
                ErrorKind::Structure,
                format!("meta.brands.{key}"),
                format!("{name:?} is not among the declared brands"),
            )
        })
    };
    let tree = index_of("tree")?;
    let default = index_of("default")?;
    let init = if m.contains_key("init") {
        index_of("init")?
    } else {
        default
    };
    if let Some(k) = m
        .keys()
        .find(|k| !matches!(k.as_str(), "tree" | "default" | "init" | "declared"))
    {
        return Err(SchemaError::new(
            ErrorKind::UnknownKey,
            format!("meta.brands.{k}"),
            "unknown key (tree, default, init, declared)",
        ));
    }
    Ok(Some(Brands {
        list,
        tree,
        default,
        init,
    }))
}

/// The one brand of a schema without a brand table: an explicit `meta.brand` (a name,
/// or a mapping with `name` and optional names), else the `<Name>Version` field that
/// `rules.dataset_metadata.dataset_description` requires, else an unnamed brand.
pub(crate) fn single_brand(
    meta: &Map<String, Value>,
    rules: &Map<String, Value>,
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
            return brand_from_table(name, m, "meta.brand");
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
    let required = |v: &Value| {
        let level = match v {
            Value::String(s) => Some(s.as_str()),
            Value::Object(m) => m.get("level").and_then(Value::as_str),
            _ => None,
        };
        level.is_some_and(|l| crate::model::Level::parse(l) == Some(crate::model::Level::Required))
    };
    let found = fields.into_iter().flatten().find_map(|(k, v)| {
        let prefix = k.strip_suffix("Version")?;
        (!prefix.is_empty() && required(v)).then(|| brand_named(prefix))
    });
    // Nothing says: an unnamed brand (no version key, URI scheme or ignore file).
    Ok(found.unwrap_or(Brand {
        name: String::new(),
        version_key: String::new(),
        uri_scheme: String::new(),
        ignore_file: String::new(),
        published_schema: None,
    }))
}

/// Makes a raw tree serve the brand named `name`: with a brand table, rewrites the
/// tokens of the brand the tree is currently written in (`meta.brand`, else the table's
/// `tree`) into that brand's and records it as `meta.brand`; without one, checks that
/// the schema's one brand is `name`.
pub(crate) fn serve_brand(raw: &mut Value, name: &str) -> Result<(), SchemaError> {
    let Some((current, target)) = brand_pair(raw, name)? else {
        return Ok(());
    };
    translate(raw, &current, &target);
    if let Value::Object(top) = raw {
        if let Some(Value::Object(meta)) = top.get_mut("meta") {
            meta.insert("brand".into(), Value::Object(brand_value(&target)));
        }
    }
    Ok(())
}

/// The rewrite [`serve_brand`] applies to the texts of `raw` to serve the brand `name`,
/// for texts taken out of the tree (`None`: the tree is written in that brand).
pub(crate) fn tokens_for(raw: &Value, name: &str) -> Result<Option<Tokens>, SchemaError> {
    Ok(brand_pair(raw, name)?
        .filter(|(current, target)| current != target)
        .map(|(current, target)| Tokens::new(&current, &target)))
}

/// The brand `raw` is written in and the brand named `name` it is to serve; `None`
/// when the schema declares no brand table and its one brand is `name`.
fn brand_pair(raw: &Value, name: &str) -> Result<Option<(Brand, Brand)>, SchemaError> {
    let empty = Map::new();
    let meta = raw.get("meta").and_then(Value::as_object).unwrap_or(&empty);
    let Some(table) = declared_brands(meta)? else {
        let rules = raw
            .get("rules")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let only = single_brand(meta, rules)?;
        if only.name != name {
            return Err(SchemaError::new(
                ErrorKind::Structure,
                "meta.brand",
                format!(
                    "the brand {name} was asked for, but this schema serves only {}",
                    only.name
                ),
            ));
        }
        return Ok(None);
    };
    let Some(target) = table.named(name).cloned() else {
        return Err(SchemaError::new(
            ErrorKind::Structure,
            "meta.brands",
            format!(
                "the brand {name} was asked for, but this schema declares only {}",
                table.names().join(", ")
            ),
        ));
    };
    let current = match meta.get("brand") {
        None | Some(Value::Null) => table.tree_brand().clone(),
        Some(_) => {
            let now = single_brand(meta, &Map::new())?;
            table.named(&now.name).cloned().unwrap_or(now)
        }
    };
    Ok(Some((current, target)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice() {
        let brands = Brands {
            list: vec![brand_named("Std"), brand_named("Up")],
            tree: 0,
            default: 0,
            init: 0,
        };
        let pick = |j: &str| brands.choose(Some(&serde_json::from_str(j).unwrap()));
        let c = pick(r#"{"UpVersion": "1.9.0"}"#);
        assert_eq!(
            (c.brand.name.as_str(), c.declared_version.as_deref()),
            ("Up", Some("1.9.0"))
        );
        assert!(c.issue.is_none());
        let c = pick(r#"{"UpVersion": "1.9.0", "StdVersion": "1.8.0"}"#);
        assert_eq!(c.brand.name, "Std");
        assert_eq!(c.issue.map(|i| i.code), Some(BRAND_AMBIGUOUS));
        let c = pick(r#"{"Name": "x"}"#);
        assert_eq!(c.brand.name, "Std");
        assert_eq!(c.issue.map(|i| i.code), Some(BRAND_UNDECLARED));
        assert!(brands.choose(None).issue.is_none());
        let shows_up = |b: &Brand| (b.name == "Up").then(|| ".upignore".to_string());
        let guessed = brands.guess(&shows_up);
        let c = brands.choose_guessing(Some(&serde_json::json!({"Name": "x"})), guessed.as_ref());
        assert_eq!(c.brand.name, "Up");
        assert!(c
            .issue
            .is_some_and(|i| i.message.contains(".upignore, so the rules of Up")));
        assert!(brands.guess(&|b| Some(b.name.clone())).is_none());
        let one = Brands::single(brand_named("Up"));
        assert!(one.choose(Some(&serde_json::json!({}))).issue.is_none());
    }
}
