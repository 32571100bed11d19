//! The protocol loop. The dataset is validated by an incremental session
//! (`nidos_validate::incremental::Session`) fed the open documents' unsaved text: an
//! edit re-checks only the files whose inputs it changed. Messages that queue up while
//! a check runs are all taken before the next one, so a burst of keystrokes costs one
//! update. A change to what chooses the rules (the description, a root ignore file)
//! opens a new session with the rules that change chooses.

use std::collections::{BTreeSet, HashSet};
use std::sync::OnceLock;

use anyhow::Context as _;
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    LogMessage, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, HoverRequest, RegisterCapability, Request as _,
};
use lsp_types::{
    CodeActionParams, CodeActionProviderCapability, CompletionOptions, CompletionParams,
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, HoverParams, HoverProviderCapability, InitializeParams,
    LogMessageParams, MessageType, PublishDiagnosticsParams, Registration, RegistrationParams,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind,
};
use nidos_schema::Source;
use nidos_validate::incremental::{Outcome, Session};
use nidos_validate::Request as RunRequest;

use crate::diagnostics::Changed;
use crate::workspace::{dataset_root_of, rules_input, Doc, View, Workspace};
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
        pending: BTreeSet::new(),
        rules_changed: false,
        deferred: Vec::new(),
    };
    server.watch_files(&params);
    loop {
        if server.ws.is_none() {
            // No dataset yet: wait for a document opened inside one.
            let Ok(msg) = connection.receiver.recv() else {
                return Ok(());
            };
            if server.handle(msg, None)? {
                return Ok(());
            }
            continue;
        }
        match server.session()? {
            Next::Exit => return Ok(()),
            Next::Restart => {}
        }
    }
}

/// The dataset the client opened as its workspace, when it is one.
fn initial_root(params: &InitializeParams) -> Option<std::path::PathBuf> {
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

enum Next {
    Exit,
    /// The rules may have changed: open a new session.
    Restart,
}

/// The current session and what was planned from it.
struct Live<'s, 'r> {
    session: &'s mut Session<'r>,
    plan: OnceLock<Option<nidos_fix::Plan>>,
}

impl Live<'_, '_> {
    fn view(&self) -> View<'_> {
        View {
            schema: self.session.schema(),
            report: self.session.report(),
            dataset: self.session.dataset(),
            plan: &self.plan,
        }
    }
}

struct Server<'c> {
    connection: &'c Connection,
    /// `None` until a document inside a dataset is opened.
    ws: Option<Workspace>,
    published: diagnostics::Published,
    /// Dataset-relative paths changed (in a buffer or on disk) since the last update.
    pending: BTreeSet<String>,
    /// A change may have chosen other rules.
    rules_changed: bool,
    /// Requests that arrived while the rules were changing, answered by the next
    /// session.
    deferred: Vec<Request>,
}

impl Server<'_> {
    /// One session: the rules chosen from the description as the editor sees it, the
    /// dataset validated, then updated on each change until the client exits or the
    /// rules may change.
    fn session(&mut self) -> anyhow::Result<Next> {
        let Some(ws) = &self.ws else {
            return Ok(Next::Restart);
        };
        let root = ws.root.clone();
        self.pending.clear();
        self.rules_changed = false;
        let request = RunRequest::default();
        let schema =
            match nidos_schema::load_for_dir(&Source::Bundled, &root, ws.description(), None) {
                Ok(chosen) => chosen.schema,
                Err(e) => return self.wait_for_change(format!("cannot choose the rules: {e}")),
            };
        let mut session = match Session::new_with(&schema, &root, &request, ws.contents()) {
            Ok(s) => s,
            Err(e) => return self.wait_for_change(format!("cannot validate: {e}")),
        };
        let mut live = Live {
            session: &mut session,
            plan: OnceLock::new(),
        };
        self.publish(&live, Changed::All);
        for req in std::mem::take(&mut self.deferred) {
            self.respond(req, Some(&live))?;
        }
        loop {
            let Ok(first) = self.connection.receiver.recv() else {
                return Ok(Next::Exit);
            };
            if self.handle(first, Some(&mut live))? {
                return Ok(Next::Exit);
            }
            while let Ok(next) = self.connection.receiver.try_recv() {
                if self.handle(next, Some(&mut live))? {
                    return Ok(Next::Exit);
                }
            }
            if self.rules_changed || !self.update(&mut live)? {
                return Ok(Next::Restart);
            }
        }
    }

    /// After a session could not start: tells the client why and waits for a change
    /// (or the exit).
    fn wait_for_change(&mut self, why: String) -> anyhow::Result<Next> {
        self.log(MessageType::ERROR, format!("nidos: {why}"));
        loop {
            let Ok(msg) = self.connection.receiver.recv() else {
                return Ok(Next::Exit);
            };
            if self.handle(msg, None)? {
                return Ok(Next::Exit);
            }
            if !self.pending.is_empty() || self.rules_changed {
                return Ok(Next::Restart);
            }
        }
    }

    /// Takes the pending changes into the session and publishes what they changed;
    /// false when the rules may have changed.
    fn update(&mut self, live: &mut Live<'_, '_>) -> anyhow::Result<bool> {
        if self.pending.is_empty() {
            return Ok(true);
        }
        let Some(ws) = &self.ws else {
            return Ok(true);
        };
        let mut edited: HashSet<String> = HashSet::new();
        let mut deltas = Vec::new();
        for rel in std::mem::take(&mut self.pending) {
            let content = ws
                .docs
                .get(&ws.absolute(&rel))
                .map(|d| d.text.clone().into_bytes());
            match live.session.set_overlay(&rel, content) {
                Ok(Outcome::Updated(delta)) => deltas.push(delta),
                Ok(Outcome::RulesChanged) => return Ok(false),
                Err(e) => {
                    self.log(MessageType::ERROR, format!("nidos: cannot validate: {e}"));
                    return Ok(false);
                }
            }
            edited.insert(rel);
        }
        live.plan = OnceLock::new();
        self.publish(
            live,
            Changed::Since {
                edited: &edited,
                deltas: &deltas,
            },
        );
        Ok(true)
    }

    /// Handles one message; true when the client asked the server to exit.
    fn handle(&mut self, msg: Message, live: Option<&mut Live<'_, '_>>) -> anyhow::Result<bool> {
        match msg {
            Message::Request(req) => {
                if self.connection.handle_shutdown(&req)? {
                    return Ok(true);
                }
                match live {
                    Some(live) => {
                        // Answers read the dataset with every change made so far.
                        if self.rules_changed || !self.update(live)? {
                            self.rules_changed = true;
                            self.deferred.push(req);
                        } else {
                            self.respond(req, Some(live))?;
                        }
                    }
                    None => self.respond(req, None)?,
                }
            }
            Message::Notification(n) => self.notified(n),
            Message::Response(_) => {}
        }
        Ok(false)
    }

    fn respond(&self, req: Request, live: Option<&Live<'_, '_>>) -> anyhow::Result<()> {
        let resp = match (&self.ws, live) {
            (Some(ws), Some(live)) => answer(ws, &live.view(), req),
            _ => Response::new_ok(req.id, serde_json::Value::Null),
        };
        self.connection.sender.send(Message::Response(resp))?;
        Ok(())
    }

    /// Records what a notification changes (applied before the next answer or after
    /// the queue is empty).
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
                self.set_doc(&doc.uri, Some((doc.text, doc.version)));
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else {
                    return;
                };
                // Full synchronisation: the last change holds the whole text.
                if let Some(change) = p.content_changes.into_iter().last() {
                    self.set_doc(
                        &p.text_document.uri,
                        Some((change.text, p.text_document.version)),
                    );
                }
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) else {
                    return;
                };
                self.set_doc(&p.text_document.uri, None);
            }
            DidChangeWatchedFiles::METHOD => {
                let Ok(p) = serde_json::from_value::<DidChangeWatchedFilesParams>(n.params) else {
                    return;
                };
                let Some(ws) = &self.ws else { return };
                for change in p.changes {
                    if let Some(rel) = ws.path_of(&change.uri).and_then(|p| ws.relative(&p)) {
                        self.rules_changed |= rules_input(&rel);
                        self.pending.insert(rel);
                    }
                }
            }
            _ => {}
        }
    }

    /// A document's text (`None`: closed, the file on disk counts again).
    fn set_doc(&mut self, uri: &lsp_types::Uri, text: Option<(String, i32)>) {
        let Some(ws) = &mut self.ws else { return };
        let Some(path) = ws.path_of(uri) else { return };
        let Some(rel) = ws.relative(&path) else {
            return;
        };
        match text {
            Some((text, version)) => {
                ws.docs.insert(path, Doc::new(text, version));
            }
            None => {
                ws.docs.remove(&path);
            }
        }
        self.rules_changed |= rules_input(&rel);
        self.pending.insert(rel);
    }

    /// Publishes the diagnostics that differ from those last published (`changed`:
    /// what may have changed since).
    fn publish(&mut self, live: &Live<'_, '_>, changed: Changed<'_>) {
        let Some(ws) = &self.ws else { return };
        let view = live.view();
        let inputs = diagnostics::Inputs {
            ws,
            report: view.report,
            dataset: view.dataset,
            schema: view.schema,
        };
        let notes: Vec<PublishDiagnosticsParams> = self
            .published
            .update(&inputs, changed)
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

    /// Asks a client that can for notifications of changes on disk (files written by
    /// other programs).
    fn watch_files(&self, params: &InitializeParams) {
        let dynamic = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        if !dynamic {
            return;
        }
        let registration = RegistrationParams {
            registrations: vec![Registration {
                id: "nidos-watch".to_owned(),
                method: DidChangeWatchedFiles::METHOD.to_owned(),
                register_options: Some(serde_json::json!({"watchers": [{"globPattern": "**/*"}]})),
            }],
        };
        let _ = self.connection.sender.send(Message::Request(Request::new(
            RequestId::from("nidos-watch".to_owned()),
            RegisterCapability::METHOD.to_owned(),
            registration,
        )));
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

/// The answer to a request, from the current validation.
fn answer(ws: &Workspace, view: &View<'_>, req: Request) -> Response {
    let Request { id, method, params } = req;
    let result = match method.as_str() {
        HoverRequest::METHOD => on(params, |p: HoverParams| {
            let pos = p.text_document_position_params;
            hover::hover(
                view,
                &ws.at(&ws.path_of(&pos.text_document.uri)?, pos.position)?,
            )
        }),
        Completion::METHOD => on(params, |p: CompletionParams| {
            let pos = p.text_document_position;
            complete::complete(
                ws,
                view,
                &ws.at(&ws.path_of(&pos.text_document.uri)?, pos.position)?,
            )
        }),
        CodeActionRequest::METHOD => on(params, |p: CodeActionParams| {
            let path = ws.path_of(&p.text_document.uri)?;
            Some(actions::actions(ws, view, &path, &p.context.diagnostics))
        }),
        _ => {
            return Response::new_err(
                id,
                lsp_server::ErrorCode::MethodNotFound as i32,
                format!("nidos lsp does not answer {method}"),
            )
        }
    };
    Response::new_ok(id, result.unwrap_or(serde_json::Value::Null))
}

/// `f`'s answer to a request's parameters, as JSON (`None`: no answer, or parameters
/// that do not read as `P`).
fn on<P: serde::de::DeserializeOwned, R: serde::Serialize>(
    params: serde_json::Value,
    f: impl FnOnce(P) -> Option<R>,
) -> Option<serde_json::Value> {
    serde_json::to_value(f(serde_json::from_value(params).ok()?)?).ok()
}
