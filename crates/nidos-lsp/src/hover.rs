//! Hover: what the rules of the dataset's version say about the key, column or entity
//! under the cursor: description, type, unit, allowed values, level, and the versions
//! at which the rules changed it.

use std::fmt::Write as _;

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};
use nidos_schema::{Definition, Schema};
use serde_json::Value;

use crate::expected::{self, level_word, Expected};
use crate::json_map;
use crate::tsv_map;
use crate::workspace::{At, View};

/// The hover at `pos` of the open document `path`.
pub fn hover(view: &View<'_>, at: &At<'_>) -> Option<Hover> {
    let (doc, rel, text, offset, pos) = (at.doc, &at.rel, at.text, at.offset, at.pos);
    let (schema, ds) = (view.schema, view.dataset);
    let (markdown, range) = if rel.ends_with(".json") {
        let members = json_map::members(text);
        if let Some(m) = members
            .iter()
            .find(|m| m.key.0 <= offset && offset < m.key.1)
        {
            let name = m.path.last()?;
            let md = if m.path.len() == 1 {
                let level = || expected::keys(schema, ds, rel);
                definition_markdown(schema.metadata_def(name), "metadata", &level).or_else(
                    || definition_markdown(schema.column_def(name), "columns", &|| Vec::new()),
                )?
            } else {
                definition_markdown(schema.column_def(&m.path[0]), "columns", &|| Vec::new())?
            };
            (md, Some((m.key.0, m.key.1)))
        } else {
            let (s, e, word) = word_at(text, offset)?;
            (entity_markdown(schema, word)?, Some((s, e)))
        }
    } else if rel.ends_with(".tsv") {
        let (start, line) = doc.lines.line(text, pos.line as usize)?;
        let cell = tsv_map::cell_at(start, line, offset);
        let (s, e) = *tsv_map::cells(start, line).get(cell)?;
        if pos.line == 0 {
            let name = text.get(s..e)?;
            let level = || expected::columns(schema, ds, rel);
            (
                definition_markdown(schema.column_def(name), "columns", &level)?,
                Some((s, e)),
            )
        } else {
            let (s, e, word) = word_at(text, offset)?;
            (entity_markdown(schema, word)?, Some((s, e)))
        }
    } else {
        return None;
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: with_version(view, markdown),
        }),
        range: range.map(|(s, e)| doc.lines.range(text, s, e)),
    })
}

/// The markdown of a hover, with the version whose rules it quotes.
fn with_version(view: &View<'_>, mut md: Hover2) -> String {
    let schema = view.schema;
    if let Some(path) = md.lifecycle_path.take() {
        let changes = nidos_schema::bundled_changes(Some(&schema.brand.name)).ok();
        for v in changes.iter().flat_map(|c| c.versions_of(&path)) {
            if nidos_schema::compare_versions(v, &schema.version) == std::cmp::Ordering::Greater {
                let _ = write!(md.text, "\n\nNo longer in the rules from version {v}.");
            } else {
                let _ = write!(md.text, "\n\nIn the rules since version {v}.");
            }
        }
    }
    let _ = write!(
        md.text,
        "\n\n*{} {} rules*",
        schema.brand.name, schema.version
    );
    md.text
}

/// A hover's text, and the dotted path of the rule entry whose versions it reports.
struct Hover2 {
    text: String,
    lifecycle_path: Option<String>,
}

/// The hover of a field (`section` "metadata") or column ("columns") definition.
fn definition_markdown(
    def: Option<&Definition>,
    section: &str,
    levels: &dyn Fn() -> Vec<Expected>,
) -> Option<Hover2> {
    let def = def?;
    Some(Hover2 {
        text: definition_text(def, &levels()),
        lifecycle_path: Some(format!("objects.{section}.{}", def.key)),
    })
}

fn entity_markdown(schema: &Schema, word: &str) -> Option<Hover2> {
    let (key, value) = word.split_once('-')?;
    let e = schema.entity_by_key(key)?;
    let mut text = format!(
        "**{}** (`{}-{value}`, entity `{}`)",
        e.display_name, e.key, e.name
    );
    if !e.description.is_empty() {
        let _ = write!(text, "\n\n{}", e.description.trim());
    }
    let _ = write!(text, "\n\nvalue format: {}", e.format);
    if let Some(values) = &e.r#enum {
        let _ = write!(text, "; allowed values: {}", quoted(values.iter()));
    }
    Some(Hover2 {
        text,
        lifecycle_path: Some(format!("objects.entities.{}", e.name)),
    })
}

fn quoted<'a>(values: impl Iterator<Item = &'a String>) -> String {
    values
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The allowed values of a definition (its `enum`, or those of its alternatives or
/// items).
pub fn allowed_values(def: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |v: &Value| {
        if let Some(a) = v.get("enum").and_then(Value::as_array) {
            out.extend(a.iter().map(|x| match x {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }));
        }
    };
    push(def);
    for alt in def
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        push(alt);
    }
    if let Some(items) = def.get("items") {
        push(items);
    }
    out
}

fn definition_text(def: &Definition, levels: &[Expected]) -> String {
    let v = def.def.value();
    let display = v
        .get("display_name")
        .and_then(Value::as_str)
        .unwrap_or(&def.name);
    let mut text = format!("**{display}** (`{}`)", def.name);
    if let Some(d) = v.get("description").and_then(Value::as_str) {
        let _ = write!(text, "\n\n{}", d.trim());
    }
    let mut facts = Vec::new();
    if let Some(t) = v.get("type").and_then(Value::as_str) {
        facts.push(format!("type: {t}"));
    }
    if let Some(f) = v.get("format").and_then(Value::as_str) {
        facts.push(format!("format: {f}"));
    }
    if let Some(u) = v.get("unit").and_then(Value::as_str) {
        facts.push(format!("unit: {u}"));
    }
    let allowed = allowed_values(v);
    if !allowed.is_empty() {
        facts.push(format!("allowed values: {}", quoted(allowed.iter())));
    }
    if !facts.is_empty() {
        let _ = write!(text, "\n\n{}", facts.join("; "));
    }
    if let Some(e) = levels.iter().find(|e| e.name == def.name) {
        let _ = write!(
            text,
            "\n\nLevel for this file: **{}** (rule `{}`)",
            level_word(e.level),
            e.rule
        );
    }
    text
}

/// The word of entity-like characters around byte `offset` (`sub-01` in
/// `sub-01_task-rest_bold.nii.gz`), with its byte range.
fn word_at(text: &str, offset: usize) -> Option<(usize, usize, &str)> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '-';
    let before = text.get(..offset)?;
    let start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_word(c))
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let end = text
        .get(offset..)?
        .char_indices()
        .find(|&(_, c)| !is_word(c))
        .map(|(i, _)| offset + i)
        .unwrap_or(text.len());
    let word = text.get(start..end)?;
    word.contains('-').then_some((start, end, word))
}
