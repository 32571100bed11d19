//! Applies the schema's rules to a dataset and reports issues.
//!
//! ```ignore
//! let schema = nidos_schema::load_path("schema.json".as_ref())?;
//! let report = nidos_validate::Engine::new(&schema).validate("ds".as_ref(), &Default::default())?;
//! println!("{} errors", report.count(nidos_validate::Severity::Error));
//! ```
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod apply;
mod cff;
mod cleaned;
pub mod config;
mod dataset_checks;
mod engine;
pub mod explain;
mod filename_mode;
mod filenames;
pub mod fixable;
mod hed;
pub mod issue;
mod json_text;
pub mod jsonschema;
pub mod pinning;
pub mod report;
mod rule_index;
mod selectors;
mod summary;

pub use config::Config;
pub use engine::{Engine, Options, Phases, Progress};
pub use filename_mode::{open_names, parse_names};
pub use fixable::FixIndex;
pub use hed::prefetch as prefetch_hed_schemas;
pub use issue::{Issue, Severity, Sym};
pub use report::{Report, ReportJson, Summary};
