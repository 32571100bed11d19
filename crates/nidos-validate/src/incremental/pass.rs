//! The recorded per-file pass: some files of a dataset validated each on its own, each
//! result kept with what it depended on, so it can be reused until one of those
//! changes.

use nidos_dataset::Dataset;
use rayon::prelude::*;

use crate::apply::{Seen, SeenEntry};
use crate::engine::{wanted, Engine, Options, PerFile};
use crate::hed::HedRun;
use crate::issue::{FastSet, Issue};
use crate::selectors::{DatasetMemo, FileMemo, KIND_VARIANTS};
use nidos_dataset::kinds::KindMemo;

/// One file's part of a run, and what it read.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FileResult {
    /// The issues its validation made (the issues located at the file are ranked again
    /// when a report is put together).
    pub issues: Vec<Issue>,
    /// The files whose content it read: its merged sidecars and its associated files,
    /// sorted (also the "used" files of the dataset-level checks).
    pub used: Vec<String>,
    /// The shared (sidecar, key) values it reached, each checked for this file alone.
    pub seen: Vec<SeenEntry>,
    /// What its rules read beyond its own inputs ([`crate::cleaned::reads`] bits).
    pub reads: u8,
}

impl Engine<'_> {
    /// Validates the files at `which` (indices into `ds.files()`), each on its own: the
    /// same issues a whole run gives them, recorded apart.
    pub(crate) fn validate_recorded(
        &self,
        ds: &Dataset,
        opts: &Options,
        which: &[usize],
        hed: Option<&HedRun>,
    ) -> Vec<FileResult> {
        ds.set_tree_wanted(self.reads_tree);
        let derivative = ds.dataset_type() == "derivative";
        let dataset_selectors = DatasetMemo::new(&self.selectors);
        let kind_selectors = KindMemo::new(ds.kind_count(), KIND_VARIANTS, self.selectors.len());
        let files = ds.files();
        let results = which
            .par_iter()
            .with_min_len(8)
            .map_init(
                || FileMemo::new(&self.selectors, &dataset_selectors, &kind_selectors),
                |memo, &i| {
                    let Some(f) = files.get(i) else {
                        return FileResult::default();
                    };
                    let seen = Seen::default();
                    let mut issues = Vec::new();
                    let mut used = FastSet::default();
                    let mut reads = 0;
                    if wanted(opts, f) {
                        memo.reset();
                        let run = PerFile {
                            derivative,
                            seen: &seen,
                            selectors: memo,
                            out: &mut issues,
                            used: &mut used,
                            hed,
                            kinds: opts.only_kinds.as_deref(),
                        };
                        reads = self.validate_file(ds, (i, f), run);
                    } else if let Some(hed) = hed {
                        hed.check_table(&ds.context_at(i), &mut issues);
                    }
                    let mut used: Vec<String> = used.into_iter().collect();
                    used.sort_unstable();
                    FileResult {
                        issues,
                        used,
                        seen: seen.into_entries(),
                        reads,
                    }
                },
            )
            .collect();
        ds.set_tree_wanted(true);
        results
    }
}
