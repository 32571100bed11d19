//! Applies the schema's rules to a dataset and reports issues.
//!
//! A whole validation is one call ([`validate`], see [`run`]: the rules the dataset
//! declares, the options, derivative datasets, the later-version notes):
//!
//! ```ignore
//! let done = nidos_validate::validate("ds".as_ref(), &nidos_validate::Request::default())?;
//! println!("{} errors", done.report.count(nidos_validate::Severity::Error));
//! ```
//!
//! [`Engine`] applies given rules to an opened dataset (what [`validate`] does inside).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod apply;
mod cff;
mod cleaned;
pub mod config;
mod dataset_checks;
pub mod emit;
mod engine;
pub mod explain;
mod filename_mode;
mod filenames;
pub mod fixable;
mod hed;
pub mod incremental;
pub mod issue;
pub mod jsonschema;
mod later;
pub mod pinning;
pub mod report;
mod rule_index;
pub mod run;
mod selectors;
mod summary;

pub use config::Config;
pub use emit::json::ReportJson;
pub use engine::{Engine, Options, Phases, Progress};
pub use filename_mode::{open_names, parse_names};
pub use fixable::FixIndex;
pub use hed::prefetch as prefetch_hed_schemas;
pub use issue::{Issue, Severity, Sym};
pub use report::{Report, Summary};
pub use run::{validate, Request, RunError, Validation};
