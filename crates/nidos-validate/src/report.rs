//! The result of a validation run, and its JSON form (the reference validator's shape).

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value as Json;

use crate::issue::{Issue, IssueView, Severity};

/// Counts and lists describing the dataset, printed under the issues. The JSON names
/// are the reference validator's; `standardVersion`, `datasetVersion` and `versionKey`
/// are nidos's own.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub sessions: Vec<String>,
    pub subjects: Vec<String>,
    /// `participantId`, `age`, `sex`, `group` of each row of `participants.tsv` (the
    /// columns it has).
    pub subject_metadata: Vec<serde_json::Map<String, Json>>,
    /// The `TaskName` values of the dataset's JSON files.
    pub tasks: Vec<String>,
    /// Modalities of the data files, most files first, spelled as the reference spells
    /// them (`MRI`, `EEG`, `iEEG`…).
    pub modalities: Vec<String>,
    /// `MRI_Structural`, `MRI_Functional`, `PET_Static`…, most files first.
    pub secondary_modalities: Vec<String>,
    pub total_files: usize,
    /// Bytes, summed over validated files.
    pub size: u64,
    /// The dataset is a derivative dataset.
    pub data_processed: bool,
    /// Always an empty object (the reference's field, which it never fills).
    pub pet: serde_json::Map<String, Json>,
    pub data_types: Vec<String>,
    /// The rule set's own version (the schema's `schema_version`; its standard version
    /// when it has none).
    pub schema_version: String,
    /// The standard version whose rules were applied.
    pub standard_version: String,
    /// The version the dataset declares, if any.
    pub dataset_version: Option<String>,
    /// The version key of the brand (`StdVersion`/`BIDSVersion`).
    pub version_key: String,
    /// Where the rules were read from when not the bundled ones (a YAML rule tree or a
    /// compiled JSON): the text report names it. Not in the JSON form.
    #[serde(skip)]
    pub rules_source: Option<String>,
}

/// Everything a run found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Sorted, deduplicated.
    pub issues: Vec<Issue>,
    /// The general message of each code that occurs.
    pub code_messages: IndexMap<String, String>,
    pub summary: Summary,
    /// The dataset's `DatasetType` (declared or implied), which chose the layout and
    /// the file rules that applied.
    pub dataset_type: String,
    /// Warnings left out of the report (`--ignore-warnings`).
    pub hidden_warnings: usize,
    /// The `issueMessage` of issues that have none of their own, by (code, subCode):
    /// `Field description: …` for a missing key, as the reference words it.
    pub field_messages: FieldMessages,
}

/// Fallback messages by (code, sub-code). Looked up for every issue without a message of
/// its own while the report is written, hence foldhash rather than SipHash; the order is
/// insertion order.
pub type FieldMessages = IndexMap<(String, String), String, foldhash::fast::RandomState>;

impl Report {
    /// The message the report gives `issue` when it has none of its own.
    pub fn fallback_message(&self, issue: &Issue) -> Option<&str> {
        fallback(&self.field_messages, issue)
    }
}

fn fallback<'m>(messages: &'m FieldMessages, issue: &Issue) -> Option<&'m str> {
    if messages.is_empty() || issue.issue_message().is_some() {
        return None;
    }
    messages
        .get(&CodePair(issue.code(), issue.sub_code()))
        .map(String::as_str)
}

/// A (code, sub-code) key borrowed from an issue, to look up a `(String, String)` key
/// without building one. Hashes as the tuple of its texts, as the owned key does.
#[derive(Hash)]
struct CodePair<'a>(&'a str, &'a str);

impl indexmap::Equivalent<(String, String)> for CodePair<'_> {
    fn equivalent(&self, key: &(String, String)) -> bool {
        self.0 == key.0 && self.1 == key.1
    }
}

impl Report {
    pub fn count(&self, severity: Severity) -> usize {
        self.issues
            .iter()
            .filter(|i| i.severity == severity)
            .count()
    }

    pub fn has_errors(&self) -> bool {
        self.issues.iter().any(|i| i.severity == Severity::Error)
    }

    /// Drops warnings (`--ignore-warnings`).
    pub fn drop_warnings(&mut self) {
        let before = self.issues.len();
        self.issues.retain(|i| i.severity != Severity::Warning);
        self.hidden_warnings += before - self.issues.len();
        let used: std::collections::HashSet<&str> =
            self.issues.iter().map(|i| i.code().as_str()).collect();
        self.code_messages.retain(|c, _| used.contains(c.as_str()));
    }

    /// The JSON report: `{"issues": {"issues": [...], "codeMessages": {...}}, "summary": {...}}`.
    pub fn to_json(&self) -> Json {
        serde_json::to_value(self.json()).unwrap_or(Json::Null)
    }

    /// The JSON report as a serializable view (stream it with `serde_json::to_writer`
    /// instead of building a [`Json`] tree); add derivative datasets with
    /// [`ReportJson::derivative`].
    pub fn json(&self) -> ReportJson<'_> {
        ReportJson {
            issues: IssuesJson {
                issues: &self.issues,
                code_messages: &self.code_messages,
                field_messages: &self.field_messages,
            },
            summary: &self.summary,
            derivatives_summary: IndexMap::new(),
        }
    }
}

/// The serializable shape of a report (docs/report.schema.json).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportJson<'a> {
    issues: IssuesJson<'a>,
    summary: &'a Summary,
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    derivatives_summary: IndexMap<String, ReportJson<'a>>,
}

impl<'a> ReportJson<'a> {
    /// Adds the report of `derivatives/<name>` under `derivativesSummary`.
    pub fn derivative(mut self, name: &str, report: &'a Report) -> ReportJson<'a> {
        self.derivatives_summary
            .insert(name.to_string(), report.json());
        self
    }

    /// Writes the compact JSON text, the same bytes as `serde_json::to_writer` of this
    /// view, with the issues rendered on the worker threads (a large dataset's report
    /// holds hundreds of thousands). A window of chunks is rendered at a time, so little
    /// of the text is held in memory.
    pub fn write_compact(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        use rayon::prelude::*;
        // Issues rendered per chunk: a chunk's text is about 300 KB.
        const CHUNK: usize = 1024;
        // Two chunks per worker at a time, each into a buffer of its own that the next
        // window reuses: the text waiting to be written stays small, and its memory is
        // touched once (fresh buffers for each chunk would have the allocator map, and
        // the kernel zero, new pages for every megabyte of the report). With one chunk
        // per worker the workers waited for each other at every window: on the 32k
        // benchmark's 374,000 issues the writing took 28 ms, with two 24 ms (four: no
        // faster, 5 MB more).
        let workers = rayon::current_num_threads().max(1);
        let window = CHUNK * workers * 2;
        let mut buffers: Vec<Vec<u8>> = Vec::new();
        out.write_all(br#"{"issues":{"issues":["#)?;
        for (w, window) in self.issues.issues.chunks(window).enumerate() {
            let chunks = window.len().div_ceil(CHUNK);
            if buffers.len() < chunks {
                buffers.resize_with(chunks, Vec::new);
            }
            buffers
                .par_iter_mut()
                .zip(window.par_chunks(CHUNK))
                .for_each(|(buf, chunk)| self.render(chunk, buf));
            for (i, part) in buffers.iter().take(chunks).enumerate() {
                if w > 0 || i > 0 {
                    out.write_all(b",")?;
                }
                out.write_all(part)?;
            }
        }
        out.write_all(br#"],"codeMessages":"#)?;
        serde_json::to_writer(&mut *out, self.issues.code_messages)?;
        out.write_all(br#"},"summary":"#)?;
        serde_json::to_writer(&mut *out, self.summary)?;
        if !self.derivatives_summary.is_empty() {
            out.write_all(br#","derivativesSummary":{"#)?;
            for (i, (name, report)) in self.derivatives_summary.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, name)?;
                out.write_all(b":")?;
                report.write_compact(out)?;
            }
            out.write_all(b"}")?;
        }
        out.write_all(b"}")
    }

    /// Writes the issues of `chunk` into `buf` (emptied first), separated by commas.
    fn render(&self, chunk: &[Issue], buf: &mut Vec<u8>) {
        let messages = self.issues.field_messages;
        buf.clear();
        // Room for the whole chunk, so the buffer is not copied as it grows: each issue's
        // texts and its fixed parts (a few escapes may still overflow it).
        let room: usize = chunk
            .iter()
            .map(|i| {
                160 + i.code().len()
                    + i.sub_code().len()
                    + i.location.len()
                    + i.issue_message().map_or(0, str::len)
                    + i.rule_id().map_or(0, |r| r.len())
                    + i.affects().iter().map(|a| a.len() + 3).sum::<usize>()
            })
            .sum::<usize>()
            .max(chunk.len() * 192);
        buf.reserve(room);
        let mut recent = crate::json_text::Recent::default();
        // The fallback messages by the issues' shared (code, sub-code, rule) triple: a
        // chunk has few, and sorted issues of one code alternate between their sub-codes,
        // so most issues find theirs by an address instead of hashing two texts.
        let mut known: crate::issue::FastMap<usize, Option<&str>> = Default::default();
        for (i, issue) in chunk.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            let fallback = if messages.is_empty() || issue.issue_message().is_some() {
                None
            } else {
                *known
                    .entry(issue.kind_id())
                    .or_insert_with(|| fallback(messages, issue))
            };
            crate::json_text::push_issue_after(buf, issue, fallback, &mut recent);
        }
    }
}

struct IssuesJson<'a> {
    issues: &'a [Issue],
    code_messages: &'a IndexMap<String, String>,
    field_messages: &'a FieldMessages,
}

impl Serialize for IssuesJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("IssuesJson", 2)?;
        st.serialize_field(
            "issues",
            &IssueList {
                issues: self.issues,
                messages: self.field_messages,
            },
        )?;
        st.serialize_field("codeMessages", self.code_messages)?;
        st.end()
    }
}

struct IssueList<'a> {
    issues: &'a [Issue],
    messages: &'a FieldMessages,
}

impl Serialize for IssueList<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.issues.iter().map(|issue| IssueView {
            issue,
            fallback_message: fallback(self.messages, issue),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(n: usize, tag: &str) -> Report {
        let issues = (0..n)
            .map(|i| {
                let issue = Issue::new(
                    "SIDECAR_KEY_RECOMMENDED",
                    Severity::Warning,
                    format!("/f{i}"),
                )
                .sub(tag);
                match i % 3 {
                    0 => issue.message(format!("line \"{i}\"\n")),
                    1 => issue.line(i).rule("rules.x"),
                    _ => issue,
                }
            })
            .collect();
        Report {
            issues,
            code_messages: [(
                "SIDECAR_KEY_RECOMMENDED".to_string(),
                "a \"key\"".to_string(),
            )]
            .into_iter()
            .collect(),
            summary: Summary {
                subjects: vec!["01".into()],
                ..Summary::default()
            },
            dataset_type: "raw".into(),
            hidden_warnings: 0,
            field_messages: [(
                ("SIDECAR_KEY_RECOMMENDED".to_string(), tag.to_string()),
                "Field description: a \"tag\"\n".to_string(),
            )]
            .into_iter()
            .collect(),
        }
    }

    /// The parallel writer gives serde's bytes: no issue, one, at and across chunk and
    /// window edges, with and without derivative datasets.
    #[test]
    fn compact_json_is_serde_json() {
        let derivative = report(5000, "d");
        let empty = Report::default();
        for n in [0, 1, 4095, 4096, 4097, 40_000] {
            let main = report(n, "m");
            for with_derivatives in [false, true] {
                let mut view = main.json();
                if with_derivatives {
                    view = view
                        .derivative("fmriprep", &derivative)
                        .derivative("empty \"one\"", &empty);
                }
                let mut ours = Vec::new();
                view.write_compact(&mut ours).unwrap();
                let theirs = serde_json::to_vec(&view).unwrap();
                // The fallback message is found (the look-up by borrowed key hashes as
                // the owned key).
                if n > 2 {
                    let text = String::from_utf8_lossy(&ours);
                    assert!(text.contains(r#""issueMessage":"Field description: a \"tag\"\n""#));
                }
                assert!(
                    ours == theirs,
                    "{n} issues, derivatives: {with_derivatives}"
                );
            }
        }
    }
}
