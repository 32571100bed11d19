//! The dataset open in the editor: its documents (unsaved text included), the rules it
//! declares, and the last validation of it as the editor sees it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use lsp_types::Uri;
use nidos_dataset::{Dataset, OpenOptions};
use nidos_schema::{Schema, Source};
use nidos_validate::{Engine, Options, Validation};

use crate::overlay::{Buffers, OverlayFs};
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

/// One validation of the dataset as the editor sees it, and what is derived from it on
/// demand.
pub struct Run {
    pub validation: Validation,
    /// The repairs `nidos fix` would make, planned on first use (code actions).
    pub plan: OnceLock<Option<nidos_fix::Plan>>,
}

/// The server's state of the dataset.
pub struct Workspace {
    /// The dataset root, canonical.
    pub root: PathBuf,
    pub buffers: Buffers,
    pub docs: HashMap<PathBuf, Doc>,
    pub run: Option<Run>,
    /// The rules, kept until the description changes (`None`: not loaded yet).
    rules: Option<(Option<Vec<u8>>, Arc<Schema>)>,
}

impl Workspace {
    pub fn new(root: &Path) -> Workspace {
        Workspace {
            root: root.canonicalize().unwrap_or_else(|_| root.to_path_buf()),
            buffers: Buffers::default(),
            docs: HashMap::new(),
            run: None,
            rules: None,
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

    /// The dataset-relative form (`/sub-01/x.json`) of a path inside the dataset.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?;
        Some(format!("/{}", rel.to_string_lossy()))
    }

    /// The absolute path of a dataset-relative one.
    pub fn absolute(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    pub fn open(&mut self, path: PathBuf, text: String, version: i32) {
        self.set_buffer(&path, &text);
        self.docs.insert(path, Doc::new(text, version));
    }

    pub fn change(&mut self, path: &Path, text: String, version: i32) {
        self.set_buffer(path, &text);
        self.docs
            .insert(path.to_path_buf(), Doc::new(text, version));
    }

    pub fn close(&mut self, path: &Path) {
        self.docs.remove(path);
        if let Ok(mut b) = self.buffers.write() {
            b.remove(path);
        }
    }

    fn set_buffer(&self, path: &Path, text: &str) {
        if let Ok(mut b) = self.buffers.write() {
            b.insert(path.to_path_buf(), Arc::from(text.as_bytes()));
        }
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

    /// The dataset description as the editor sees it.
    fn description_bytes(&self) -> Option<Vec<u8>> {
        let path = self.root.join("dataset_description.json");
        match self.buffers.read().ok()?.get(&path) {
            Some(b) => Some(b.to_vec()),
            None => std::fs::read(path).ok(),
        }
    }

    /// The rules the dataset declares (loaded again only when its description changed).
    pub fn rules(&mut self) -> anyhow::Result<Arc<Schema>> {
        let desc = self.description_bytes();
        if let Some((seen, schema)) = &self.rules {
            if *seen == desc {
                return Ok(schema.clone());
            }
        }
        let value = desc
            .as_deref()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok());
        let chosen = nidos_schema::load_for_dir(&Source::Bundled, &self.root, value, None)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let schema = Arc::new(chosen.schema);
        self.rules = Some((desc, schema.clone()));
        Ok(schema)
    }

    /// Validates the dataset as the editor sees it, keeping the result.
    pub fn validate(&mut self) -> anyhow::Result<&Run> {
        let schema = self.rules()?;
        let open = OpenOptions {
            fs: Arc::new(OverlayFs::new(self.buffers.clone())),
            ..OpenOptions::default()
        };
        let dataset = Dataset::open(&self.root, &schema, &open)?;
        let report = Engine::new(&schema).validate_dataset(&dataset, &Options::default());
        let validation = Validation {
            root: self.root.clone(),
            schema,
            warnings: Vec::new(),
            report,
            dataset,
            derivatives: Vec::new(),
        };
        Ok(self.run.insert(Run {
            validation,
            plan: OnceLock::new(),
        }))
    }
}

impl Run {
    /// The repairs of this run's issues (planned once).
    pub fn plan(&self) -> Option<&nidos_fix::Plan> {
        self.plan
            .get_or_init(|| nidos_fix::plan(&self.validation, &nidos_fix::Options::default()).ok())
            .as_ref()
    }
}

/// The nearest folder at or above `start` that holds a dataset description.
pub fn dataset_root_of(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| d.join("dataset_description.json").is_file())
        .map(Path::to_path_buf)
}
