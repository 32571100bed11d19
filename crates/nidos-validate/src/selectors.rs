//! Selector memory. The rules of a schema repeat a few hundred distinct selectors
//! (`modality == "mri"`, `match(extension, "^\.nii(\.gz)?$")`, …) tens of times each, and
//! a file used to evaluate each repetition. Here every distinct selector (by source text)
//! gets a number: a file evaluates each number at most once, and a selector that reads
//! only dataset-wide names (`dataset`, `schema`) is evaluated once per dataset.
//!
//! Evaluation has no side effect a report could see beyond the lazy loading of context
//! parts, which happens the first time either way, so the memory changes no result.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use nidos_dataset::kinds::{KindMemo, KIND_NAMES};
use nidos_expr::{Context, Expr};
use nidos_schema::Expression;

/// Root names whose value is the same for every file of a dataset.
const DATASET_WIDE_NAMES: &[&str] = &["dataset", "schema"];

/// Every distinct selector of the engine's rules, numbered.
#[derive(Default)]
pub(crate) struct SelectorTable {
    by_source: HashMap<String, u32>,
    /// Parsed form by number (`None`: did not parse; such a selector never holds).
    exprs: Vec<Option<Arc<Expr>>>,
    /// By number: whether the value is the same for every file of a dataset.
    dataset_wide: Vec<bool>,
    /// By number: whether it reads `dataset` (a dataset-wide one may read only `schema`).
    reads_dataset: Vec<bool>,
    /// By number: whether the value is the same for every file of one kind (it reads
    /// only [`KIND_NAMES`]).
    kind_wide: Vec<bool>,
}

impl SelectorTable {
    /// The numbers of `selectors`, in order, numbering new sources.
    pub(crate) fn ids(&mut self, selectors: &[Expression]) -> Vec<u32> {
        selectors.iter().map(|s| self.id(s)).collect()
    }

    fn id(&mut self, selector: &Expression) -> u32 {
        if let Some(&id) = self.by_source.get(&selector.source) {
            return id;
        }
        let id = u32::try_from(self.exprs.len()).unwrap_or(u32::MAX);
        self.dataset_wide
            .push(selector.parsed.as_deref().is_some_and(is_dataset_wide));
        self.reads_dataset.push(
            selector
                .parsed
                .as_deref()
                .is_some_and(|e| !e.reads_only(&["schema"])),
        );
        self.kind_wide.push(
            selector
                .parsed
                .as_deref()
                .is_some_and(|e| e.reads_only(KIND_NAMES)),
        );
        self.exprs.push(selector.parsed.clone());
        self.by_source.insert(selector.source.clone(), id);
        id
    }

    pub(crate) fn len(&self) -> usize {
        self.exprs.len()
    }

    fn eval(&self, id: u32, ctx: &dyn Context) -> bool {
        match self.exprs.get(id as usize) {
            Some(Some(e)) => nidos_expr::eval(e, ctx).truthy(),
            _ => false,
        }
    }
}

/// Whether an expression may read `dataset.tree`: it names `dataset` other than as
/// `dataset.<member>` with a member other than `tree` (`dataset` whole, `dataset[k]`,
/// `dataset.tree`).
pub(crate) fn may_read_dataset_tree(expr: &Expr) -> bool {
    match expr {
        Expr::Member(object, member) if matches!(object.as_ref(), Expr::Name(n) if n.as_ref() == "dataset") => {
            member.as_ref() == "tree"
        }
        Expr::Name(n) => n.as_ref() == "dataset",
        Expr::Literal(_) => false,
        Expr::Array(items) => items.iter().any(may_read_dataset_tree),
        Expr::Member(object, _) => may_read_dataset_tree(object),
        Expr::Index(object, index) => may_read_dataset_tree(object) || may_read_dataset_tree(index),
        Expr::Call(c) => c.args.iter().any(may_read_dataset_tree),
    }
}

/// Whether an expression reads only dataset-wide names and calls nothing that looks
/// at the file (`exists` resolves paths from the file's place).
fn is_dataset_wide(expr: &Expr) -> bool {
    expr.reads_only(DATASET_WIDE_NAMES)
}

/// The dataset-wide selector values of one dataset, computed by whichever file needs
/// one first.
pub(crate) struct DatasetMemo(Vec<OnceLock<bool>>);

impl DatasetMemo {
    pub(crate) fn new(table: &SelectorTable) -> DatasetMemo {
        DatasetMemo((0..table.len()).map(|_| OnceLock::new()).collect())
    }
}

/// Views of a file of one kind that answer [`KIND_NAMES`] alike: the rules' view blanks
/// the suffix or the extension of some files (two bits, four variants).
pub(crate) const KIND_VARIANTS: usize = 4;

/// The selector values of one file.
pub(crate) struct FileMemo<'a> {
    table: &'a SelectorTable,
    dataset: &'a DatasetMemo,
    kinds: &'a KindMemo,
    /// The file's kind and variant, when known.
    kind: Option<(u32, usize)>,
    /// By number: the selector's value for this file, once evaluated.
    known: Vec<Option<bool>>,
    /// A selector that reads `dataset` was consulted for this file (its value may come
    /// from the dataset-wide memo, made by another file).
    pub(crate) read_dataset: bool,
}

impl<'a> FileMemo<'a> {
    pub(crate) fn new(
        table: &'a SelectorTable,
        dataset: &'a DatasetMemo,
        kinds: &'a KindMemo,
    ) -> FileMemo<'a> {
        FileMemo {
            table,
            dataset,
            kinds,
            kind: None,
            known: vec![None; table.len()],
            read_dataset: false,
        }
    }

    /// Forgets the previous file's values.
    pub(crate) fn reset(&mut self) {
        self.known.fill(None);
        self.kind = None;
        self.read_dataset = false;
    }

    /// Sets the kind of the file (see [`nidos_dataset::FileTree::kind_of`]) and which of
    /// the [`KIND_VARIANTS`] its view is: selectors reading only the kind are then
    /// evaluated once per kind and variant.
    pub(crate) fn set_kind(
        &mut self,
        kind: Option<u32>,
        blank_suffix: bool,
        blank_extension: bool,
    ) {
        let variant = usize::from(blank_suffix) | usize::from(blank_extension) << 1;
        self.kind = kind.map(|k| (k, variant));
    }

    /// Whether every selector of `ids` holds for the file of `ctx` (evaluated in order,
    /// stopping at the first that does not).
    pub(crate) fn all(&mut self, ids: &[u32], ctx: &dyn Context) -> bool {
        ids.iter().all(|&id| self.holds(id, ctx))
    }

    fn holds(&mut self, id: u32, ctx: &dyn Context) -> bool {
        let i = id as usize;
        if self.table.dataset_wide.get(i).copied().unwrap_or(false) {
            self.read_dataset |= self.table.reads_dataset.get(i).copied().unwrap_or(true);
            if let Some(cell) = self.dataset.0.get(i) {
                return *cell.get_or_init(|| self.table.eval(id, ctx));
            }
        }
        match self.known.get(i).copied().flatten() {
            Some(value) => value,
            None => {
                let value = match self.kind {
                    Some((kind, variant)) if self.table.kind_wide.get(i) == Some(&true) => {
                        let table = self.table;
                        self.kinds.get_or(kind, variant, i, || table.eval(id, ctx))
                    }
                    _ => self.table.eval(id, ctx),
                };
                if let Some(slot) = self.known.get_mut(i) {
                    *slot = Some(value);
                }
                value
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(src: &str) -> Expr {
        nidos_expr::parse(src).unwrap()
    }

    #[test]
    fn dataset_wide_selectors() {
        for (src, wide) in [
            (
                r#"dataset.dataset_description.DatasetType == "derivative""#,
                true,
            ),
            (r#"intersects(dataset.modalities, ["pet"])"#, true),
            (r#"schema.meta.versions[0] == "1""#, true),
            ("true", true),
            (r#"modality == "mri""#, false),
            (r#"dataset.dataset_description.Name == path"#, false),
            (r#"exists(dataset.subjects.sub_dirs, "dataset") > 0"#, false),
            (r#"evaluate(dataset.x)"#, false),
        ] {
            assert_eq!(is_dataset_wide(&parsed(src)), wide, "{src}");
        }
    }

    /// Selectors whose value a file's kind decides, and some it does not.
    #[test]
    fn kind_wide_selectors() {
        for (src, wide) in [
            (r#"suffix == "bold""#, true),
            (r#"match(extension, "^\\.nii(\\.gz)?$")"#, true),
            (
                r#"intersects([suffix], ["dwi", "epi"]) && datatype != "anat""#,
                true,
            ),
            (r#"modality == "mri""#, true),
            ("true", true),
            (r#"suffix == "bold" && sidecar.RepetitionTime"#, false),
            (r#""task" in entities"#, false),
            (r#"path == "/README""#, false),
            (r#"exists(suffix, "file") > 0"#, false),
            (r#"evaluate(suffix)"#, false),
            (r#"dataset.modalities[0] == modality"#, false),
        ] {
            assert_eq!(parsed(src).reads_only(KIND_NAMES), wide, "{src}");
        }
    }

    #[test]
    fn reads_of_the_dataset_tree() {
        for (src, reads) in [
            (r#"dataset.dataset_description.DatasetType == "raw""#, false),
            (r#"intersects(dataset.modalities, ["pet"])"#, false),
            (r#"exists(dataset.subjects.sub_dirs, "dataset") > 0"#, false),
            (r#"sidecar.tree == 1 && tree.dataset"#, false),
            ("dataset.tree", true),
            (r#"type(dataset.tree.sub-01) == "object""#, true),
            (r#"dataset["tree"]"#, true),
            ("length(dataset)", true),
            ("[1, dataset][1].tree", true),
            (r#"sidecar[dataset.tree]"#, true),
        ] {
            assert_eq!(may_read_dataset_tree(&parsed(src)), reads, "{src}");
        }
    }
}
