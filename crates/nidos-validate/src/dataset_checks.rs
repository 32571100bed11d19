//! The checks of a dataset as a whole, after its files: required files and folders,
//! sidecars no data file uses, case collisions, CITATION.cff, blacklisted modalities.

use nidos_dataset::{Dataset, FileEntry};

use crate::engine::Engine;
use crate::filenames;
use crate::issue::{FastMap, FastSet, Issue, Severity};

impl Engine<'_> {
    /// `--blacklist-modalities`: every datatype directory of a listed modality is an
    /// error, located at the directory (`/sub-01/anat`).
    pub(crate) fn blacklisted_modalities(
        &self,
        ds: &Dataset,
        blacklist: &[String],
        out: &mut Vec<Issue>,
    ) {
        if blacklist.is_empty() {
            return;
        }
        let banned: Vec<(&str, &str)> = self
            .schema
            .modalities
            .iter()
            .filter(|(m, _)| blacklist.iter().any(|b| b.eq_ignore_ascii_case(m)))
            .flat_map(|(m, dts)| dts.iter().map(move |d| (m.as_str(), d.as_str())))
            .collect();
        for dir in ds.directories() {
            let name = dir.rsplit('/').next().unwrap_or(dir);
            if let Some((modality, _)) = banned.iter().find(|(_, d)| *d == name) {
                out.push(
                    Issue::new("BLACKLISTED_MODALITY", Severity::Error, dir).message(format!(
                        "{modality} data are not accepted here (--blacklist-modalities)"
                    )),
                );
            }
        }
    }

    pub(crate) fn dataset_checks(
        &self,
        ds: &Dataset,
        layout: &str,
        used_sidecars: &FastSet<String>,
        out: &mut Vec<Issue>,
    ) {
        // Name collisions are looked for on another worker meanwhile.
        let (mut collisions, ()) = rayon::join(
            || {
                let mut found = Vec::new();
                case_collisions(ds.files(), &mut found);
                found
            },
            || self.description_and_layout(ds, layout, used_sidecars, out),
        );
        out.append(&mut collisions);
    }

    /// The dataset checks other than name collisions.
    fn description_and_layout(
        &self,
        ds: &Dataset,
        layout: &str,
        used_sidecars: &FastSet<String>,
        out: &mut Vec<Issue>,
    ) {
        if ds.find("/dataset_description.json").is_none() {
            out.push(
                Issue::new("MISSING_DATASET_DESCRIPTION", Severity::Error, "").message(
                    "a dataset_description.json file is required at the dataset root".to_string(),
                ),
            );
        }
        // A description that sets no brand's version key, or several (only for schemas
        // that serve several brands).
        let description = ds.dataset_value().get("dataset_description");
        if description.is_object() {
            let has = |k: &str| !description.get(k).is_null();
            // Without a version key, the brand the dataset shows otherwise (its ignore
            // file, its URIs) was chosen: the issue names it and why.
            let brands = &self.schema.brands;
            let guessed = if brands.list.iter().any(|b| has(&b.version_key)) {
                None
            } else {
                let as_json = description.to_json();
                brands.guess(&|b: &nidos_schema::Brand| {
                    nidos_schema::signs_of(
                        b,
                        // Ignore files are not among the walked files.
                        &|name: &str| ds.root().join(name).is_file(),
                        Some(&as_json),
                    )
                })
            };
            if let (_, Some(b)) = brands.choose_by_guessing(&has, guessed.as_ref()) {
                let severity = self
                    .schema
                    .errors
                    .iter()
                    .find(|r| r.code == b.code)
                    .map_or(Severity::Warning, |r| r.level);
                out.push(
                    Issue::new(b.code, severity, "/dataset_description.json").message(b.message),
                );
            }
        }
        // A sidecar that no data file inherits or refers to.
        for f in ds.files() {
            if !f.validated() || f.name.extension != ".json" || used_sidecars.contains(&f.path) {
                continue;
            }
            if matches!(
                f.path.as_str(),
                "/dataset_description.json" | "/genetic_info.json"
            ) {
                continue;
            }
            out.push(Issue::new(
                "SIDECAR_WITHOUT_DATAFILE",
                Severity::Error,
                f.path.as_str(),
            ));
        }
        self.unknown_directories(ds, layout, out);
    }

    /// NOT_INCLUDED for each directory the layout does not know (only those holding
    /// validated files: a directory whose whole content is ignored is ignored itself).
    pub(crate) fn unknown_directories(&self, ds: &Dataset, layout: &str, out: &mut Vec<Issue>) {
        let mut live_dirs: FastSet<&str> = FastSet::default();
        for f in ds.files().iter().filter(|f| f.validated()) {
            let mut dir = f.dir().trim_end_matches('/');
            while !dir.is_empty() && live_dirs.insert(dir) {
                dir = &dir[..dir.rfind('/').unwrap_or(0)];
            }
        }
        // Directory names repeat (`ses-01`, `anat`…): each is judged once.
        let mut known: FastMap<&str, bool> = FastMap::default();
        for dir in ds.directories() {
            if !live_dirs.contains(dir) {
                continue;
            }
            let name = dir.rsplit('/').next().unwrap_or(dir);
            let is_known = *known
                .entry(name)
                .or_insert_with(|| filenames::directory_known(self.schema, layout, dir));
            if !is_known {
                out.push(Issue::new(
                    "NOT_INCLUDED",
                    Severity::Error,
                    format!("{dir}/"),
                ));
            }
        }
    }

    /// CITATION.cff against the Citation File Format (see [`crate::cff`]).
    pub(crate) fn citation_file(&self, ds: &Dataset, out: &mut Vec<Issue>) {
        let path = crate::cff::CffRules::path_for_schema(self.schema.citation.as_ref());
        let Some(file) = ds.find(&path).filter(|f| f.validated() && f.readable()) else {
            return;
        };
        match self.citation_rules() {
            Ok(rules) => match ds.read_file(&file.path) {
                Ok(bytes) => out.extend(rules.check_bytes(&bytes)),
                Err(e) => out.push(
                    Issue::new("FILE_READ", Severity::Error, file.path.as_str())
                        .message(format!("the file could not be read: {e}")),
                ),
            },
            Err(why) => out.push(
                Issue::new("INTERNAL_ERROR", Severity::Error, file.path.as_str())
                    .message(format!("the citation rules could not be read: {why}")),
            ),
        }
    }
}

/// CASE_COLLISION: names that differ only by case within one directory. Files are
/// ordered by a seeded hash of their directory and lower-cased name, and only files
/// with equal hashes are compared (no map of every name).
pub(crate) fn case_collisions(files: &[FileEntry], out: &mut Vec<Issue>) {
    use std::hash::{BuildHasher, Hash, Hasher};
    // The lower-cased name's bytes, without a copy for ASCII names.
    fn lower_bytes(name: &str, mut each: impl FnMut(u8)) {
        if name.is_ascii() {
            name.bytes().for_each(|b| each(b.to_ascii_lowercase()));
        } else {
            name.to_lowercase().bytes().for_each(each);
        }
    }
    let same_name = |a: &str, b: &str| {
        if a.is_ascii() && b.is_ascii() {
            a.eq_ignore_ascii_case(b)
        } else {
            a.to_lowercase() == b.to_lowercase()
        }
    };
    let state = foldhash::fast::RandomState::default();
    use rayon::prelude::*;
    let mut keyed: Vec<(u64, usize)> = files
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            let mut h = state.build_hasher();
            f.dir().hash(&mut h);
            lower_bytes(f.file_name(), |b| h.write_u8(b));
            (h.finish(), i)
        })
        .collect();
    keyed.par_sort_unstable();
    for run in keyed.chunk_by(|a, b| a.0 == b.0).filter(|r| r.len() > 1) {
        // Split the run into groups of really equal names, each in path order.
        let mut left: Vec<usize> = run.iter().map(|&(_, i)| i).collect();
        while let Some(&first) = left.first() {
            let (group, rest): (Vec<usize>, Vec<usize>) = left.iter().partition(|&&i| {
                files[i].dir() == files[first].dir()
                    && same_name(files[i].file_name(), files[first].file_name())
            });
            left = rest;
            if group.len() < 2 {
                continue;
            }
            for &i in &group {
                let mut issue =
                    Issue::new("CASE_COLLISION", Severity::Error, files[i].path.as_str());
                issue.extra_mut().affects = group
                    .iter()
                    .filter(|&&j| j != i)
                    .map(|&j| files[j].path.clone())
                    .collect();
                out.push(issue);
            }
        }
    }
}
