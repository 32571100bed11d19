//! The result of a validation run (its JSON form: [`crate::emit::json`]).

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value as Json;

use crate::issue::{Issue, Severity};

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
    /// When the rules of an older version than the newest applied (the declared one):
    /// the newest version and how many issues its rules report that these did not. The
    /// text report says so, with the flag that shows them. Not in the JSON form.
    #[serde(skip)]
    pub newest_rules: Option<NewestRules>,
}

/// What the newest rules would add to a run pinned to an older version.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NewestRules {
    /// The newest version.
    pub version: String,
    /// The issues its rules report that the applied rules did not (HED left out: it
    /// does not depend on the version).
    pub more: usize,
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

pub(crate) fn fallback<'m>(messages: &'m FieldMessages, issue: &Issue) -> Option<&'m str> {
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
}
