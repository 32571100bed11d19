//! The report's summary of a dataset and the message of each issue code.

use crate::engine::Engine;
use crate::issue::Issue;
use crate::report::Summary;
use indexmap::IndexMap;
use nidos_dataset::Dataset;
use std::collections::{BTreeSet, HashMap};

impl Engine<'_> {
    /// Field requirements that raise their own code (`issue:` on a sidecar or JSON field).
    fn field_issue_specs(&self) -> impl Iterator<Item = &nidos_schema::IssueSpec> {
        self.schema
            .sidecar_rules
            .iter()
            .chain(&self.schema.json_rules)
            .flat_map(|r| r.fields.values().filter_map(|f| f.issue.as_ref()))
    }

    pub(crate) fn code_messages(&self, issues: &[Issue]) -> IndexMap<String, String> {
        let mut by_code: HashMap<&str, &str> = HashMap::new();
        for spec in self.schema.checks.iter().filter_map(|r| r.issue.as_ref()) {
            by_code
                .entry(spec.code.as_str())
                .or_insert(spec.message.as_str());
        }
        for rule in &self.schema.errors {
            by_code
                .entry(rule.code.as_str())
                .or_insert(rule.message.as_str());
        }
        for spec in self.field_issue_specs() {
            by_code
                .entry(spec.code.as_str())
                .or_insert(spec.message.as_str());
        }
        // Sorted issues come in runs sharing one copy of a code: one set insertion per run.
        let mut codes: BTreeSet<&str> = BTreeSet::new();
        let mut last: Option<&crate::issue::Sym> = None;
        for i in issues {
            if last.is_some_and(|l| l.same(i.code())) {
                continue;
            }
            codes.insert(i.code().as_str());
            last = Some(i.code());
        }
        codes
            .into_iter()
            .map(|c| {
                (
                    c.to_string(),
                    crate::explain::explain(c, by_code.get(c).copied()),
                )
            })
            .collect()
    }

    /// `Field description: …` for each (code, key) of a missing key among `issues`:
    /// the issue texts the reference gives them, held once per pair.
    pub(crate) fn field_messages(&self, issues: &[Issue]) -> crate::report::FieldMessages {
        let mut out = crate::report::FieldMessages::default();
        self.add_field_messages(&mut out, issues);
        out
    }

    /// Adds to `out` the messages of the (code, key) pairs of `issues` it lacks (an
    /// incremental update adds those of the issues that came; a pair whose issues went
    /// may stay, since the map is only looked up by the issues of the report).
    pub(crate) fn add_field_messages(
        &self,
        out: &mut crate::report::FieldMessages,
        issues: &[Issue],
    ) {
        let may_lack = |i: &Issue| {
            i.rule_id().is_some() && !i.sub_code().is_empty() && i.issue_message().is_none()
        };
        if !issues.iter().any(may_lack) {
            return;
        }
        let mut missing_codes: BTreeSet<&str> = [
            "JSON_KEY_RECOMMENDED",
            "JSON_KEY_REQUIRED",
            "SIDECAR_KEY_RECOMMENDED",
            "SIDECAR_KEY_REQUIRED",
        ]
        .into_iter()
        .collect();
        missing_codes.extend(self.field_issue_specs().map(|spec| spec.code.as_str()));
        // The pairs already looked at (borrowed, foldhash): most issues repeat a pair, and
        // an owned key per issue cost two allocations and a SipHash lookup.
        let mut seen: crate::issue::FastSet<(&str, &str)> = crate::issue::FastSet::default();
        for i in issues {
            if !may_lack(i) || !missing_codes.contains(i.code().as_str()) {
                continue;
            }
            if !seen.insert((i.code().as_str(), i.sub_code().as_str())) {
                continue;
            }
            let key = (i.code().to_string(), i.sub_code().to_string());
            if out.contains_key(&key) {
                continue;
            }
            if let Some(d) = self
                .schema
                .metadata_def(i.sub_code().as_str())
                .and_then(|d| d.description())
            {
                out.insert(key, format!("Field description: {d}"));
            }
        }
    }

    pub(crate) fn summary(&self, ds: &Dataset) -> Summary {
        let mut subjects: BTreeSet<String> = BTreeSet::new();
        let mut sessions: BTreeSet<String> = BTreeSet::new();
        let mut tasks: BTreeSet<String> = BTreeSet::new();
        let mut datatypes: BTreeSet<String> = BTreeSet::new();
        let mut modalities = Counts::new(&PRIMARY_ORDER);
        let mut secondary = Counts::new(&SECONDARY_ORDER);
        let mut total = 0;
        let mut size = 0;
        for (idx, f) in ds.files().iter().enumerate() {
            if !f.validated() {
                continue;
            }
            total += 1;
            size += f.size;
            if let Some(s) = f.name.get("sub") {
                insert_new(&mut subjects, s);
            }
            if let Some(s) = f.name.get("ses") {
                insert_new(&mut sessions, s);
            }
            if f.name.extension == ".json" && f.readable() {
                if let Some(task) = ds.json_value(idx).get("TaskName").as_str() {
                    insert_new(&mut tasks, task);
                }
            }
            if let Some(dt) = &f.datatype {
                insert_new(&mut datatypes, dt);
                if let Some((modality, _)) = self
                    .schema
                    .modalities
                    .iter()
                    .find(|(_, dts)| dts.iter().any(|d| d == dt))
                {
                    modalities.add(modality);
                }
                if let Some(name) = secondary_modality(dt, f.name.get("rec")) {
                    secondary.add(name);
                }
            }
        }
        // As the reference counts them: each opaque folder at the root (`stimuli/`…,
        // not `sourcedata/`, `code/` or `derivatives/`, which it never walks) is one
        // file, the size of its content, when it holds any bytes.
        let mut opaque: std::collections::BTreeMap<&str, u64> = Default::default();
        for f in ds.files().iter().filter(|f| f.opaque && !f.ignored) {
            let top = f
                .path
                .trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or("");
            if !matches!(top, "" | "sourcedata" | "code" | "derivatives") {
                *opaque.entry(top).or_default() += f.size;
            }
        }
        for bytes in opaque.into_values().filter(|b| *b > 0) {
            total += 1;
            size += bytes;
        }
        let description = ds.dataset_value().get("dataset_description");
        Summary {
            subjects: subjects.into_iter().collect(),
            sessions: sessions.into_iter().collect(),
            subject_metadata: subject_metadata(ds),
            tasks: tasks.into_iter().collect(),
            modalities: modalities
                .ranked()
                .into_iter()
                .map(|m| pretty_modality(&m))
                .collect(),
            secondary_modalities: secondary.ranked(),
            data_types: datatypes.into_iter().collect(),
            total_files: total,
            size,
            data_processed: ds.dataset_type() == "derivative",
            pet: serde_json::Map::new(),
            schema_version: self
                .schema
                .schema_version
                .clone()
                .unwrap_or_else(|| self.schema.version.clone()),
            standard_version: self.schema.version.clone(),
            dataset_version: description
                .get(&self.schema.brand.version_key)
                .as_str()
                .map(str::to_string),
            version_key: self.schema.brand.version_key.clone(),
            rules_source: self.schema.source.as_ref().map(|p| p.display().to_string()),
            newest_rules: None,
        }
    }
}

/// The order the reference lists modalities of equal counts in.
const PRIMARY_ORDER: [&str; 6] = ["mri", "pet", "meg", "eeg", "ieeg", "microscopy"];
const SECONDARY_ORDER: [&str; 8] = [
    "MRI_Diffusion",
    "MRI_Structural",
    "MRI_Functional",
    "MRI_Perfusion",
    "PET_Static",
    "PET_Dynamic",
    "iEEG_ECoG",
    "iEEG_SEEG",
];

/// Counts by name: the names listed first (the reference's table, in its order), then
/// the others in first-seen order.
struct Counts {
    counts: Vec<(String, usize)>,
    listed: usize,
}

impl Counts {
    fn new(order: &[&str]) -> Counts {
        Counts {
            counts: order.iter().map(|n| (n.to_string(), 0)).collect(),
            listed: order.len(),
        }
    }

    fn add(&mut self, name: &str) {
        match self.counts.iter_mut().find(|(n, _)| n == name) {
            Some((_, c)) => *c += 1,
            None => self.counts.push((name.to_string(), 1)),
        }
    }

    /// The names counted, most first, in the order the reference gives them: it sorts
    /// with JavaScript's sort, `mri` first among equal counts, and a name missing from
    /// its table has a count of `NaN` there (neither before nor after any other), so
    /// the same sort, step for step, gives the same order.
    fn ranked(self) -> Vec<String> {
        let listed = self.listed;
        let mut entries: Vec<(String, Option<usize>)> = self
            .counts
            .into_iter()
            .enumerate()
            .filter(|(i, (_, c))| *i >= listed || *c > 0)
            .map(|(i, (n, c))| (n, (i < listed).then_some(c)))
            .collect();
        nidos_expr::jssort::sort_by(&mut entries, |a, b| match (a.1, b.1) {
            (Some(x), Some(y)) if x == y => {
                if b.0 == "mri" {
                    -1.0
                } else {
                    0.0
                }
            }
            (Some(x), Some(y)) => y as f64 - x as f64,
            _ => f64::NAN,
        });
        entries.into_iter().map(|(n, _)| n).collect()
    }
}

/// The reference's spelling of a modality.
fn pretty_modality(m: &str) -> String {
    match m {
        "mri" => "MRI",
        "pet" => "PET",
        "meg" => "MEG",
        "eeg" => "EEG",
        "ieeg" => "iEEG",
        "micro" => "Microscopy",
        other => other,
    }
    .to_string()
}

/// The secondary modality a file of `datatype` (and `rec` entity) counts for.
fn secondary_modality(datatype: &str, rec: Option<&str>) -> Option<&'static str> {
    match (datatype, rec) {
        ("dwi", _) => Some("MRI_Diffusion"),
        ("anat", _) => Some("MRI_Structural"),
        ("func", _) => Some("MRI_Functional"),
        ("perf", _) => Some("MRI_Perfusion"),
        ("pet", Some("acstat" | "nacstat")) => Some("PET_Static"),
        ("pet", Some("acdyn" | "nacdyn")) => Some("PET_Dynamic"),
        _ => None,
    }
}

/// `participantId` (without `sub-`), `age` (a number, `89+`, or null), `sex` and
/// `group` of each row of `/participants.tsv`, the columns it has; none without a
/// `participant_id` column.
fn subject_metadata(ds: &Dataset) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let Some(file) = ds.find("/participants.tsv").filter(|f| f.readable()) else {
        return Vec::new();
    };
    let Ok(bytes) = ds.read_file(&file.path) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    // Read as text, as the reference reads it: a byte-order mark is not content.
    let mut rows = text
        .trim_start_matches('\u{feff}')
        .split('\n')
        .map(|r| r.strip_suffix('\r').unwrap_or(r))
        .filter(|r| !r.is_empty());
    let Some(header) = rows.next() else {
        return Vec::new();
    };
    let header: Vec<&str> = header.split('\t').collect();
    let keys: Vec<(&str, usize)> = [
        ("participantId", "participant_id"),
        ("age", "age"),
        ("sex", "sex"),
        ("group", "group"),
    ]
    .into_iter()
    .filter_map(|(key, column)| header.iter().position(|h| *h == column).map(|i| (key, i)))
    .collect();
    if !keys.iter().any(|(k, _)| *k == "participantId") {
        return Vec::new();
    }
    rows.map(|row| {
        let cells: Vec<&str> = row.split('\t').collect();
        keys.iter()
            .filter_map(|&(key, i)| {
                let cell = cells.get(i)?;
                let value = match key {
                    "participantId" => {
                        serde_json::Value::from(cell.strip_prefix("sub-").unwrap_or(cell))
                    }
                    "age" if *cell == "89+" => serde_json::Value::from("89+"),
                    "age" => leading_number(cell),
                    _ => serde_json::Value::from(*cell),
                };
                Some((key.to_string(), value))
            })
            .collect()
    })
    .collect()
}

/// The number a cell starts with (`"25 years"` is 25), as an integer when whole; null
/// when it starts with none.
fn leading_number(cell: &str) -> serde_json::Value {
    let t = cell.trim_start();
    let n = (1..=t.len())
        .rev()
        .filter(|&i| t.is_char_boundary(i))
        .find_map(|i| t[..i].parse::<f64>().ok().filter(|v| v.is_finite()));
    match n {
        Some(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => serde_json::Value::from(v as i64),
        Some(v) => serde_json::Value::from(v),
        None => serde_json::Value::Null,
    }
}

/// Adds `text` to `set`, allocating only when it is new (most files repeat a subject,
/// session and datatype already seen).
fn insert_new(set: &mut BTreeSet<String>, text: &str) {
    if !set.contains(text) {
        set.insert(text.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_the_reference_reads_them() {
        assert_eq!(leading_number("25"), serde_json::json!(25));
        assert_eq!(leading_number("25.5 years"), serde_json::json!(25.5));
        assert_eq!(leading_number("n/a"), serde_json::Value::Null);
        assert_eq!(leading_number("inf"), serde_json::Value::Null);
    }

    /// Orders the reference gives (its sort run on the same counts in its engine).
    #[test]
    fn modalities_rank_as_the_reference_ranks_them() {
        for (seen, want) in [
            (
                &["eeg", "eeg", "mri", "nirs", "mri", "meg"][..],
                &["eeg", "mri", "meg", "nirs"][..],
            ),
            (&["motion", "motion", "motion", "eeg"], &["eeg", "motion"]),
            (&["mrs", "mrs", "mri"], &["mri", "mrs"]),
            (&["mri", "pet", "pet"], &["pet", "mri"]),
        ] {
            let mut c = Counts::new(&PRIMARY_ORDER);
            for m in seen {
                c.add(m);
            }
            assert_eq!(c.ranked(), want, "{seen:?}");
        }
    }
}
