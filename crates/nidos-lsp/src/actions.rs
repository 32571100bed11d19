//! Code actions: the repairs `nidos fix` would make (the same plan), offered on the
//! document they edit or whose issue they answer, as edits of the file's text.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Diagnostic, NumberOrString, TextEdit, Uri,
    WorkspaceEdit,
};

use crate::text::LineIndex;
use crate::workspace::{View, Workspace};

/// The repairs concerning the open document `path`; `diagnostics` are those the client
/// sent with the request (an action lists those of its code).
pub fn actions(
    ws: &Workspace,
    view: &View<'_>,
    path: &std::path::Path,
    diagnostics: &[Diagnostic],
) -> Vec<CodeActionOrCommand> {
    let (Some(rel), Some(plan)) = (ws.relative(path), view.plan(&ws.root)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for edit in &plan.edits {
        let target = ws.absolute(&edit.path);
        let Some(uri) = Workspace::uri_of(&target) else {
            continue;
        };
        // The plan's regions are of the file as validated; an edited buffer would move
        // them, so a file whose document differs is offered nothing until it is saved.
        let Some(before) = edit
            .before
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
        else {
            continue;
        };
        if ws.docs.get(&target).is_some_and(|d| d.text != before) {
            continue;
        }
        let lines = LineIndex::new(before);
        for change in &edit.changes {
            if edit.path != rel && change.origin != rel {
                continue;
            }
            let edits: Vec<TextEdit> = if change.replacements.is_empty() {
                let Ok(after) = std::str::from_utf8(&edit.after) else {
                    continue;
                };
                vec![TextEdit {
                    range: lines.range(before, 0, before.len()),
                    new_text: after.to_owned(),
                }]
            } else {
                change
                    .replacements
                    .iter()
                    .map(|r| TextEdit {
                        range: lines.range(before, r.offset, r.offset + r.length),
                        new_text: r.text.clone(),
                    })
                    .collect()
            };
            let matching: Vec<Diagnostic> = diagnostics
                .iter()
                .filter(|d| d.code == Some(NumberOrString::String(change.code.clone())))
                .cloned()
                .collect();
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("nidos fix: {}", change.description),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: (!matching.is_empty()).then_some(matching),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::<Uri, Vec<TextEdit>>::from([(uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                ..CodeAction::default()
            }));
        }
    }
    out
}
