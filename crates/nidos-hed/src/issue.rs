//! A HED issue: the HED error code, a message in our own words, and where it happened.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HedIssue {
    /// The HED error code (`TAG_INVALID`, `SIDECAR_KEY_MISSING`, …).
    pub code: &'static str,
    /// A warning rather than an error.
    pub warning: bool,
    pub message: String,
    /// Character offset in the HED string, when the issue is inside one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
}

impl HedIssue {
    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        HedIssue {
            code,
            warning: false,
            message: message.into(),
            offset: None,
        }
    }
    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        HedIssue {
            code,
            warning: true,
            message: message.into(),
            offset: None,
        }
    }
    pub fn at(mut self, offset: usize) -> Self {
        self.offset = Some(offset);
        self
    }
}
