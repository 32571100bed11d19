//! HED (Hierarchical Event Descriptors) for nidos: schemas as data, the HED string parser, and
//! the validation of strings, sidecars and events files against the HED specification.
//! Knows nothing about the rest of nidos; `nidos-validate` calls it. The MediaWiki schema
//! reader, the schema-development checks and the suite runner, which only the tests use,
//! are in the dev-only `nidos-hed-testkit`.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod check;
pub mod compact;
pub mod data;
pub mod defs;
pub mod events;
mod gather;
pub mod issue;
pub mod parse;
pub mod schema;
pub mod tag;
pub mod values;
pub mod versions;
pub mod xml;

pub use data::SchemaData;
pub use issue::HedIssue;
pub use parse::{parse, Group, HedString, Item, TagToken};
pub use schema::HedSchema;
pub use versions::{HedSchemas, SchemaSource};
pub use xml::import_xml;
