//! The validator configuration file: `{"ignore": [...], "warning": [...], "error": [...]}`.
//!
//! Each entry selects issues by `code`, optional `subCode` and optional `location`.
//! A location starting with `/` names one path exactly; any other location is a
//! gitignore-style glob over the path without its leading `/` (`sub-*/anat/*`,
//! `derivatives/**`). Groups apply in the order ignore, warning, error, so a later group
//! wins over an earlier one.

use globset::{Glob, GlobMatcher};
use serde::Deserialize;

use crate::issue::{Issue, Severity};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The text is not JSON (the error says where).
    #[error("config is not valid JSON: {0}")]
    Json(serde_json::Error),
    /// JSON of the wrong form: an unknown key (named), a missing `code`, a wrong type.
    #[error("config does not have the expected form: {0}")]
    Shape(serde_json::Error),
    #[error("config entry {group}[{index}]: bad location glob {glob:?}: {cause}")]
    Glob {
        group: &'static str,
        index: usize,
        glob: String,
        cause: globset::Error,
    },
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    ignore: Vec<RawSelector>,
    #[serde(default)]
    warning: Vec<RawSelector>,
    #[serde(default)]
    error: Vec<RawSelector>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawSelector {
    code: String,
    #[serde(default)]
    sub_code: Option<String>,
    #[serde(default)]
    location: Option<String>,
}

#[derive(Clone, Debug)]
enum Location {
    Exact(String),
    Glob(GlobMatcher),
}

impl Location {
    fn matches(&self, location: &str) -> bool {
        match self {
            Location::Exact(p) => p == location,
            Location::Glob(g) => location
                .strip_prefix('/')
                .is_some_and(|rel| !rel.is_empty() && !rel.ends_with('/') && g.is_match(rel)),
        }
    }
}

#[derive(Clone, Debug)]
struct Selector {
    code: String,
    sub_code: Option<String>,
    location: Option<Location>,
}

impl Selector {
    fn matches(&self, issue: &Issue) -> bool {
        self.code == *issue.code()
            && self
                .sub_code
                .as_ref()
                .is_none_or(|s| *s == *issue.sub_code())
            && self
                .location
                .as_ref()
                .is_none_or(|l| l.matches(&issue.location))
    }
}

/// A parsed configuration.
#[derive(Clone, Debug, Default)]
pub struct Config {
    groups: Vec<(Severity, Vec<Selector>)>,
}

impl Config {
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = serde_json::from_str(text).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => ConfigError::Shape(e),
            _ => ConfigError::Json(e),
        })?;
        let mut groups = Vec::new();
        for (name, severity, entries) in [
            ("ignore", Severity::Ignore, raw.ignore),
            ("warning", Severity::Warning, raw.warning),
            ("error", Severity::Error, raw.error),
        ] {
            let mut selectors = Vec::with_capacity(entries.len());
            for (index, e) in entries.into_iter().enumerate() {
                let location = match e.location {
                    Some(exact) if exact.starts_with('/') => Some(Location::Exact(exact)),
                    Some(glob) => Some(Location::Glob(
                        Glob::new(&glob)
                            .map_err(|cause| ConfigError::Glob {
                                group: name,
                                index,
                                glob: glob.clone(),
                                cause,
                            })?
                            .compile_matcher(),
                    )),
                    None => None,
                };
                selectors.push(Selector {
                    code: e.code,
                    sub_code: e.sub_code,
                    location,
                });
            }
            groups.push((severity, selectors));
        }
        Ok(Config { groups })
    }

    /// The severity an issue gets under this configuration.
    pub fn severity_of(&self, issue: &Issue) -> Severity {
        let mut severity = issue.severity;
        for (group_severity, selectors) in &self.groups {
            if selectors.iter().any(|s| s.matches(issue)) {
                severity = *group_severity;
            }
        }
        severity
    }

    /// Rewrites the severities of a list of issues.
    pub fn apply(&self, issues: &mut [Issue]) {
        if self.groups.iter().all(|(_, s)| s.is_empty()) {
            return;
        }
        for issue in issues {
            issue.severity = self.severity_of(issue);
        }
    }
}
