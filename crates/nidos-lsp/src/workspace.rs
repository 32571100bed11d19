//! The dataset open in the editor: its root and its open documents (whose unsaved text
//! the validation reads), and [`View`], what the answers read of the current
//! validation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use lsp_types::Uri;
use nidos_dataset::Dataset;
use nidos_fix::Plan;
use nidos_schema::Schema;
use nidos_validate::Report;

use crate::text::LineIndex;

/// The largest file read from disk to place an issue in it (larger ones get issues at
/// their start).
const MAX_PLACED_BYTES: u64 = 8 << 20;

/// A document open in the editor.
#[derive(Debug)]
pub struct Doc {
    pub text: String,
    pub version: i32,
    pub lines: LineIndex,
}

impl Doc {
    pub fn new(text: String, version: i32) -> Doc {
        let lines = LineIndex::new(&text);
        Doc {
            text,
            version,
            lines,
        }
    }
}

/// An open document of the dataset, and a position in it as a byte offset.
pub struct At<'w> {
    pub doc: &'w Doc,
    /// Dataset-relative path.
    pub rel: String,
    pub text: &'w str,
    pub offset: usize,
    pub pos: lsp_types::Position,
}

/// The current validation as the answers read it, and the repairs planned from it on
/// first use (code actions).
pub struct View<'a> {
    pub schema: &'a Schema,
    pub report: &'a Report,
    pub dataset: &'a Dataset,
    pub plan: &'a OnceLock<Option<Plan>>,
}

impl View<'_> {
    /// What `nidos fix` would change for this validation's issues (planned once).
    pub fn plan(&self, root: &Path) -> Option<&Plan> {
        self.plan
            .get_or_init(|| {
                nidos_fix::plan_for(
                    self.schema,
                    root,
                    self.dataset,
                    &self.report.issues,
                    &nidos_fix::Options::default(),
                )
                .ok()
            })
            .as_ref()
    }
}

/// The dataset root and the documents open in it.
pub struct Workspace {
    /// The dataset root, canonical.
    pub root: PathBuf,
    pub docs: HashMap<PathBuf, Doc>,
}

impl Workspace {
    pub fn new(root: &Path) -> Workspace {
        Workspace {
            root: root.canonicalize().unwrap_or_else(|_| root.to_path_buf()),
            docs: HashMap::new(),
        }
    }

    /// The absolute path of a `file:` URI, its folder resolved like the dataset root.
    pub fn path_of(&self, uri: &Uri) -> Option<PathBuf> {
        let path = url::Url::parse(uri.as_str()).ok()?.to_file_path().ok()?;
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Some(path);
        };
        Some(
            dir.canonicalize()
                .map(|d| d.join(name))
                .unwrap_or(path.clone()),
        )
    }

    /// The `file:` URI of an absolute path.
    pub fn uri_of(path: &Path) -> Option<Uri> {
        let url = url::Url::from_file_path(path).ok()?;
        url.as_str().parse().ok()
    }

    /// The open document `path` at `pos`.
    pub fn at(&self, path: &Path, pos: lsp_types::Position) -> Option<At<'_>> {
        let doc = self.docs.get(path)?;
        Some(At {
            doc,
            rel: self.relative(path)?,
            text: &doc.text,
            offset: doc.lines.offset(&doc.text, pos),
            pos,
        })
    }

    /// The dataset-relative form (`/sub-01/x.json`) of a path inside the dataset.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?;
        Some(format!("/{}", rel.to_string_lossy()))
    }

    /// The absolute path of a dataset-relative one.
    pub fn absolute(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    /// The text of a file as the editor sees it: its open document, else the file on
    /// disk (`None` when it cannot be read as text of a reasonable size).
    pub fn text_of(&self, path: &Path) -> Option<std::borrow::Cow<'_, str>> {
        if let Some(d) = self.docs.get(path) {
            return Some(std::borrow::Cow::Borrowed(d.text.as_str()));
        }
        let bytes = nidos_dataset::guarded::read_regular(path, MAX_PLACED_BYTES).ok()?;
        Some(std::borrow::Cow::Owned(String::from_utf8(bytes).ok()?))
    }

    /// The open documents inside the dataset, as dataset-relative paths and bytes.
    pub fn contents(&self) -> Vec<(String, Vec<u8>)> {
        self.docs
            .iter()
            .filter_map(|(p, d)| Some((self.relative(p)?, d.text.clone().into_bytes())))
            .collect()
    }

    /// The dataset description as the editor sees it (unsaved text included).
    pub fn description(&self) -> Option<serde_json::Value> {
        let path = self.root.join("dataset_description.json");
        match self.docs.get(&path) {
            Some(d) => serde_json::from_str(&d.text).ok(),
            None => nidos_dataset::read_description(&self.root),
        }
    }
}

/// Whether a change to `rel` may choose other rules: the description, or an ignore
/// file at the root.
pub fn rules_input(rel: &str) -> bool {
    rel == "/dataset_description.json"
        || (rel.starts_with("/.") && rel.ends_with("ignore") && !rel[1..].contains('/'))
}

/// The nearest folder at or above `start` that holds a dataset description.
pub fn dataset_root_of(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| d.join("dataset_description.json").is_file())
        .map(Path::to_path_buf)
}
