//! The compact, serialisable form of one HED schema: the facts nidos needs (tag tree,
//! attributes, unit and value classes), no descriptions. Written by `cargo xtask hed-import`,
//! stored gzip-compressed, carried in the binary in the precompiled form of [`crate::compact`]
//! (made by `build.rs`), turned into a schema by [`crate::schema::HedSchema::from_data`].

use serde::{Deserialize, Serialize};

fn is_false(b: &bool) -> bool {
    !*b
}

/// One schema version, as stored on disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SchemaData {
    /// Version of this schema (`8.4.0`, or the library's own version).
    pub version: String,
    /// Library name (`score`, `testlib`); empty for the standard schema.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub library: String,
    /// Standard version a library is partnered with (merged into), if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub with_standard: String,
    /// The file held only the library's own nodes although it names a partner.
    #[serde(default, skip_serializing_if = "is_false")]
    pub unmerged: bool,
    /// Tags in document order; a parent always precedes its children.
    pub tags: Vec<TagData>,
    #[serde(default)]
    pub unit_classes: Vec<UnitClassData>,
    #[serde(default)]
    pub unit_modifiers: Vec<UnitModifierData>,
    #[serde(default)]
    pub value_classes: Vec<ValueClassData>,
}

/// One node of the tag tree (`#` for a value placeholder node).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TagData {
    /// The node's own name.
    pub n: String,
    /// Index of the parent in `tags`, absent for a root node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<u32>,
    /// Boolean attributes that are set (`requireChild`, `unique`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub f: Vec<String>,
    /// Value classes (placeholder nodes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vc: Vec<String>,
    /// Unit classes (placeholder nodes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uc: Vec<String>,
    /// Version of the standard from which the tag is deprecated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dep: Option<String>,
    /// Library a merged node comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lib: Option<String>,
    /// The node's permanent identifier (`hedId`, `HED_0012001`), when the import kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UnitClassData {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    pub units: Vec<UnitData>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UnitData {
    pub name: String,
    /// Takes SI prefixes (`SIUnit`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub si: bool,
    /// Written as a symbol (`unitSymbol`): takes symbol prefixes, case-sensitive.
    #[serde(default, skip_serializing_if = "is_false")]
    pub symbol: bool,
    /// Written before the value (`unitPrefix`, e.g. `$`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub prefix: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UnitModifierData {
    pub name: String,
    /// A symbol modifier (`k`, `m`) rather than a word (`kilo`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub symbol: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ValueClassData {
    pub name: String,
    /// Allowed character groups as the schema names them (`letters`, `digits`, `hyphen`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chars: Vec<String>,
}

impl SchemaData {
    /// Serialises and gzip-compresses the data.
    pub fn to_gzip_json(&self) -> std::io::Result<Vec<u8>> {
        use std::io::Write;
        let json = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(&json)?;
        enc.finish()
    }

    /// Reads data written by [`SchemaData::to_gzip_json`] (or plain JSON).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        use std::io::Read;
        let json: Vec<u8> = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(bytes)
                .read_to_end(&mut out)
                .map_err(|e| format!("corrupt gzip data: {e}"))?;
            out
        } else {
            bytes.to_vec()
        };
        serde_json::from_slice(&json).map_err(|e| format!("invalid schema data: {e}"))
    }
}
