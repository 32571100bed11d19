//! The result of a validation run, and its JSON form (the reference validator's shape).

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value as Json;

use crate::issue::{Issue, Severity};

/// Counts and lists describing the dataset, printed under the issues.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub subjects: Vec<String>,
    pub sessions: Vec<String>,
    pub tasks: Vec<String>,
    pub modalities: Vec<String>,
    pub data_types: Vec<String>,
    pub total_files: usize,
    /// Bytes, summed over validated files.
    pub size: u64,
    /// The standard version whose rules were applied.
    pub schema_version: String,
    /// The version the dataset declares, if any.
    pub dataset_version: Option<String>,
    /// The version key of the brand (`StdVersion`/`BIDSVersion`).
    pub version_key: String,
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
        self.issues.retain(|i| i.severity != Severity::Warning);
        let used: std::collections::HashSet<&str> =
            self.issues.iter().map(|i| i.code.as_str()).collect();
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
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct IssuesJson<'a> {
    issues: &'a [Issue],
    code_messages: &'a IndexMap<String, String>,
}
