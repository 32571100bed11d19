//! The issue model: what a validation run reports.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

/// How serious an issue is. `Ignore` issues are kept in reports (so a config that
/// silences a code is visible) but never fail a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Ignore,
}

impl Severity {
    /// Maps a schema rule level to a severity: `required`/`error` are errors,
    /// everything that is advice (`recommended`, `warning`, `deprecated`…) warns.
    pub fn from_level(level: &str) -> Option<Severity> {
        match level {
            "error" | "required" => Some(Severity::Error),
            "warning" | "recommended" | "deprecated" => Some(Severity::Warning),
            "ignore" => Some(Severity::Ignore),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Ignore => "ignore",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding about one location of a dataset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    /// The standard's issue code, e.g. `SIDECAR_KEY_REQUIRED`.
    pub code: String,
    /// A refinement of the code (often the metadata key or column concerned); empty when none.
    #[serde(default)]
    pub sub_code: String,
    pub severity: Severity,
    /// Dataset-relative path with a leading `/` (or `/` for the dataset as a whole).
    pub location: String,
    /// A message specific to this occurrence (the code's general message is in `codeMessages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_message: Option<String>,
    /// The schema path of the rule that raised it, e.g. `rules.sidecars.mri.MRIFieldmap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// 1-based line within the file, for table and JSON issues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Other files the issue concerns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub affects: Vec<String>,
}

impl Issue {
    pub fn new(code: impl Into<String>, severity: Severity, location: impl Into<String>) -> Issue {
        Issue {
            code: code.into(),
            sub_code: String::new(),
            severity,
            location: location.into(),
            issue_message: None,
            rule: None,
            line: None,
            affects: Vec::new(),
        }
    }

    #[allow(clippy::should_implement_trait)]
    pub fn sub(mut self, sub_code: impl Into<String>) -> Issue {
        self.sub_code = sub_code.into();
        self
    }

    pub fn message(mut self, message: impl Into<String>) -> Issue {
        self.issue_message = Some(message.into());
        self
    }

    pub fn rule(mut self, rule: impl Into<String>) -> Issue {
        self.rule = Some(rule.into());
        self
    }

    pub fn line(mut self, line: usize) -> Issue {
        self.line = Some(line);
        self
    }

    /// The deterministic report order: code, location, sub-code, line, then the rest.
    pub fn sort_key_cmp(&self, other: &Issue) -> Ordering {
        (
            &self.code,
            &self.location,
            &self.sub_code,
            self.line,
            self.severity,
        )
            .cmp(&(
                &other.code,
                &other.location,
                &other.sub_code,
                other.line,
                other.severity,
            ))
            .then_with(|| self.issue_message.cmp(&other.issue_message))
            .then_with(|| self.rule.cmp(&other.rule))
    }
}

/// Sorts issues into report order and drops exact duplicates.
pub fn normalize(issues: &mut Vec<Issue>) {
    issues.sort_by(Issue::sort_key_cmp);
    issues.dedup();
}
