//! Facts of the schema the dataset layer uses, extracted once from the typed model.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use nidos_expr::{Expr, Value};

use crate::filename::NameTable;

/// Facts of the schema the dataset layer uses, extracted once.
#[derive(Debug)]
pub struct SchemaInfo {
    pub names: NameTable,
    /// Root-level directory names that are opaque, lower-cased: `Code/` is `code/`
    /// (as the reference matches them); see [`SchemaInfo::is_opaque_dir`].
    pub opaque_dirs: HashSet<String>,
    /// Extensions of directories treated as files (`.ome.zarr/`, `.ds/`, `/`).
    pub dir_extensions: HashSet<String>,
    /// Datatype → modality.
    pub modalities: foldhash::HashMap<String, String>,
    pub associations: Vec<AssocDef>,
    pub ignore_file: String,
    pub uri_scheme: String,
    /// The parts of the schema's tree that expressions read through `schema`
    /// (`Schema::expr_sections`), converted on first use by a `schema` lookup.
    raw: Arc<serde_json::Value>,
    value: OnceLock<Value>,
}

impl SchemaInfo {
    /// Whether a root-level directory is opaque (its content listed, not validated).
    /// Case does not matter: a `Code/` folder is the code folder.
    pub fn is_opaque_dir(&self, name: &str) -> bool {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            self.opaque_dirs.contains(&name.to_ascii_lowercase())
        } else {
            self.opaque_dirs.contains(name)
        }
    }

    /// What the dataset layer needs of a loaded schema (its typed model; the raw tree
    /// only as the context's `schema` value).
    pub fn from_schema(schema: &nidos_schema::Schema) -> Self {
        let mut opaque_dirs: HashSet<String> = schema
            .directories
            .iter()
            .filter(|d| d.opaque)
            .filter_map(|d| d.name.as_deref())
            .map(|n| n.trim_end_matches('/').to_ascii_lowercase())
            .collect();
        if opaque_dirs.is_empty() {
            // Schemas before directory rules existed: the conventional opaque folders.
            for d in ["code", "derivatives", "sourcedata", "stimuli"] {
                opaque_dirs.insert(d.to_string());
            }
        }
        let dir_extensions = schema
            .extensions
            .values()
            .filter(|t| t.value.ends_with('/'))
            .map(|t| t.value.clone())
            .collect();
        let modalities = schema
            .modalities
            .iter()
            .flat_map(|(m, dts)| dts.iter().map(move |dt| (dt.clone(), m.clone())))
            .collect();
        Self {
            names: NameTable::from_schema(schema),
            opaque_dirs,
            dir_extensions,
            modalities,
            associations: number_kind_selectors(
                schema
                    .associations
                    .iter()
                    .map(AssocDef::from_schema)
                    .collect(),
            ),
            ignore_file: schema.brand.ignore_file.clone(),
            uri_scheme: schema.brand.uri_scheme.clone(),
            raw: Arc::new(schema.expr_sections.clone()),
            value: OnceLock::new(),
        }
    }

    /// The whole schema as a value (the context's `schema`), converted once.
    pub fn value(&self) -> Value {
        self.value_ref().clone()
    }

    /// [`SchemaInfo::value`], borrowed.
    pub fn value_ref(&self) -> &Value {
        self.value.get_or_init(|| Value::from(&*self.raw))
    }
}

/// One association of the schema, selectors parsed once.
#[derive(Clone, Debug)]
pub struct AssocDef {
    pub name: String,
    /// Selector sources and their parsed forms (`None`: did not parse; the association
    /// then never applies).
    pub selectors: Vec<(String, Option<Arc<Expr>>)>,
    /// By selector: its number among the selectors of all associations that read only a
    /// file's kind ([`crate::kinds::KIND_NAMES`]), `None` for the others.
    pub kind_slots: Vec<Option<usize>>,
    pub suffix: Option<String>,
    pub extensions: Vec<String>,
    pub free_entities: Vec<String>,
    pub inherit: bool,
    /// `reverse: <association>`: the files that association links to this one.
    pub reverse: Option<String>,
}

/// Numbers the selectors of `defs` that read only a file's kind, in order
/// ([`AssocDef::kind_slots`]).
fn number_kind_selectors(mut defs: Vec<AssocDef>) -> Vec<AssocDef> {
    let mut next = 0;
    for def in &mut defs {
        def.kind_slots = def
            .selectors
            .iter()
            .map(|(_, e)| {
                let e = e.as_deref()?;
                e.reads_only(crate::kinds::KIND_NAMES).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
    }
    defs
}

/// How many association selectors read only a file's kind.
pub(crate) fn kind_selector_count(defs: &[AssocDef]) -> usize {
    defs.iter()
        .flat_map(|d| d.kind_slots.iter().flatten())
        .count()
}

impl AssocDef {
    /// The association as the typed schema gives it.
    pub fn from_schema(a: &nidos_schema::Association) -> AssocDef {
        AssocDef {
            name: a.name.clone(),
            selectors: a
                .selectors
                .iter()
                .map(|e| (e.source.clone(), e.parsed.clone()))
                .collect(),
            kind_slots: vec![None; a.selectors.len()],
            suffix: a.target.suffix.clone(),
            extensions: a.target.extension.clone(),
            free_entities: a.target.entities.clone().unwrap_or_default(),
            inherit: a.inherit,
            reverse: a.reverse.clone(),
        }
    }
}
