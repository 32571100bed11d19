//! Completion: the keys a JSON file's rules expect (required first), the allowed values
//! of a key, the columns of a table (and the keys of its sidecar), a column's allowed
//! values and the `Levels` its sidecar defines.

use std::collections::BTreeSet;

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionList, CompletionTextEdit, Documentation, TextEdit,
};
use nidos_schema::Level;
use serde_json::Value;

use crate::expected::{self, level_word, Expected};
use crate::hover::allowed_values;
use crate::json_map::{self, Cursor};
use crate::tsv_map;
use crate::workspace::{At, View, Workspace};

/// The completions at `pos` of the open document `path`.
pub fn complete(ws: &Workspace, view: &View<'_>, at: &At<'_>) -> Option<CompletionList> {
    let At {
        doc,
        rel,
        text,
        offset,
        pos,
    } = at;
    let (text, offset, pos) = (*text, *offset, *pos);
    let (schema, ds) = (view.schema, view.dataset);
    let items = if rel.ends_with(".json") {
        match json_map::cursor_at(text, offset) {
            Cursor::Key {
                path: keys, start, ..
            } => {
                let present: BTreeSet<String> =
                    json_map::keys_of(text, &keys).into_iter().collect();
                let range = doc
                    .lines
                    .range(text, start, closing_quote(text, start, offset));
                let edit = |label: &str| {
                    CompletionTextEdit::Edit(TextEdit {
                        range,
                        new_text: format!("\"{label}\""),
                    })
                };
                let mut items = Vec::new();
                match keys.as_slice() {
                    [] => {
                        for e in expected::keys(schema, ds, rel) {
                            let def = schema.metadata_def(&e.name).map(|d| d.def.value());
                            items.push(key_item(&e, def, edit(&e.name)));
                        }
                        // The sidecar of a table: its columns.
                        for col in table_columns(ws, rel) {
                            let e = Expected {
                                name: col.clone(),
                                level: Level::Optional,
                                rule: "a column of the table".to_owned(),
                            };
                            let def = schema.column_def(&col).map(|d| d.def.value());
                            items.push(key_item(&e, def, edit(&col)));
                        }
                    }
                    [column, levels] if levels == "Levels" => {
                        for value in column_values(ws, rel, column) {
                            items.push(CompletionItem {
                                label: value.clone(),
                                kind: Some(CompletionItemKind::ENUM_MEMBER),
                                detail: Some(format!("a value of column {column}")),
                                text_edit: Some(edit(&value)),
                                ..CompletionItem::default()
                            });
                        }
                    }
                    _ => {}
                }
                items.retain(|i| !present.contains(&i.label));
                dedup(items)
            }
            Cursor::Value {
                path: keys, start, ..
            } => {
                let def = keys
                    .first()
                    .filter(|_| keys.len() == 1)
                    .and_then(|k| schema.metadata_def(k))?;
                let quoted = text.as_bytes().get(start) == Some(&b'"');
                let range = doc
                    .lines
                    .range(text, start, closing_quote(text, start, offset));
                let mut items: Vec<CompletionItem> = allowed_values(def.def.value())
                    .into_iter()
                    .map(|v| value_item(&v, &range, quoted || !is_literal(&v)))
                    .collect();
                if def.def.value().get("type").and_then(Value::as_str) == Some("boolean") {
                    items.extend(["true", "false"].map(|v| value_item(v, &range, false)));
                }
                items
            }
            Cursor::Other => return None,
        }
    } else if rel.ends_with(".tsv") {
        let (start, line) = doc.lines.line(text, pos.line as usize)?;
        let cell = tsv_map::cell_at(start, line, offset);
        let (cs, _) = *tsv_map::cells(start, line).get(cell)?;
        let range = doc.lines.range(text, cs, offset);
        if pos.line == 0 {
            let present: BTreeSet<&str> = line.split('\t').collect();
            expected::columns(schema, ds, rel)
                .into_iter()
                .filter(|e| !present.contains(e.name.as_str()))
                .map(|e| {
                    let def = schema.column_def(&e.name).map(|d| d.def.value());
                    key_item(
                        &e,
                        def,
                        CompletionTextEdit::Edit(TextEdit {
                            range,
                            new_text: e.name.clone(),
                        }),
                    )
                })
                .collect()
        } else {
            let header = doc.lines.line(text, 0)?.1;
            let column = header.split('\t').nth(cell)?;
            let mut values: Vec<String> = schema
                .column_def(column)
                .map(|d| allowed_values(d.def.value()))
                .unwrap_or_default();
            values.extend(levels_of(view, rel, column));
            values.dedup();
            values
                .into_iter()
                .map(|v| CompletionItem {
                    label: v.clone(),
                    kind: Some(CompletionItemKind::ENUM_MEMBER),
                    text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text: v })),
                    ..CompletionItem::default()
                })
                .collect()
        }
    } else {
        return None;
    };
    Some(CompletionList {
        is_incomplete: false,
        items,
    })
}

/// Where a completion typed from `start` to the cursor ends: past the closing quote an
/// editor inserted with the opening one.
fn closing_quote(text: &str, start: usize, offset: usize) -> usize {
    let b = text.as_bytes();
    if b.get(start) == Some(&b'"') && offset > start && b.get(offset) == Some(&b'"') {
        offset + 1
    } else {
        offset
    }
}

fn is_literal(v: &str) -> bool {
    v.parse::<f64>().is_ok() || matches!(v, "true" | "false" | "null")
}

fn value_item(v: &str, range: &lsp_types::Range, quote: bool) -> CompletionItem {
    let new_text = if quote {
        format!("\"{v}\"")
    } else {
        v.to_owned()
    };
    CompletionItem {
        label: v.to_owned(),
        kind: Some(CompletionItemKind::ENUM_MEMBER),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit {
            range: *range,
            new_text,
        })),
        ..CompletionItem::default()
    }
}

fn key_item(e: &Expected, def: Option<&Value>, edit: CompletionTextEdit) -> CompletionItem {
    let rank = match e.level {
        Level::Required => 0,
        Level::Recommended => 1,
        Level::Optional => 2,
        Level::Deprecated => 3,
        Level::Prohibited => 4,
    };
    CompletionItem {
        label: e.name.clone(),
        kind: Some(CompletionItemKind::FIELD),
        detail: Some(format!("{} ({})", level_word(e.level), e.rule)),
        documentation: def
            .and_then(|d| d.get("description"))
            .and_then(Value::as_str)
            .map(|d| Documentation::String(d.trim().to_owned())),
        sort_text: Some(format!("{rank}{}", e.name)),
        text_edit: Some(edit),
        ..CompletionItem::default()
    }
}

/// One item per label (the first, which is the strongest).
fn dedup(items: Vec<CompletionItem>) -> Vec<CompletionItem> {
    let mut seen = BTreeSet::new();
    items
        .into_iter()
        .filter(|i| seen.insert(i.label.clone()))
        .collect()
}

/// The table a JSON file describes (`participants.json` → `participants.tsv`), when it
/// exists beside it.
fn table_of(ws: &Workspace, rel: &str) -> Option<std::path::PathBuf> {
    let table = ws.absolute(&format!("{}.tsv", rel.strip_suffix(".json")?));
    (ws.docs.contains_key(&table) || table.is_file()).then_some(table)
}

/// The header of the table a JSON file describes.
fn table_columns(ws: &Workspace, rel: &str) -> Vec<String> {
    let Some(text) = table_of(ws, rel).and_then(|t| ws.text_of(&t)) else {
        return Vec::new();
    };
    let header = text.lines().next().unwrap_or("");
    header
        .split('\t')
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The distinct values of a column of the table a JSON file describes (`n/a` left out).
fn column_values(ws: &Workspace, rel: &str, column: &str) -> Vec<String> {
    let Some(text) = table_of(ws, rel).and_then(|t| ws.text_of(&t)) else {
        return Vec::new();
    };
    let mut lines = text.lines();
    let Some(index) = lines
        .next()
        .and_then(|h| h.split('\t').position(|c| c == column))
    else {
        return Vec::new();
    };
    let values: BTreeSet<&str> = lines
        .filter_map(|l| l.split('\t').nth(index))
        .filter(|v| !v.is_empty() && *v != "n/a")
        .collect();
    values.into_iter().map(str::to_owned).collect()
}

/// The `Levels` the table's merged sidecar defines for `column`.
fn levels_of(view: &View<'_>, rel: &str, column: &str) -> Vec<String> {
    let ds = view.dataset;
    let Some(entry) = ds.find(rel) else {
        return Vec::new();
    };
    let ctx = ds.context(entry);
    let merged = &ctx.sidecar_merge().value;
    merged
        .get(column)
        .get("Levels")
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}
