//! The bundled rules, precompiled when this crate was built (see `build.rs` and
//! [`nidos_schema::precompiled`]). A program calls [`install`] once at start-up; its
//! loads of the bundled rules then read a ready schema instead of building one from the
//! embedded tree (which costs about ten milliseconds a load).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

include!(concat!(env!("OUT_DIR"), "/table.rs"));

/// Hands the precompiled schemas and changes to `nidos-schema`.
pub fn install() {
    nidos_schema::precompiled::provide(nidos_schema::precompiled::Tables {
        schemas: TABLE,
        changes: CHANGES,
        index: INDEX,
    });
}

/// The precompiled schemas: brand ("" for the tree's own), version ("" for the newest)
/// and bytes.
pub fn entries() -> &'static [nidos_schema::precompiled::Entry] {
    TABLE
}

/// The precompiled brand table and versions.
pub fn index() -> &'static [u8] {
    INDEX
}

/// The precompiled changes: brand ("" for the tree's own) and bytes.
pub fn changes() -> &'static [nidos_schema::precompiled::Entry] {
    CHANGES
}
