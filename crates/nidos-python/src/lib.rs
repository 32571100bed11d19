//! The `nidos._native` extension module: thin entry points over the Rust crates. Each
//! returns plain data (JSON text, Parquet bytes, or for the layout listing Python dicts and
//! lists made after the work) that the Python package (`python/nidos`)
//! turns into its objects; every long call runs with the GIL released. `store` makes the
//! objects of a reloaded `database_path` index (fingerprint, entity dicts, file objects).

use pyo3::prelude::*;

mod error;
mod index;
mod rules;
mod scan;
mod schema;
mod store;
mod validate;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    nidos_bundled::install();
    m.add_function(wrap_pyfunction!(validate::validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(scan::scan, m)?)?;
    m.add_function(wrap_pyfunction!(scan::build_path, m)?)?;
    m.add_function(wrap_pyfunction!(scan::parse_name, m)?)?;
    m.add_function(wrap_pyfunction!(rules::eval_json, m)?)?;
    m.add_function(wrap_pyfunction!(rules::context_json, m)?)?;
    m.add_function(wrap_pyfunction!(index::index_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(index::find_roots, m)?)?;
    m.add_function(wrap_pyfunction!(store::fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(store::entity_dicts, m)?)?;
    m.add_function(wrap_pyfunction!(store::file_objects, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
