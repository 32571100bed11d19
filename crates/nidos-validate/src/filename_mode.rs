//! File-name mode (`nidos validate --filename-mode`): a list of dataset-relative names,
//! no content, and only the rules that judge names: which file rule claims each name
//! (NOT_INCLUDED), its entities, suffix, extension, datatype and location, the folders
//! the layout does not know, and names that differ only by case.

use std::sync::Arc;

use nidos_dataset::{Dataset, MemFs, OpenOptions};

use crate::dataset_checks::case_collisions;
use crate::engine::{Engine, Options};
use crate::filenames;
use crate::issue::{normalize, Issue, Sym};
use crate::report::Report;

/// The names of a list, one a line, as dataset-relative paths with a leading `/`.
/// Blank lines are skipped; a leading `./` or `/` is optional; a trailing `/` names a
/// directory. Names that climb out of the dataset (`..`) are returned apart.
pub fn parse_names(text: &str) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut rejected = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r').trim();
        if line.is_empty() {
            continue;
        }
        let rel = line.trim_start_matches("./").trim_start_matches('/');
        if rel.is_empty() || rel.split('/').any(|c| c == "..") {
            rejected.push(line.to_string());
            continue;
        }
        names.push(format!("/{rel}"));
    }
    (names, rejected)
}

/// A dataset of empty files with the given names (paths with a leading `/`, as
/// [`parse_names`] returns them), held in memory.
pub fn open_names(
    names: &[String],
    schema: &nidos_schema::Schema,
) -> Result<Dataset, nidos_dataset::DatasetError> {
    let mut fs = MemFs::new();
    for name in names {
        match name.strip_suffix('/') {
            Some(dir) => fs.add_dir(dir),
            None => fs.add_file(name, Vec::new()),
        }
    }
    let open = OpenOptions {
        ignore_nifti_headers: true,
        fs: Arc::new(fs),
        ..OpenOptions::default()
    };
    Dataset::open(std::path::Path::new("/"), schema, &open)
}

impl Engine<'_> {
    /// The file-name rules alone on `ds` (see the module's description): no content is
    /// read, so no EMPTY_FILE, no sidecar, table or dataset-description issue.
    pub fn validate_names(&self, ds: &Dataset, opts: &Options) -> Report {
        let layout = ds.dataset_type();
        let derivative = layout == "derivative";
        let mut issues: Vec<Issue> = Vec::new();
        for (idx, file) in ds.files().iter().enumerate() {
            if !file.validated() {
                continue;
            }
            let location = Sym::from(file.path.as_str());
            let first_new = issues.len();
            let identified = filenames::identify(
                self.schema,
                &self.file_rules,
                file,
                &location,
                derivative,
                &mut issues,
            );
            filenames::validate(
                self.schema,
                &self.file_rules,
                file,
                &location,
                &identified,
                &mut issues,
            );
            if let Some(rank) = u32::try_from(idx).ok().and_then(|i| i.checked_add(1)) {
                for issue in issues.iter_mut().skip(first_new) {
                    if issue.location == location {
                        issue.rank = rank;
                    }
                }
            }
        }
        self.unknown_directories(ds, &layout, &mut issues);
        case_collisions(ds.files(), &mut issues);
        opts.config.apply(&mut issues);
        normalize(&mut issues);
        let mut report = Report {
            code_messages: self.code_messages(&issues),
            issues,
            summary: self.summary(ds),
            dataset_type: layout,
            hidden_warnings: 0,
            field_messages: Default::default(),
        };
        if opts.ignore_warnings {
            report.drop_warnings();
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::parse_names;

    #[test]
    fn names_are_dataset_relative() {
        let (names, rejected) =
            parse_names("/sub-01/anat/x.nii.gz\r\nsub-01/anat/y.json\n\n  ./README \n../etc/passwd\nsub-01/x.zarr/\n");
        assert_eq!(
            names,
            [
                "/sub-01/anat/x.nii.gz",
                "/sub-01/anat/y.json",
                "/README",
                "/sub-01/x.zarr/"
            ]
        );
        assert_eq!(rejected, ["../etc/passwd"]);
    }
}
