//! File names: entities, suffix, extension and stem, without regular expressions.

use foldhash::{HashMap, HashSet};

/// What file-name parsing needs to know from the schema: the entities (short key ↔ long
/// name, in the schema's canonical order) and the known datatypes.
#[derive(Clone, Debug, Default)]
pub struct NameTable {
    /// Short key (`sub`) → long name (`subject`).
    pub key_to_name: HashMap<String, String>,
    /// Long names in the schema's entity order.
    pub order: Vec<String>,
    pub datatypes: HashSet<String>,
}

impl NameTable {
    /// The entities (in the schema's canonical order) and datatypes of a schema.
    pub fn from_schema(schema: &nidos_schema::Schema) -> Self {
        Self {
            key_to_name: schema
                .entities
                .iter()
                .map(|e| (e.key.clone(), e.name.clone()))
                .collect(),
            order: schema.entities.iter().map(|e| e.name.clone()).collect(),
            datatypes: schema.datatypes.values().map(|t| t.value.clone()).collect(),
        }
    }

    /// The long name of a short key; unknown keys map to themselves.
    pub fn long_name<'a>(&'a self, key: &'a str) -> &'a str {
        self.key_to_name.get(key).map(String::as_str).unwrap_or(key)
    }
}

/// A parsed file name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedName {
    /// `(short key, value)` pairs in file-name order (`[("sub","01"), ("task","rest")]`).
    pub pairs: Vec<(String, String)>,
    /// The suffix (last `_`-separated part without a `-`), if any.
    pub suffix: Option<String>,
    /// The extension, from the left-most period that follows an alphanumeric character
    /// (`.nii.gz`); empty when there is none. Directories treated as files end with `/`.
    pub extension: String,
    /// Parts of the stem that are neither `key-value` pairs nor the final suffix.
    pub stray: Vec<String>,
}

impl ParsedName {
    /// The `(key, value)` pairs sorted by key, then value (the order inheritance keys use).
    pub fn sorted_pairs(&self) -> Vec<(&str, &str)> {
        let mut pairs: Vec<(&str, &str)> = self
            .pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        pairs.sort_unstable();
        pairs
    }

    /// The value of an entity by short key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether every entity of `self` appears with the same value in `other`, except the
    /// keys in `free` (which may take any value).
    pub fn entities_subset_of(&self, other: &ParsedName, free: &[String]) -> bool {
        self.pairs
            .iter()
            .all(|(k, v)| free.iter().any(|f| f == k) || other.get(k) == Some(v.as_str()))
    }
}

/// Splits a name into stem and extension.
pub fn split_extension(name: &str) -> (&str, &str) {
    let b = name.as_bytes();
    for i in 1..b.len() {
        if b[i] == b'.' && b[i - 1].is_ascii_alphanumeric() {
            return (&name[..i], &name[i..]);
        }
    }
    (name, "")
}

/// Parses one file name (the last path component; `is_dir` appends `/` to the extension).
pub fn parse_name(name: &str, is_dir: bool) -> ParsedName {
    let (stem, ext) = split_extension(name);
    let mut extension = ext.to_string();
    if is_dir {
        extension.push('/');
    }
    let mut out = ParsedName {
        extension,
        ..Default::default()
    };
    let parts: Vec<&str> = stem.split('_').collect();
    let n = parts.len();
    // Exactly the room the pairs need (a dataset holds one parsed name per file).
    out.pairs
        .reserve_exact(parts.iter().filter(|p| p.contains('-')).count());
    for (i, part) in parts.iter().enumerate() {
        match part.split_once('-') {
            Some((k, v)) => out.pairs.push((k.to_string(), v.to_string())),
            None if i + 1 == n => {
                if !part.is_empty() {
                    out.suffix = Some(part.to_string())
                }
            }
            None => out.stray.push(part.to_string()),
        }
    }
    out
}

/// The datatype of a file from its dataset-relative path (`/sub-01/anat/x.nii`): the
/// parent directory's name when it is a known datatype.
pub fn datatype_of<'a>(path: &'a str, table: &NameTable) -> Option<&'a str> {
    let trimmed = path.trim_end_matches('/');
    let dir = &trimmed[..trimmed.rfind('/')?];
    let parent = &dir[dir.rfind('/').map(|i| i + 1).unwrap_or(0)..];
    if table.datatypes.contains(parent) {
        Some(parent)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let p = parse_name("sub-01_task-rest_run-1_bold.nii.gz", false);
        assert_eq!(p.suffix.as_deref(), Some("bold"));
        assert_eq!(p.extension, ".nii.gz");
        assert_eq!(p.get("task"), Some("rest"));
        let p = parse_name("sub-01_SPIM.ome.zarr", true);
        assert_eq!(p.extension, ".ome.zarr/");
        let p = parse_name(".bidsignore", false);
        assert_eq!(p.extension, "");
        let p = parse_name("README", false);
        assert_eq!(p.suffix.as_deref(), Some("README"));
        assert_eq!(
            split_extension("sub-01_desc-1.5mm_T1w.nii"),
            ("sub-01_desc-1", ".5mm_T1w.nii")
        );
    }
}
