//! The dataset-level values of the context (`dataset`, `dataset.tree`, `subject`),
//! each computed once per dataset from the loaded files.

use indexmap::IndexMap;
use std::sync::atomic::Ordering;

use nidos_expr::{Object, Value};

use super::Dataset;

impl Dataset {
    /// The `dataset` object (computed once).
    pub fn dataset_value(&self) -> Value {
        self.dataset_value_ref().clone()
    }

    /// [`Dataset::dataset_value`], borrowed. Without `tree` while
    /// [`Dataset::set_tree_wanted`] says so, unless the whole object was built before.
    pub fn dataset_value_ref(&self) -> &Value {
        if let Some(whole) = self.dataset_value.get() {
            return whole;
        }
        if self.tree_wanted.load(Ordering::Relaxed) {
            self.dataset_value
                .get_or_init(|| self.build_dataset_value(true))
        } else {
            self.dataset_value_lean
                .get_or_init(|| self.build_dataset_value(false))
        }
    }

    /// Whether the `dataset` object built from now on holds `tree` (the default).
    /// A validation run whose rules never read `dataset.tree` (nor `dataset` whole) sets
    /// `false` for its duration: the tree has an object member per file and folder
    /// (about 350 bytes per file). Values read from `dataset`'s other members are the
    /// same either way; an object built with the tree is kept and served in both modes.
    pub fn set_tree_wanted(&self, wanted: bool) {
        self.tree_wanted.store(wanted, Ordering::Relaxed);
    }

    fn build_dataset_value(&self, with_tree: bool) -> Value {
        let mut o = Object::default();
        let desc = self
            .index_of("/dataset_description.json")
            .map(|i| self.json_at(i).value.clone())
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| Value::object(Object::default()));
        o.insert("dataset_description".into(), desc);
        if let Some(citation) = self.citation_value() {
            o.insert("citation".into(), citation);
        }
        if with_tree {
            o.insert("tree".into(), self.tree());
        }
        let ignored = self
            .files
            .iter()
            .filter(|f| f.ignored)
            .map(|f| Value::str(f.path.as_str()))
            .collect();
        o.insert("ignored".into(), Value::array(ignored));
        o.insert("datatypes".into(), strs(self.datatypes()));
        o.insert("modalities".into(), strs(self.modalities()));
        // Where the dataset sits: its root folder's name and the name of the folder holding
        // it (a derivative at `…/derivatives/<pipeline>/` has `derivatives` here).
        let base = |p: Option<&std::path::Path>| {
            p.and_then(|p| p.file_name())
                .map(|n| Value::str(n.to_string_lossy().as_ref()))
                .unwrap_or_else(|| Value::str(""))
        };
        o.insert("dir_name".into(), base(Some(self.root.as_path())));
        o.insert("parent_dir_name".into(), base(self.root.parent()));
        let mut subjects = Object::default();
        subjects.insert("sub_dirs".into(), strs(self.sub_dirs.clone()));
        if let Some(i) = self.index_of("/participants.tsv") {
            let t = self.table_at(i);
            if t.table
                .as_ref()
                .is_some_and(|t| t.column("participant_id").is_some())
            {
                subjects.insert("participant_id".into(), first_column(&t, "participant_id"));
            }
        }
        o.insert("subjects".into(), Value::object(subjects));
        Value::object(o)
    }

    /// The parsed `CITATION.cff` at the root (YAML; a date left unquoted stays the string
    /// it is written as); absent when there is none or it does not parse (the validator
    /// reports why).
    fn citation_value(&self) -> Option<Value> {
        self.find("/CITATION.cff").filter(|f| f.readable())?;
        let bytes = self.read_file("/CITATION.cff").ok()?;
        serde_saphyr::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .map(Value::from)
    }

    /// The `dataset.tree` object: directories are objects of their entries, files are
    /// `true`. Computed once.
    pub fn tree(&self) -> Value {
        self.tree_value.get_or_init(|| self.build_tree()).clone()
    }

    fn build_tree(&self) -> Value {
        #[derive(Default)]
        struct Node(IndexMap<String, Option<Node>>);
        fn insert(node: &mut Node, parts: &[&str], is_dir: bool) {
            let Some((first, rest)) = parts.split_first() else {
                return;
            };
            if rest.is_empty() && !is_dir {
                node.0.entry(first.to_string()).or_insert(None);
                return;
            }
            let child = node
                .0
                .entry(first.to_string())
                .or_insert_with(|| Some(Node::default()));
            if child.is_none() {
                *child = Some(Node::default());
            }
            if let Some(c) = child.as_mut() {
                insert(c, rest, is_dir);
            }
        }
        fn to_value(node: &Node) -> Value {
            let mut o = Object::with_capacity_and_hasher(node.0.len(), Default::default());
            for (k, v) in &node.0 {
                o.insert(
                    k.clone(),
                    v.as_ref().map(to_value).unwrap_or(Value::Bool(true)),
                );
            }
            Value::object(o)
        }
        let mut root = Node::default();
        let mut dirs: Vec<&String> = self.dir_paths.iter().collect();
        dirs.sort();
        for d in dirs {
            let parts: Vec<&str> = d.trim_matches('/').split('/').collect();
            insert(&mut root, &parts, true);
        }
        for f in &self.files {
            let parts: Vec<&str> = f.path.trim_matches('/').split('/').collect();
            insert(&mut root, &parts, false);
        }
        to_value(&root)
    }

    /// The `subject` object for `sub-XX` (computed once per subject).
    pub fn subject_value(&self, sub: &str) -> Value {
        self.subject_value_ref(sub).cloned().unwrap_or(Value::Null)
    }

    /// [`Dataset::subject_value`], borrowed (`None` for an unknown subject).
    pub fn subject_value_ref(&self, sub: &str) -> Option<&Value> {
        self.subject_values
            .get(sub)
            .map(|cell| cell.get_or_init(|| self.build_subject_value(sub)))
    }

    fn build_subject_value(&self, sub: &str) -> Value {
        let mut sessions = Object::default();
        sessions.insert(
            "ses_dirs".into(),
            strs(self.ses_dirs.get(sub).cloned().unwrap_or_default()),
        );
        if let Some(i) = self.index_of(&format!("/{sub}/{sub}_sessions.tsv")) {
            let t = self.table_at(i);
            if t.table
                .as_ref()
                .is_some_and(|t| t.column("session_id").is_some())
            {
                sessions.insert("session_id".into(), first_column(&t, "session_id"));
            }
        }
        let mut o = Object::default();
        o.insert("sessions".into(), Value::object(sessions));
        Value::object(o)
    }
}

/// The first column named `name` of a table as a value: the one `columns.NAME` reads
/// (and shares) when the name is unique, as it is in a table with a header row.
fn first_column(t: &super::TableLoad, name: &str) -> Value {
    let Some(table) = &t.table else {
        return Value::Null;
    };
    if table.headers.iter().filter(|h| *h == name).count() == 1 {
        return t.column_value(name);
    }
    table
        .column(name)
        .map_or(Value::Null, |col| table.column_value(col))
}

fn strs(v: Vec<String>) -> Value {
    Value::array(v.into_iter().map(Value::from).collect())
}
