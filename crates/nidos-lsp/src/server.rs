//! The protocol loop: initialization, the document notifications that change what the
//! dataset looks like, and the requests answered from the last validation. Messages
//! that queue up while a validation runs are all taken before the next one, so a burst
//! of keystrokes costs one validation.

use std::path::PathBuf;

use anyhow::Context as _;
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, LogMessage, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{CodeActionRequest, Completion, HoverRequest, Request as _};
use lsp_types::{
    CodeActionParams, CodeActionProviderCapability, CompletionOptions, CompletionParams,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    HoverParams, HoverProviderCapability, InitializeParams, LogMessageParams, MessageType,
    PublishDiagnosticsParams, ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind,
};

use crate::workspace::{dataset_root_of, Workspace};
use crate::{actions, complete, diagnostics, hover};

/// The capabilities this server announces.
fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["\"".to_owned(), "\t".to_owned()]),
            ..CompletionOptions::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        ..ServerCapabilities::default()
    }
}

/// Serves one client on `connection` until it exits.
pub fn serve(connection: Connection) -> anyhow::Result<()> {
    let init = connection
        .initialize(serde_json::to_value(capabilities())?)
        .context("initialization")?;
    let params: InitializeParams = serde_json::from_value(init).context("initialize params")?;
    let mut server = Server {
        ws: initial_root(&params).map(|r| Workspace::new(&r)),
        connection: &connection,
        published: diagnostics::Published::default(),
        dirty: true,
    };
    server.refresh();
    loop {
        let Ok(first) = connection.receiver.recv() else {
            break;
        };
        if server.handle(first)? {
            break;
        }
        // Everything already queued before validating again.
        while let Ok(next) = connection.receiver.try_recv() {
            if server.handle(next)? {
                return Ok(());
            }
        }
        server.refresh();
    }
    Ok(())
}

/// The dataset the client opened as its workspace, when it is one.
fn initial_root(params: &InitializeParams) -> Option<PathBuf> {
    #[allow(deprecated)]
    let uris = params
        .workspace_folders
        .iter()
        .flatten()
        .map(|f| f.uri.clone())
        .chain(params.root_uri.clone());
    uris.filter_map(|u| url::Url::parse(u.as_str()).ok()?.to_file_path().ok())
        .find_map(|p| dataset_root_of(&p))
}

struct Server<'c> {
    connection: &'c Connection,
    /// `None` until a document inside a dataset is opened.
    ws: Option<Workspace>,
    /// What was last published.
    published: diagnostics::Published,
    /// The dataset changed since the last validation.
    dirty: bool,
}

impl Server<'_> {
    /// Handles one message; true when the client asked the server to exit.
    fn handle(&mut self, msg: Message) -> anyhow::Result<bool> {
        match msg {
            Message::Request(req) => {
                if self.connection.handle_shutdown(&req)? {
                    return Ok(true);
                }
                self.refresh();
                let resp = self.answer(req);
                self.connection.sender.send(Message::Response(resp))?;
            }
            Message::Notification(n) => self.notified(n),
            Message::Response(_) => {}
        }
        Ok(false)
    }

    fn notified(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) else {
                    return;
                };
                let doc = p.text_document;
                if self.ws.is_none() {
                    self.ws = url::Url::parse(doc.uri.as_str())
                        .ok()
                        .and_then(|u| u.to_file_path().ok())
                        .and_then(|p| dataset_root_of(p.parent()?))
                        .map(|r| Workspace::new(&r));
                }
                if let Some(ws) = &mut self.ws {
                    if let Some(path) = ws.path_of(&doc.uri) {
                        ws.open(path, doc.text, doc.version);
                        self.dirty = true;
                    }
                }
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else {
                    return;
                };
                let Some(ws) = &mut self.ws else { return };
                let Some(path) = ws.path_of(&p.text_document.uri) else {
                    return;
                };
                // Full synchronisation: the last change holds the whole text.
                if let Some(change) = p.content_changes.into_iter().last() {
                    ws.change(&path, change.text, p.text_document.version);
                    self.dirty = true;
                }
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) else {
                    return;
                };
                let Some(ws) = &mut self.ws else { return };
                if let Some(path) = ws.path_of(&p.text_document.uri) {
                    ws.close(&path);
                    self.dirty = true;
                }
            }
            DidSaveTextDocument::METHOD | DidChangeWatchedFiles::METHOD => self.dirty = true,
            _ => {}
        }
    }

    fn answer(&mut self, req: Request) -> Response {
        let id: RequestId = req.id.clone();
        let result = match (&self.ws, self.ws.as_ref().and_then(|w| w.run.as_ref())) {
            (Some(ws), Some(run)) => match req.method.as_str() {
                HoverRequest::METHOD => serde_json::from_value::<HoverParams>(req.params)
                    .ok()
                    .and_then(|p| {
                        let pos = p.text_document_position_params;
                        let path = ws.path_of(&pos.text_document.uri)?;
                        hover::hover(ws, run, &path, pos.position)
                    })
                    .map(|h| serde_json::to_value(h).unwrap_or_default()),
                Completion::METHOD => serde_json::from_value::<CompletionParams>(req.params)
                    .ok()
                    .and_then(|p| {
                        let pos = p.text_document_position;
                        let path = ws.path_of(&pos.text_document.uri)?;
                        complete::complete(ws, run, &path, pos.position)
                    })
                    .map(|c| serde_json::to_value(c).unwrap_or_default()),
                CodeActionRequest::METHOD => serde_json::from_value::<CodeActionParams>(req.params)
                    .ok()
                    .and_then(|p| {
                        let path = ws.path_of(&p.text_document.uri)?;
                        let acts = actions::actions(ws, run, &path, &p.context.diagnostics);
                        serde_json::to_value(acts).ok()
                    }),
                _ => {
                    return Response::new_err(
                        id,
                        lsp_server::ErrorCode::MethodNotFound as i32,
                        format!("nidos lsp does not answer {}", req.method),
                    )
                }
            },
            _ => None,
        };
        Response::new_ok(id, result.unwrap_or(serde_json::Value::Null))
    }

    /// Validates again when the dataset changed, and publishes the diagnostics that
    /// differ from those last published (an empty list clears a file's).
    fn refresh(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let Some(ws) = &mut self.ws else { return };
        if let Err(e) = ws.validate() {
            self.log(MessageType::ERROR, format!("nidos: cannot validate: {e:#}"));
            return;
        }
        let Some(run) = &ws.run else { return };
        let inputs = diagnostics::Inputs {
            ws,
            report: &run.validation.report,
            dataset: &run.validation.dataset,
            schema: &run.validation.schema,
        };
        let notes: Vec<PublishDiagnosticsParams> = self
            .published
            .update(&inputs, None)
            .into_iter()
            .filter_map(|(rel, diagnostics)| {
                let path = ws.absolute(&rel);
                Some(PublishDiagnosticsParams {
                    uri: Workspace::uri_of(&path)?,
                    diagnostics,
                    version: ws.docs.get(&path).map(|d| d.version),
                })
            })
            .collect();
        for p in notes {
            self.notify(PublishDiagnostics::METHOD, p);
        }
    }

    fn notify(&self, method: &str, params: impl serde::Serialize) {
        let _ = self
            .connection
            .sender
            .send(Message::Notification(Notification::new(
                method.to_owned(),
                params,
            )));
    }

    fn log(&self, typ: MessageType, message: String) {
        self.notify(LogMessage::METHOD, LogMessageParams { typ, message });
    }
}
