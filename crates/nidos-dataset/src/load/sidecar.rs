//! The merged sidecar of a file: the sidecars the inheritance search finds
//! ([`crate::inherit::sidecar_chain`]), merged root → deep, a deeper value replacing a
//! shallower one in place.

use indexmap::IndexMap;
use nidos_expr::{Object, Value};

use super::Dataset;
use crate::entry::DatasetIssue;
use crate::inherit::sidecar_chain;

/// A value set by a shallower sidecar and replaced by a deeper one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SidecarOverride {
    pub key: String,
    /// The sidecar whose value was replaced.
    pub shallow: String,
    /// The sidecar whose value won.
    pub deep: String,
}

/// The merged sidecar of one file.
#[derive(Clone, Debug, Default)]
pub struct SidecarMerge {
    /// The merged object (`Value::Object`, empty when no sidecar applies).
    pub value: Value,
    /// Per key: the sidecar that set the final value (looked up once per issue, hence
    /// foldhash like [`Object`]).
    pub sources: IndexMap<String, String, foldhash::fast::RandomState>,
    /// Keys whose value a deeper sidecar changed.
    pub overrides: Vec<SidecarOverride>,
    /// The sidecars merged, root first.
    pub files: Vec<String>,
    /// Ambiguities found while searching.
    pub issues: Vec<DatasetIssue>,
}

/// Whether a deeper value counts as overriding a shallower one: scalars when they
/// differ; arrays and objects always (re-stating a structured value is an override even
/// when equal, as the reference validator counts it, comparing them by identity).
fn overrides(old: &Value, new: &Value) -> bool {
    match (old, new) {
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => true,
        _ => old != new,
    }
}

/// Merges the sidecars of file `src` (`.json` files themselves get an empty sidecar);
/// levels with more than one candidate are left out and reported in `issues`.
pub(crate) fn merge_sidecars(ds: &Dataset, src: usize) -> SidecarMerge {
    let (chain, issues) = sidecar_chain(ds, src);
    SidecarMerge {
        issues,
        ..merge_chain(ds, &chain)
    }
}

/// Merges the sidecars of a chain (indices into [`Dataset::files`], root first). The one
/// merge of the crate: the context's `sidecar` and a query's metadata both come from it.
pub(crate) fn merge_chain(ds: &Dataset, chain: &[usize]) -> SidecarMerge {
    let mut out = SidecarMerge::default();
    let mut merged = Object::default();
    for &i in chain {
        let path = &ds.files[i].path;
        let loaded = ds.json_at(i);
        if let Some(obj) = loaded.value.as_object() {
            for (k, v) in obj {
                if let Some(old) = merged.get(k) {
                    if overrides(old, v) {
                        if let Some(prev) = out.sources.get(k) {
                            out.overrides.push(SidecarOverride {
                                key: k.clone(),
                                shallow: prev.clone(),
                                deep: path.clone(),
                            });
                        }
                    }
                }
                merged.insert(k.clone(), v.clone());
                out.sources.insert(k.clone(), path.clone());
            }
        }
        out.files.push(path.clone());
    }
    out.value = Value::object(merged);
    out
}
