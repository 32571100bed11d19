//! `cargo xtask schema-coverage --against COMPILED.json [--out FILE] [--explained FILE]
//! [--fail-unexplained [SECTION-PREFIX]]`: what the bundled rule tree lacks against a compiled upstream
//! schema, by name.
//!
//! Compared: every `objects.*` section (a definition is present when its key, with brand
//! tokens translated, is ours, or for valued terms when one of ours has the same value),
//! the enum values each shared definition allows, every `rules.*` group by rule path,
//! and the issue codes the rules raise. The bundled tree is pinned to the compiled
//! schema's version. Brand tokens (version key, URI scheme, ignore file) are read from
//! both loaded schemas and translated, never named here. Gaps listed in the explained
//! file (YAML: gap id, or a prefix ending in `*`, → reason) are printed with their reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use nidos_schema::{rule_nodes, Brand, LoadOptions};
use serde_json::Value;

use crate::{flag, root};

/// Keys of a definition that are documentation, not facts (the last two inside a column's
/// sidecar-style `definition`).
const DOC_KEYS: &[&str] = &["description", "display_name", "LongName", "Description"];

/// The brand tokens of one schema.
#[derive(Clone, Debug)]
pub struct Tokens {
    version_key: String,
    uri_prefix: String,
    /// The format of that brand's URIs (`<scheme>_uri`).
    uri_format: String,
    ignore_file: String,
}

impl From<&Brand> for Tokens {
    fn from(b: &Brand) -> Self {
        Tokens {
            version_key: b.version_key.clone(),
            uri_prefix: format!("{}:", b.uri_scheme),
            uri_format: format!("{}_uri", b.uri_scheme),
            ignore_file: b.ignore_file.clone(),
        }
    }
}

/// Translates the upstream brand's tokens in `s` into ours.
fn rebrand(s: &str, up: &Tokens, ours: &Tokens) -> String {
    s.replace(&up.version_key, &ours.version_key)
        .replace(&up.uri_prefix, &ours.uri_prefix)
        .replace(&up.uri_format, &ours.uri_format)
        .replace(&up.ignore_file, &ours.ignore_file)
}

fn rebrand_value(v: &Value, up: &Tokens, ours: &Tokens) -> Value {
    match v {
        Value::String(s) => Value::String(rebrand(s, up, ours)),
        Value::Array(a) => Value::Array(a.iter().map(|x| rebrand_value(x, up, ours)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (rebrand(k, up, ours), rebrand_value(x, up, ours)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// One thing upstream has that we lack.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gap {
    /// Where it is counted: `objects.metadata`, `rules.checks`, `codes`.
    pub section: String,
    /// Stable id, the key of the explained file: `objects.metadata.Foo`,
    /// `objects.metadata.Foo enum "bar"`, `rules.checks.dwi.X`, `code X`.
    pub id: String,
    /// Extra information (e.g. the codes a missing rule raises).
    pub note: String,
}

/// Per-section counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub upstream: usize,
    pub present: usize,
}

/// The result of a comparison.
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    pub stats: BTreeMap<String, Stat>,
    pub gaps: Vec<Gap>,
    /// Shared definitions whose facts (everything but the documentation keys) differ:
    /// informational, not gaps.
    pub differs: Vec<String>,
}

/// Every `enum` value anywhere inside a definition, as compact JSON text.
fn enum_values(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "enum" {
                    for e in x.as_array().into_iter().flatten() {
                        out.insert(e.to_string());
                    }
                } else {
                    enum_values(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| enum_values(x, out)),
        _ => {}
    }
}

/// A definition without its documentation keys (and the `name` of nested properties,
/// which some trees repeat and others leave out), with enum lists sorted, for comparing
/// facts.
fn facts(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !DOC_KEYS.contains(&k.as_str()))
                .filter(|(k, _)| k.as_str() != "name")
                .map(|(k, x)| {
                    if k == "Levels" {
                        // Level names are facts; what each level means is documentation.
                        let names = x.as_object().into_iter().flatten();
                        (
                            k.clone(),
                            names.map(|(n, _)| (n.clone(), Value::Null)).collect(),
                        )
                    } else if k == "enum" {
                        let mut items: Vec<Value> = x
                            .as_array()
                            .cloned()
                            .unwrap_or_default()
                            .into_iter()
                            .collect();
                        items.sort_by_key(|a| a.to_string());
                        (k.clone(), Value::Array(items))
                    } else {
                        (k.clone(), facts(x))
                    }
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(facts).collect()),
        other => other.clone(),
    }
}

/// The name a definition gives in data: its `name`, else its key without a `__` qualifier.
fn real_name<'a>(key: &'a str, def: &'a Value) -> &'a str {
    def.get("name")
        .and_then(Value::as_str)
        .unwrap_or_else(|| key.split("__").next().unwrap_or(key))
}

/// Every issue code the rules raise (`code` values anywhere under `rules`).
fn codes(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("code", Value::String(s)) => {
                        out.insert(s.clone());
                    }
                    _ => codes(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| codes(x, out)),
        _ => {}
    }
}

fn compare_objects(up: &Value, ours: &Value, cov: &mut Coverage) {
    let empty = serde_json::Map::new();
    for (section, up_map) in up.as_object().into_iter().flatten() {
        let name = format!("objects.{section}");
        let up_map = up_map.as_object().unwrap_or(&empty);
        let our_map = ours
            .get(section)
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let by_value: BTreeMap<&str, &Value> = our_map
            .values()
            .filter_map(|d| d.get("value").and_then(Value::as_str).map(|s| (s, d)))
            .collect();
        let stat = cov.stats.entry(name.clone()).or_default();
        for (key, def) in up_map {
            stat.upstream += 1;
            let found = our_map.get(key).or_else(|| {
                def.get("value")
                    .and_then(Value::as_str)
                    .and_then(|v| by_value.get(v).copied())
            });
            let Some(our_def) = found else {
                cov.gaps.push(Gap {
                    section: name.clone(),
                    id: format!("{name}.{key}"),
                    note: String::new(),
                });
                continue;
            };
            stat.present += 1;
            let (mut want, mut have) = (BTreeSet::new(), BTreeSet::new());
            enum_values(def, &mut want);
            enum_values(our_def, &mut have);
            for v in want.difference(&have) {
                cov.gaps.push(Gap {
                    section: name.clone(),
                    id: format!("{name}.{key} enum {v}"),
                    note: String::new(),
                });
            }
            if facts(def) != facts(our_def) || real_name(key, def) != real_name(key, our_def) {
                cov.differs.push(format!("{name}.{key}"));
            }
        }
    }
}

fn compare_rules(up: &Value, ours: &Value, cov: &mut Coverage) {
    let empty = Value::Null;
    // Every group is split into rules with the keys of every rule kind alike.
    let markers = nidos_schema::rule_markers();
    for (group, up_node) in up.as_object().into_iter().flatten() {
        let name = format!("rules.{group}");
        let our_node = ours.get(group).unwrap_or(&empty);
        let stat = cov.stats.entry(name.clone()).or_default();
        if let Some(items) = up_node.as_array() {
            // A list group (the entity order, the common principles): compare items.
            let have: BTreeSet<String> = our_node
                .as_array()
                .into_iter()
                .flatten()
                .map(Value::to_string)
                .collect();
            for item in items {
                stat.upstream += 1;
                if have.contains(&item.to_string()) {
                    stat.present += 1;
                } else {
                    cov.gaps.push(Gap {
                        section: name.clone(),
                        id: format!("{name} item {item}"),
                        note: String::new(),
                    });
                }
            }
            continue;
        }
        let have: BTreeSet<String> = rule_nodes(our_node, &name, &markers)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        let mut our_codes = BTreeSet::new();
        codes(ours, &mut our_codes);
        for (path, node) in rule_nodes(up_node, &name, &markers) {
            stat.upstream += 1;
            if have.contains(&path) {
                stat.present += 1;
                continue;
            }
            let mut raised = BTreeSet::new();
            codes(node, &mut raised);
            let note = if raised.is_empty() {
                String::new()
            } else {
                let parts: Vec<String> = raised
                    .iter()
                    .map(|c| {
                        if our_codes.contains(c) {
                            format!("{c} (raised by ours)")
                        } else {
                            c.clone()
                        }
                    })
                    .collect();
                format!("raises {}", parts.join(", "))
            };
            cov.gaps.push(Gap {
                section: name.clone(),
                id: path,
                note,
            });
        }
    }
}

/// Compares two normalised schema trees (`Schema::raw`). `up_brand`/`our_brand` give the
/// tokens to translate.
pub fn compare(up: &Value, ours: &Value, up_brand: &Brand, our_brand: &Brand) -> Coverage {
    let (ut, ot) = (Tokens::from(up_brand), Tokens::from(our_brand));
    let up = rebrand_value(up, &ut, &ot);
    let mut cov = Coverage::default();
    let null = Value::Null;
    compare_objects(
        up.get("objects").unwrap_or(&null),
        ours.get("objects").unwrap_or(&null),
        &mut cov,
    );
    compare_rules(
        up.get("rules").unwrap_or(&null),
        ours.get("rules").unwrap_or(&null),
        &mut cov,
    );
    let (mut want, mut have) = (BTreeSet::new(), BTreeSet::new());
    codes(up.get("rules").unwrap_or(&null), &mut want);
    codes(ours.get("rules").unwrap_or(&null), &mut have);
    let stat = cov.stats.entry("codes".into()).or_default();
    stat.upstream = want.len();
    stat.present = want.intersection(&have).count();
    for c in want.difference(&have) {
        cov.gaps.push(Gap {
            section: "codes".into(),
            id: format!("code {c}"),
            note: String::new(),
        });
    }
    cov
}

/// The explanation of a gap: an exact id, else the longest `prefix*` or `*suffix` entry
/// that matches.
pub fn explain<'a>(explained: &'a BTreeMap<String, String>, id: &str) -> Option<&'a str> {
    if let Some(e) = explained.get(id) {
        return Some(e);
    }
    explained
        .iter()
        .filter_map(|(k, v)| {
            let hit = match (k.strip_suffix('*'), k.strip_prefix('*')) {
                (Some(p), _) => id.starts_with(p).then_some(p.len()),
                (None, Some(sfx)) => id.ends_with(sfx).then_some(sfx.len()),
                _ => None,
            };
            hit.map(|len| (len, v))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, v)| v.as_str())
}

fn render(
    cov: &Coverage,
    explained: &BTreeMap<String, String>,
    against: &str,
    version: &str,
) -> String {
    let mut md = String::new();
    md.push_str("# Schema coverage: the bundled rules against the upstream schema\n\n");
    md.push_str(&format!(
        "Produced by `cargo xtask schema-coverage --against {against}` (do not edit by hand;\n\
         explanations live in `docs/schema-coverage-explained.yaml`). The bundled tree is pinned\n\
         to {version}. A definition counts as present when its key (brand tokens translated) or,\n\
         for valued terms, its value is ours; enum values are compared for every shared\n\
         definition; rules are compared by dotted path, and codes by what the rules raise.\n\n"
    ));
    md.push_str(
        "| Section | Upstream | Present | Missing | Explained |\n|---|---:|---:|---:|---:|\n",
    );
    for (section, stat) in &cov.stats {
        let gaps: Vec<&Gap> = cov.gaps.iter().filter(|g| &g.section == section).collect();
        let explained_n = gaps
            .iter()
            .filter(|g| explain(explained, &g.id).is_some())
            .count();
        md.push_str(&format!(
            "| {section} | {} | {} | {} | {explained_n} |\n",
            stat.upstream,
            stat.present,
            gaps.len()
        ));
    }
    let mut current = "";
    for gap in &cov.gaps {
        if gap.section != current {
            current = &gap.section;
            md.push_str(&format!("\n## {current}\n\n"));
        }
        md.push_str(&format!("- `{}`", gap.id));
        if !gap.note.is_empty() {
            md.push_str(&format!(" ({})", gap.note));
        }
        match explain(explained, &gap.id) {
            Some(e) => md.push_str(&format!(": {}\n", e.trim())),
            None => md.push_str(": **not explained**\n"),
        }
    }
    md.push_str(&format!(
        "\n## Shared definitions whose facts differ ({})\n\n\
         Informational: type, bounds, unit, format or enum differ somewhere in the definition.\n\n",
        cov.differs.len()
    ));
    for d in &cov.differs {
        md.push_str(&format!("- `{d}`"));
        match explain(explained, &format!("differs {d}")) {
            Some(e) => md.push_str(&format!(": {}\n", e.trim())),
            None => md.push('\n'),
        }
    }
    md
}

fn read_explained(path: &Path) -> Result<BTreeMap<String, String>> {
    if !path.exists() {
        return Ok(BTreeMap::new());
    }
    let text = std::fs::read_to_string(path)?;
    let map: Option<BTreeMap<String, String>> =
        serde_saphyr::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    Ok(map.unwrap_or_default())
}

pub fn run(args: &[String]) -> Result<()> {
    let Some(against) = flag(args, "--against") else {
        bail!(
            "usage: cargo xtask schema-coverage --against COMPILED.json [--out FILE] \
             [--explained FILE] [--fail-unexplained [SECTION-PREFIX]]"
        );
    };
    let against = PathBuf::from(against);
    let up = nidos_schema::load_path_with(
        &against,
        &LoadOptions {
            tolerate_expression_errors: true,
            ..Default::default()
        },
    )
    .map_err(|e| anyhow!("{e}"))
    .with_context(|| format!("loading {}", against.display()))?;
    let tree = root().join("schema");
    let ours = nidos_schema::load_path_with(
        &tree,
        &LoadOptions {
            tolerate_expression_errors: true,
            version: Some(up.version.clone()),
            ..Default::default()
        },
    )
    .map_err(|e| anyhow!("{e}"))
    .with_context(|| format!("loading {}", tree.display()))?;
    let explained_path = flag(args, "--explained")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("docs/schema-coverage-explained.yaml"));
    let explained = read_explained(&explained_path)?;
    let cov = compare(&up.raw, &ours.raw, &up.brand, &ours.brand);

    // `--fail-unexplained [PREFIX]`: fail when a gap (of sections starting with PREFIX) has
    // no explanation.
    let fail_prefix = args
        .iter()
        .position(|a| a == "--fail-unexplained")
        .map(|i| match args.get(i + 1) {
            Some(p) if !p.starts_with("--") => p.clone(),
            _ => String::new(),
        });
    let mut unexplained = 0;
    let mut failing = 0;
    for (section, stat) in &cov.stats {
        let missing = cov.gaps.iter().filter(|g| &g.section == section).count();
        println!(
            "{section:28} upstream {:4}  present {:4}  missing {missing}",
            stat.upstream, stat.present
        );
    }
    for gap in &cov.gaps {
        let why = explain(&explained, &gap.id);
        if why.is_none() {
            unexplained += 1;
            if fail_prefix
                .as_ref()
                .is_some_and(|p| gap.section.starts_with(p.as_str()))
            {
                failing += 1;
            }
        }
        println!(
            "missing {}{}{}",
            gap.id,
            if gap.note.is_empty() {
                String::new()
            } else {
                format!(" ({})", gap.note)
            },
            why.map(|w| format!(": {}", w.trim())).unwrap_or_default()
        );
    }
    println!(
        "{} gaps, {unexplained} not explained; {} shared definitions differ in facts",
        cov.gaps.len(),
        cov.differs.len()
    );
    if let Some(out) = flag(args, "--out") {
        let name = against
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        std::fs::write(&out, render(&cov, &explained, &name, &up.version))
            .with_context(|| format!("writing {out}"))?;
        println!("wrote {out}");
    }
    if failing > 0 {
        bail!(
            "{failing} gaps under `{}` are not explained",
            fail_prefix.unwrap_or_default()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn brands() -> (Brand, Brand) {
        let up = Brand {
            name: "Up".into(),
            version_key: "UpVersion".into(),
            uri_scheme: "up".into(),
            ignore_file: ".upignore".into(),
            published_schema: None,
        };
        let ours = Brand {
            name: "Ours".into(),
            version_key: "OurVersion".into(),
            uri_scheme: "our".into(),
            ignore_file: ".ourignore".into(),
            published_schema: None,
        };
        (up, ours)
    }

    fn ids(cov: &Coverage) -> Vec<&str> {
        cov.gaps.iter().map(|g| g.id.as_str()).collect()
    }

    /// Each case: upstream tree, our tree, expected gap ids (in order).
    #[test]
    fn comparison_cases() {
        let cases = [
            (
                "a missing definition and a missing enum value",
                json!({"objects": {"metadata": {
                    "A": {"type": "string", "enum": ["x", "y"]},
                    "B": {"type": "number"}}}}),
                json!({"objects": {"metadata": {"A": {"type": "string", "enum": ["x"]}}}}),
                vec!["objects.metadata.A enum \"y\"", "objects.metadata.B"],
            ),
            (
                "brand tokens are equivalent",
                json!({"objects": {"metadata": {
                    "UpVersion": {"type": "string"},
                    "U": {"type": "string", "enum": ["up:x", ".upignore"]},
                    "F": {"type": "string", "format": "up_uri"}}}}),
                json!({"objects": {"metadata": {
                    "OurVersion": {"type": "string"},
                    "U": {"type": "string", "enum": ["our:x", ".ourignore"]},
                    "F": {"type": "string", "format": "our_uri"}}}}),
                vec![],
            ),
            (
                "enum values nested in anyOf and items count",
                json!({"objects": {"columns": {"c": {"anyOf": [
                    {"type": "string", "enum": ["a"]},
                    {"type": "array", "items": {"enum": ["b"]}}]}}}}),
                json!({"objects": {"columns": {"c": {"type": "string", "enum": ["a"]}}}}),
                vec!["objects.columns.c enum \"b\""],
            ),
            (
                "terms match by value when keys differ",
                json!({"objects": {"enums": {"magnitude": {"value": "mag"}, "other": {"value": "o"}}}}),
                json!({"objects": {"enums": {"mag": {"value": "mag"}}}}),
                vec!["objects.enums.other"],
            ),
            (
                "a missing section lists each entry",
                json!({"objects": {"files": {"README": {}, "CHANGES": {}}}}),
                json!({"objects": {}}),
                vec!["objects.files.README", "objects.files.CHANGES"],
            ),
            (
                "rules by path, and codes nobody raises",
                json!({"rules": {"checks": {"g": {
                    "One": {"issue": {"code": "ONE"}, "checks": []},
                    "Two": {"issue": {"code": "TWO"}, "checks": []}}}}}),
                json!({"rules": {"checks": {"g": {
                    "Uno": {"issue": {"code": "ONE"}, "checks": []}}}}}),
                vec!["rules.checks.g.One", "rules.checks.g.Two", "code TWO"],
            ),
            (
                "list groups compare items",
                json!({"rules": {"entities": ["subject", "session", "run"]}}),
                json!({"rules": {"entities": ["subject", "run"]}}),
                vec!["rules.entities item \"session\""],
            ),
        ];
        let (up, ours) = brands();
        for (name, a, b, want) in cases {
            let cov = compare(&a, &b, &up, &ours);
            assert_eq!(ids(&cov), want, "case: {name}");
        }
    }

    #[test]
    fn missing_rule_notes_the_codes_we_raise() {
        let (up, ours) = brands();
        let cov = compare(
            &json!({"rules": {"checks": {"g": {"One": {"issue": {"code": "ONE"}}}}}}),
            &json!({"rules": {"checks": {"h": {"Uno": {"issue": {"code": "ONE"}}}}}}),
            &up,
            &ours,
        );
        assert_eq!(cov.gaps[0].note, "raises ONE (raised by ours)");
        assert_eq!(
            cov.stats["codes"],
            Stat {
                upstream: 1,
                present: 1
            }
        );
    }

    #[test]
    fn facts_ignore_documentation_and_enum_order() {
        let (up, ours) = brands();
        let cov = compare(
            &json!({"objects": {"metadata": {
                "A": {"type": "string", "enum": ["x", "y"], "description": "theirs"},
                "B": {"type": "number", "unit": "s"}}}}),
            &json!({"objects": {"metadata": {
                "A": {"type": "string", "enum": ["y", "x"], "description": "ours"},
                "B": {"type": "number", "unit": "ms"}}}}),
            &up,
            &ours,
        );
        assert!(cov.gaps.is_empty());
        assert_eq!(cov.differs, vec!["objects.metadata.B".to_string()]);
    }

    #[test]
    fn explanations_by_id_or_longest_prefix() {
        let explained: BTreeMap<String, String> = [
            ("objects.files.*", "files"),
            ("objects.files.README*", "readme"),
            ("code X", "x"),
            ("*enum \"n/a\"", "na"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(explain(&explained, "objects.files.CHANGES"), Some("files"));
        assert_eq!(explain(&explained, "objects.files.README"), Some("readme"));
        assert_eq!(explain(&explained, "code X"), Some("x"));
        assert_eq!(explain(&explained, "code Y"), None);
        assert_eq!(
            explain(&explained, "objects.columns.z enum \"n/a\""),
            Some("na")
        );
    }
}
