//! The reload of a saved `Layout(database_path=...)` index (`python/nidos/_store.py`):
//! the dataset's fingerprint (a stat of every stamped path, off the GIL, on a few
//! threads) and the files' entity dicts made from the index's dictionary-coded columns.

use std::os::unix::fs::MetadataExt;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::error::value_error;

/// FNV-1a, 64 bits: a stable hash of the stamps (the same text in every process and
/// build, unlike the standard library's hasher).
struct Fnv(u64);

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// `(modification time in ns, size)` of a path (its target when a symbolic link), or
/// `(-1, -1)` when it cannot be read.
fn stamp(path: &str) -> (i64, i64) {
    match std::fs::metadata(path) {
        Ok(m) => (
            m.mtime()
                .saturating_mul(1_000_000_000)
                .saturating_add(m.mtime_nsec()),
            i64::try_from(m.size()).unwrap_or(i64::MAX),
        ),
        Err(_) => (-1, -1),
    }
}

/// The fingerprint of the paths listed in `stamped` (a JSON list of path strings): a
/// hash of the paths and of their times and sizes. Equal while no path is added,
/// removed, touched or resized.
#[pyfunction]
pub fn fingerprint(py: Python<'_>, stamped: &str) -> PyResult<String> {
    let paths: Vec<String> = serde_json::from_str(stamped).map_err(value_error)?;
    Ok(py.allow_threads(|| {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 4);
        // A thread's start costs about as much as a few hundred stats: small lists (a
        // real-world dataset's few hundred folders and sidecars) are read on this one.
        let chunk = paths.len().div_ceil(threads).max(1024);
        let stamps: Vec<(i64, i64)> = if paths.len() <= chunk {
            paths.iter().map(|p| stamp(p)).collect()
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = paths
                    .chunks(chunk)
                    .map(|part| s.spawn(move || part.iter().map(|p| stamp(p)).collect::<Vec<_>>()))
                    .collect();
                let mut all = Vec::with_capacity(paths.len());
                for (h, part) in handles.into_iter().zip(paths.chunks(chunk)) {
                    // A thread that panicked (it cannot: `stamp` does not) counts as unread.
                    match h.join() {
                        Ok(v) => all.extend(v),
                        Err(_) => all.extend(part.iter().map(|_| (-1, -1))),
                    }
                }
                all
            })
        };
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        for (p, (t, n)) in paths.iter().zip(&stamps) {
            h.write(p.as_bytes());
            h.write(&[0]);
            h.write(&t.to_le_bytes());
            h.write(&n.to_le_bytes());
        }
        format!("fnv64:{:016x}:{}", h.0, paths.len())
    }))
}

/// One entity column: its name, each file's code (index in the values, None when the
/// file has no such entity) and the distinct values.
type Column<'py> = (Bound<'py, PyString>, Vec<Option<usize>>, Bound<'py, PyList>);

/// The entity dicts of `n` files from dictionary-coded columns: each column is
/// `(name, codes, values)`, `codes[i]` the index in `values` of file `i`'s value (None:
/// the file has no such entity). A file's dict holds its entities in column order.
#[pyfunction]
pub fn entity_dicts<'py>(
    py: Python<'py>,
    n: usize,
    columns: Vec<Column<'py>>,
) -> PyResult<Bound<'py, PyList>> {
    let dicts: Vec<Bound<'py, PyDict>> = (0..n).map(|_| PyDict::new(py)).collect();
    for (name, codes, values) in &columns {
        let values: Vec<Bound<'py, PyAny>> = values.iter().collect();
        for (d, code) in dicts.iter().zip(codes) {
            if let Some(c) = code {
                let v = values
                    .get(*c)
                    .ok_or_else(|| value_error("an index code out of its column's values"))?;
                if !v.is_none() {
                    d.set_item(name, v)?;
                }
            }
        }
    }
    PyList::new(py, dicts)
}

/// The file objects of a reloaded layout: file `i` an instance of `classes[kinds[i]]`
/// made by `object.__new__` (no `__init__`: the saved values are what it would store)
/// with its slots `path`, `relpath`, `entities`, `size`, `dataset` and `_metadata` set
/// from the lists' `i`-th items (`dataset` the same for all).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
pub fn file_objects<'py>(
    py: Python<'py>,
    classes: Vec<Bound<'py, PyAny>>,
    kinds: Vec<usize>,
    paths: Bound<'py, PyList>,
    relpaths: Bound<'py, PyList>,
    entities: Bound<'py, PyList>,
    sizes: Bound<'py, PyList>,
    dataset: Bound<'py, PyAny>,
    metas: Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyList>> {
    let n = kinds.len();
    if [&paths, &relpaths, &entities, &sizes, &metas]
        .iter()
        .any(|l| l.len() != n)
    {
        return Err(value_error("file_objects: lists of unequal lengths"));
    }
    let object_new = py
        .import("builtins")?
        .getattr("object")?
        .getattr("__new__")?;
    let mut out = Vec::with_capacity(n);
    for (i, kind) in kinds.iter().enumerate() {
        let cls = classes
            .get(*kind)
            .ok_or_else(|| value_error("file_objects: a file kind out of the classes"))?;
        let f = object_new.call1((cls,))?;
        f.setattr(pyo3::intern!(py, "path"), paths.get_item(i)?)?;
        f.setattr(pyo3::intern!(py, "relpath"), relpaths.get_item(i)?)?;
        f.setattr(pyo3::intern!(py, "entities"), entities.get_item(i)?)?;
        f.setattr(pyo3::intern!(py, "size"), sizes.get_item(i)?)?;
        f.setattr(pyo3::intern!(py, "dataset"), &dataset)?;
        f.setattr(pyo3::intern!(py, "_metadata"), metas.get_item(i)?)?;
        out.push(f);
    }
    PyList::new(py, out)
}
