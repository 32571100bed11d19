//! Located errors and warnings produced while loading or checking a schema.

use std::fmt;
use std::path::PathBuf;

/// What went wrong, coarsely: lets callers and tests match on the class of problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ErrorKind {
    /// A file or directory could not be read.
    Io,
    /// A YAML file is not valid YAML.
    Yaml,
    /// A JSON file is not valid JSON.
    Json,
    /// A key the schema format does not know.
    UnknownKey,
    /// A requirement level or severity that is not one of the known words.
    BadLevel,
    /// One issue code used with two different messages.
    DuplicateCode,
    /// A selector or check expression that does not parse.
    Expression,
    /// A format pattern that is not a valid ECMAScript regular expression.
    Regex,
    /// A `$ref` that (indirectly) refers to itself.
    Cycle,
    /// A `$ref` whose target does not exist.
    DanglingRef,
    /// A value of the wrong shape (a string where a list is expected, …).
    Structure,
    /// Version information missing or malformed.
    Version,
}

impl ErrorKind {
    /// A short stable name, used in `nidos schema check` output.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Io => "io",
            ErrorKind::Yaml => "yaml",
            ErrorKind::Json => "json",
            ErrorKind::UnknownKey => "unknown-key",
            ErrorKind::BadLevel => "bad-level",
            ErrorKind::DuplicateCode => "duplicate-code",
            ErrorKind::Expression => "expression",
            ErrorKind::Regex => "regex",
            ErrorKind::Cycle => "ref-cycle",
            ErrorKind::DanglingRef => "dangling-ref",
            ErrorKind::Structure => "structure",
            ErrorKind::Version => "version",
        }
    }
}

/// One problem in a schema, with where it is: the file (for YAML trees; `None` for a
/// compiled JSON or data built in memory) and the dotted key path inside the schema,
/// e.g. `rules.checks.asl.ASLContextConsistent.checks[0]`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SchemaError {
    pub kind: ErrorKind,
    pub file: Option<PathBuf>,
    pub key: String,
    pub message: String,
}

impl SchemaError {
    pub fn new(kind: ErrorKind, key: impl Into<String>, message: impl Into<String>) -> Self {
        SchemaError {
            kind,
            file: None,
            key: key.into(),
            message: message.into(),
        }
    }

    pub fn in_file(mut self, file: Option<PathBuf>) -> Self {
        if self.file.is_none() {
            self.file = file;
        }
        self
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        write!(f, "{} ({})", self.message, self.kind.name())
    }
}

impl std::error::Error for SchemaError {}

/// Every error found while loading a schema: loading reports all problems at once.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SchemaErrors(pub Vec<SchemaError>);

impl SchemaErrors {
    pub fn single(e: SchemaError) -> Self {
        SchemaErrors(vec![e])
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn iter(&self) -> std::slice::Iter<'_, SchemaError> {
        self.0.iter()
    }
}

impl fmt::Display for SchemaErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.len() {
            0 => write!(f, "no schema errors"),
            1 => write!(f, "{}", self.0[0]),
            n => {
                write!(f, "{n} schema errors:")?;
                for e in &self.0 {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for SchemaErrors {}

impl From<SchemaError> for SchemaErrors {
    fn from(e: SchemaError) -> Self {
        SchemaErrors(vec![e])
    }
}

impl IntoIterator for SchemaErrors {
    type Item = SchemaError;
    type IntoIter = std::vec::IntoIter<SchemaError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// A problem that does not stop loading (an unknown function in an expression, an
/// unsupported version that was replaced by another, an upstream quirk…).
/// Same shape as [`SchemaError`]: `kind` says what class of problem it is.
pub type Warning = SchemaError;
