//! HED (Hierarchical Event Descriptors) for nidos: schemas as data, the HED string parser, and
//! the validation of strings, sidecars and events files against the HED specification.
//! Knows nothing about the rest of nidos; `nidos-validate` calls it.
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
pub mod schema_dev;
pub mod suite;
pub mod tag;
pub mod values;
pub mod versions;
pub mod wiki;
pub mod xml;

pub use data::SchemaData;
pub use issue::HedIssue;
pub use parse::{parse, Group, HedString, Item, TagToken};
pub use schema::HedSchema;
pub use versions::{HedSchemas, SchemaSource};
pub use wiki::{read_wiki, read_wiki_lines, WikiSchema};
pub use xml::import_xml;
