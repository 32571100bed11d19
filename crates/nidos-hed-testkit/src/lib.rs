//! What only `nidos-hed`'s tests use, kept out of the runtime crate: the HED MediaWiki
//! schema reader ([`wiki`]), the schema-development checks run on what it reads
//! ([`schema_dev`], the schema-loading suite), and the runner of one item of the HED JSON
//! validation suite ([`suite`]). A dev-dependency of `nidos-hed`, never published; the
//! validator does not link it.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod schema_dev;
pub mod suite;
pub mod wiki;

pub use wiki::{read_wiki, read_wiki_lines, WikiSchema};
