//! Every precompiled schema reads back to exactly what building the embedded tree gives
//! for its brand and version, and loads go through it once installed.

use nidos_schema::precompiled::{
    and_later_key, build_embedded, build_embedded_and_later, decode, encode, encode_schema,
};
use nidos_schema::{LoadOptions, Schema, SchemaErrors};

fn opt(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// The version of an entry keyed by [`and_later_key`] (a layout's union of the versions
/// from it on), or `None` for a plain entry.
fn union_from(e: &nidos_schema::precompiled::Entry) -> Option<&'static str> {
    e.version.strip_suffix('+')
}

/// What building the embedded tree gives for an entry's key.
fn built(e: &nidos_schema::precompiled::Entry) -> Result<Schema, SchemaErrors> {
    match union_from(e) {
        Some(v) => build_embedded_and_later(e.brand, v),
        None => build_embedded(opt(e.brand), opt(e.version)),
    }
}

#[test]
fn every_entry_reads_back_to_the_built_schema() {
    let entries = nidos_bundled::entries();
    assert!(entries.len() >= 4, "too few entries: {}", entries.len());
    for e in entries {
        let built = built(e).expect("the tree builds");
        let read = decode(e.bytes).expect("the entry decodes");
        assert_eq!(
            encode_schema(&built).expect("encodes"),
            e.bytes,
            "{} {}: stale precompiled bytes",
            e.brand,
            e.version
        );
        assert_eq!(
            format!("{read:?}"),
            format!("{built:?}"),
            "{} {}",
            e.brand,
            e.version
        );
        // What the Debug form leaves out: the parsed trees of expressions.
        let parsed = |s: &Schema| {
            s.expressions()
                .into_iter()
                .map(|(at, x)| (at, x.parsed.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(parsed(&read), parsed(&built), "{} {}", e.brand, e.version);
    }
}

#[test]
fn every_brand_and_version_has_an_entry() {
    let pairs = nidos_schema::precompiled::embedded_pairs().expect("the tree's index");
    let entries = nidos_bundled::entries();
    for (brand, version) in pairs {
        assert!(
            entries
                .iter()
                .any(|e| e.brand == brand && e.version == version),
            "{brand} {version} is not precompiled"
        );
    }
    assert!(entries
        .iter()
        .any(|e| e.brand.is_empty() && e.version.is_empty()));
}

#[test]
fn every_brand_has_its_listing_union() {
    let pairs = nidos_schema::precompiled::embedded_pairs().expect("the tree's index");
    let entries = nidos_bundled::entries();
    for (brand, _) in &pairs {
        let oldest = pairs
            .iter()
            .filter(|(b, _)| b == brand)
            .map(|(_, v)| v)
            .min_by(|a, b| nidos_schema::compare_versions(a, b))
            .expect("a version");
        let key = and_later_key(oldest);
        assert!(
            entries.iter().any(|e| e.brand == brand && e.version == key),
            "{brand}: the union from {oldest} on is not precompiled"
        );
    }
}

#[test]
fn installed_loads_read_the_precompiled_form() {
    nidos_bundled::install();
    for e in nidos_bundled::entries() {
        let loaded = match union_from(e) {
            Some(v) => nidos_schema::load_bundled(&LoadOptions {
                brand: Some(e.brand.to_owned()),
                version: Some(v.to_owned()),
                and_later: true,
                ..LoadOptions::default()
            }),
            None => Schema::bundled_for(opt(e.brand), opt(e.version)),
        }
        .expect("loads");
        let read = decode(e.bytes).expect("decodes");
        assert_eq!(format!("{loaded:?}"), format!("{read:?}"));
    }
}

#[test]
fn every_brand_has_its_changes_precompiled() {
    use nidos_schema::precompiled::{build_embedded_changes, decode_changes};
    let changes = nidos_bundled::changes();
    assert!(changes.iter().any(|e| e.brand.is_empty()));
    for (brand, _) in nidos_schema::precompiled::embedded_pairs().expect("the tree's index") {
        assert!(changes.iter().any(|e| e.brand == brand), "{brand}");
    }
    for e in changes {
        let built = build_embedded_changes(opt(e.brand)).expect("builds");
        assert_eq!(encode(&built).expect("encodes"), e.bytes, "{}", e.brand);
        let read = decode_changes(e.bytes).expect("decodes");
        assert_eq!(
            format!("{:?}", encode(&read)),
            format!("{:?}", encode(&built))
        );
    }
}

#[test]
fn the_index_is_precompiled() {
    let built = nidos_schema::precompiled::build_embedded_index().expect("builds");
    assert_eq!(encode(&built).expect("encodes"), nidos_bundled::index());
}
