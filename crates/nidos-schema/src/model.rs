//! Typed views of a resolved schema. Every view is built once at load from
//! [`crate::Schema::raw`]; each rule carries `id`, its dotted path in the schema
//! (e.g. `rules.sidecars.func.MRIFuncRepetitionTime`).

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The brand of a schema: the names a dataset of this standard uses.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Brand {
    /// The name shown in messages (`Std`).
    pub name: String,
    /// Field of `dataset_description.json` that holds the version: e.g. `"StdVersion"`.
    pub version_key: String,
    /// URI scheme without the colon: e.g. `"std"`.
    pub uri_scheme: String,
    /// Name of the ignore file at the dataset root: e.g. `".stdignore"`.
    pub ignore_file: String,
    /// Where the brand's compiled schemas are published: a URL in which `{tag}` stands
    /// for a release tag (`v1.9.0`, `stable`, `latest`). `None`: not published.
    pub published_schema: Option<String>,
}

/// A requirement level of a file, field, column or entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Required,
    Recommended,
    Optional,
    Deprecated,
    Prohibited,
}

impl Level {
    /// Parses a level word. Upstream schemas sometimes write prose after the word
    /// (`"recommended, but required for …"`) or capitalise it (`"DEPRECATED"`): the
    /// first word decides.
    pub fn parse(s: &str) -> Option<Level> {
        let word = s
            .trim()
            .split(|c: char| c == ',' || c.is_whitespace())
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        match word.as_str() {
            "required" => Some(Level::Required),
            "recommended" => Some(Level::Recommended),
            "optional" => Some(Level::Optional),
            "deprecated" => Some(Level::Deprecated),
            "prohibited" => Some(Level::Prohibited),
            _ => None,
        }
    }

    /// True when the string is exactly one of the level words (what a YAML tree must use).
    pub fn is_exact(s: &str) -> bool {
        matches!(
            s,
            "required" | "recommended" | "optional" | "deprecated" | "prohibited"
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Required => "required",
            Level::Recommended => "recommended",
            Level::Optional => "optional",
            Level::Deprecated => "deprecated",
            Level::Prohibited => "prohibited",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Severity of an issue a rule raises, and of a reported issue. `Ignore` issues stay in
/// reports (so a config that silences a code is visible) but never fail a run.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Ignore,
}

impl Severity {
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
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

/// A selector or check expression: its source text and the parsed form.
///
/// `parsed` is `None` only when the schema was loaded with
/// [`crate::LoadOptions::tolerate_expression_errors`]; a default load fails instead.
#[derive(Clone)]
pub struct Expression {
    pub source: String,
    pub parsed: Option<Arc<nidos_expr::Expr>>,
}

impl fmt::Debug for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Expression({:?}{})",
            self.source,
            if self.parsed.is_some() {
                ""
            } else {
                ", unparsed"
            }
        )
    }
}

impl PartialEq for Expression {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// Readable formats (the JSON of `nidos schema show`) get the source text alone; the
/// compact binary form of [`crate::precompiled`] gets the parsed tree too, so reading
/// it back parses nothing.
impl Serialize for Expression {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&self.source)
        } else {
            (&self.source, self.parsed.as_deref()).serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for Expression {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            let source = String::deserialize(d)?;
            let parsed = nidos_expr::parse(&source).map_err(serde::de::Error::custom)?;
            Ok(Expression {
                source,
                parsed: Some(Arc::new(parsed)),
            })
        } else {
            let (source, parsed) = <(String, Option<nidos_expr::Expr>)>::deserialize(d)?;
            Ok(Expression {
                source,
                parsed: parsed.map(Arc::new),
            })
        }
    }
}

/// An entity (`objects.entities.*`), in the canonical order of `rules.entities`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    /// Long name, the key in `objects.entities` and in the context: `"subject"`.
    pub name: String,
    /// Short name used in file names: `"sub"`.
    pub key: String,
    pub display_name: String,
    /// What the entity means, in one sentence (empty when the schema gives none).
    pub description: String,
    /// Name of the value format (`"label"`, `"index"`).
    pub format: String,
    /// Allowed values, when restricted.
    pub r#enum: Option<Vec<String>>,
    /// Position in the canonical entity order (0-based).
    pub order: usize,
}

/// A named term: a datatype, suffix, extension or modality.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Term {
    /// The key in its `objects.*` table (e.g. `nii_gz`, `TwoPE`).
    pub key: String,
    /// What appears in data: `".nii.gz"`, `"2PE"`, `"anat"`.
    pub value: String,
    pub display_name: String,
    /// What the term means, in one sentence (empty when the schema gives none).
    pub description: String,
}

/// A value format (`objects.formats.*`) with its compiled, anchored pattern.
/// Serialized as its name and pattern; the pattern is compiled again when read back.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(into = "FormatForm", try_from = "FormatForm")]
pub struct Format {
    pub name: String,
    /// The ECMAScript pattern as written in the schema (unanchored).
    pub pattern: String,
    /// `^(?:pattern)$`, compiled.
    pub matcher: nidos_expr::full_match::FullMatcher,
}

/// What a serialized [`Format`] holds.
#[derive(Serialize, Deserialize)]
struct FormatForm {
    name: String,
    pattern: String,
}

impl From<Format> for FormatForm {
    fn from(f: Format) -> FormatForm {
        FormatForm {
            name: f.name,
            pattern: f.pattern,
        }
    }
}

impl TryFrom<FormatForm> for Format {
    type Error = String;
    fn try_from(f: FormatForm) -> Result<Format, String> {
        let matcher = nidos_expr::full_match::FullMatcher::new(&f.pattern)?;
        Ok(Format {
            name: f.name,
            pattern: f.pattern,
            matcher,
        })
    }
}

impl Format {
    /// True when the whole of `s` matches the format.
    pub fn is_match(&self, s: &str) -> bool {
        self.matcher.matches(s)
    }
}

/// A JSON-schema-like definition of a metadata field or a column (`objects.metadata.*`,
/// `objects.columns.*`), kept as JSON with a few helpers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    /// The key in its table (`name__segmentations`).
    pub key: String,
    /// The field or column name as it appears in data (`name`).
    pub name: String,
    /// The whole definition (in the precompiled rules, parsed on first use: a run reads
    /// the definitions of the fields and columns it meets, a small part of them).
    pub def: crate::raw::Raw,
    /// Values of a column that the standard deprecates (`deprecated_values`; columns only).
    #[serde(default, skip_serializing_if = "crate::compact::skip_empty")]
    pub deprecated_values: Vec<DeprecatedValue>,
}

/// A column value the standard deprecates (an entry of a column definition's
/// `deprecated_values`): a cell holding it that the column's constraint rejects raises
/// `issue`, once per column of a table, instead of a type error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeprecatedValue {
    pub value: String,
    pub issue: IssueSpec,
}

/// A condition that gives a field another level (`level_if` of a field requirement):
/// when the file's sidecar holds the string `is` at `key`, the field is at `level`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelCondition {
    pub key: String,
    pub is: String,
    pub level: Level,
}

impl Definition {
    /// The definition's one-sentence `description`, if it has one.
    pub fn description(&self) -> Option<&str> {
        self.def.get("description").and_then(Value::as_str)
    }
    /// The `type` of the definition, if it has a single one.
    pub fn json_type(&self) -> Option<&str> {
        self.def.get("type").and_then(Value::as_str)
    }
    /// The `enum` values, if the definition restricts them.
    pub fn enum_values(&self) -> Option<&Vec<Value>> {
        self.def.get("enum").and_then(Value::as_array)
    }
    /// The named format (`objects.formats`), if any.
    pub fn format(&self) -> Option<&str> {
        self.def.get("format").and_then(Value::as_str)
    }
    /// The ECMAScript `pattern`, if any.
    pub fn pattern(&self) -> Option<&str> {
        self.def.get("pattern").and_then(Value::as_str)
    }
    pub fn display_name(&self) -> Option<&str> {
        self.def.get("display_name").and_then(Value::as_str)
    }
}

/// An entity's requirement in a file rule: `required`, `optional`, or `{level, enum}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EntityRule {
    pub level: Level,
    pub r#enum: Option<Vec<String>>,
}

/// A file-name rule (`rules.files.{common,raw,deriv}.<group>.<name>`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileRule {
    /// Dotted path, e.g. `rules.files.raw.func.func`.
    pub id: String,
    /// `common`, `raw` or `deriv`.
    pub category: String,
    /// e.g. `func`, `core`, `tables`.
    pub group: String,
    pub name: String,
    pub selectors: Vec<Expression>,
    pub suffixes: Vec<String>,
    pub extensions: Vec<String>,
    pub datatypes: Vec<String>,
    pub entities: IndexMap<String, EntityRule>,
    /// Level of a core file (`required` README…); `None` for entity-based rules.
    pub level: Option<Level>,
    /// Exact dataset-relative path of a core file (`dataset_description.json`).
    pub path: Option<String>,
    /// Stem of a core file that may take several extensions (`README`).
    pub stem: Option<String>,
}

/// An issue a rule raises in place of the default one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IssueSpec {
    pub code: String,
    pub message: String,
    pub level: Option<Severity>,
}

/// A field requirement in a sidecar or JSON rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldReq {
    pub level: Level,
    /// The level text as written (may carry prose in old upstream schemas).
    pub level_raw: String,
    /// Prose about the level; never read by the validator (see `level_if`).
    pub level_addendum: Option<String>,
    /// The level the field takes under a condition (`level_if`; for an upstream
    /// compiled schema, read at load from `level_addendum`).
    #[serde(default, skip_serializing_if = "crate::compact::skip_none")]
    pub level_if: Option<LevelCondition>,
    pub description_addendum: Option<String>,
    pub issue: Option<IssueSpec>,
    /// How to repair the issue this field raises, if it can be.
    pub fix: Option<Fix>,
}

/// A sidecar rule (`rules.sidecars.<group>.<name>`) or JSON-file rule
/// (`rules.json.<group>.<name>`, `rules.dataset_metadata.<name>`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldRule {
    pub id: String,
    pub selectors: Vec<Expression>,
    pub fields: IndexMap<String, FieldReq>,
}

/// A column requirement in a tabular rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnReq {
    /// Key in `objects.columns` (`name__segmentations`).
    pub key: String,
    /// Column header as it appears in the file (`name`).
    pub name: String,
    pub level: Level,
    pub level_raw: String,
    pub level_addendum: Option<String>,
    pub description_addendum: Option<String>,
    /// An inline definition overriding `objects.columns.<key>`.
    #[serde(with = "crate::compact::json_text")]
    pub definition: Option<Value>,
}

/// A tabular-data rule (`rules.tabular_data.<group>.<name>`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TabularRule {
    pub id: String,
    pub selectors: Vec<Expression>,
    pub columns: IndexMap<String, ColumnReq>,
    pub initial_columns: Vec<String>,
    pub index_columns: Vec<String>,
    /// `allowed`, `allowed_if_defined`, `not_allowed` or `n/a`; `None` when unset.
    pub additional_columns: Option<String>,
}

/// A check (`rules.checks.<group>.<name>`): when all selectors hold, every check must hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckRule {
    pub id: String,
    pub selectors: Vec<Expression>,
    pub checks: Vec<Expression>,
    /// The issue to raise; `None` only in old upstream schemas (1.8.0) whose checks
    /// carry no issue (a validator falls back to a generic code).
    pub issue: Option<IssueSpec>,
    /// How to repair the issue, if it can be.
    pub fix: Option<Fix>,
}

/// A built-in error definition (`rules.errors.<Name>`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorRule {
    pub id: String,
    pub name: String,
    pub code: String,
    pub message: String,
    pub level: Severity,
    pub selectors: Vec<Expression>,
    /// How to repair the issue, if it can be.
    pub fix: Option<Fix>,
}

/// A directory-layout entry (`rules.directories.<layout>.<key>`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DirectoryRule {
    pub id: String,
    /// `study`, `raw` or `derivative`.
    pub layout: String,
    pub key: String,
    pub name: Option<String>,
    pub value: Option<String>,
    pub entity: Option<String>,
    pub level: Option<Level>,
    pub opaque: bool,
    /// Sub-directory keys; an entry may be a string or an object such as `{oneOf: [...]}`.
    #[serde(with = "crate::compact::json_text")]
    pub subdirs: Vec<Value>,
}

/// Target of an association (`meta.associations.<name>.target`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssociationTarget {
    pub suffix: Option<String>,
    /// One or several extensions.
    pub extension: Vec<String>,
    /// Entities that must match between the file and the target.
    pub entities: Option<Vec<String>>,
}

/// An association (`meta.associations.<name>`): a companion file a data file may have.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Association {
    pub id: String,
    pub name: String,
    pub selectors: Vec<Expression>,
    pub target: AssociationTarget,
    /// The target may be inherited from higher in the tree (default: true).
    pub inherit: bool,
    /// `reverse: <association>`: the association looks the other way, at the files
    /// whose `<association>` resolves to this file.
    pub reverse: Option<String>,
}

/// A declarative repair of the issue a rule raises (`fix:` beside the rule's `issue`).
///
/// Fixes are data like the rules: a small set of edit kinds that a fixer applies to the
/// JSON or TSV text of a dataset. `None`-like outcomes (nothing to change) are decided by
/// the edit itself, so applying a fix twice changes nothing the second time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fix {
    /// The schema path of the rule that declares it (with `.fields.<key>` for a field).
    pub id: String,
    pub op: FixOp,
    /// What to tell the user when the edit cannot be made automatically (or, for
    /// [`FixOp::Suggest`], always).
    pub suggestion: Option<String>,
}

/// One kind of edit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FixOp {
    /// `set: {key, value}`: give a JSON key this value.
    Set {
        key: String,
        #[serde(with = "crate::compact::json_text")]
        value: Value,
    },
    /// `rename: {from, to, as_list}`: rename a JSON key in place (refused when `to`
    /// exists); with `as_list: true` a single value becomes a one-element list.
    Rename {
        from: String,
        to: String,
        as_list: bool,
    },
    /// `replace: {keys, from, to}`: where one of `keys` holds `from`, write `to`.
    Replace {
        keys: Vec<String>,
        #[serde(with = "crate::compact::json_text")]
        from: Value,
        #[serde(with = "crate::compact::json_text")]
        to: Value,
    },
    /// `reformat: {key, match, to}`: a string value that matches the ECMAScript
    /// pattern `match` becomes `to`, where `$1`…`$9` stand for the pattern's groups and
    /// `{scheme}` for the brand's URI scheme.
    Reformat {
        key: String,
        pattern: String,
        to: String,
    },
    /// `replace_cell: {column, from, to, note}`: TSV cells of `column` equal to `from`
    /// become `to`; `note: {key, text}` adds `text` to that key of the column's entry in
    /// the table's JSON sidecar (created when absent).
    ReplaceCell {
        column: String,
        from: String,
        to: String,
        note: Option<(String, String)>,
    },
    /// `remove_bom`: drop a UTF-8 byte-order mark at the start of the file.
    RemoveBom,
    /// `normalize_lines`: CRLF (or lone CR) line ends become LF, empty lines at the end
    /// of the file are dropped, and the last line ends with LF.
    NormalizeLines,
    /// `add_version`: add the brand's version key to `dataset_description.json`, with
    /// the version the user names (else the schema's).
    AddVersion,
    /// `suggest: text`: no automatic edit; the text says what a person should do.
    Suggest,
}

impl FixOp {
    /// The edit's name as written in the schema.
    pub fn name(&self) -> &'static str {
        match self {
            FixOp::Set { .. } => "set",
            FixOp::Rename { .. } => "rename",
            FixOp::Replace { .. } => "replace",
            FixOp::Reformat { .. } => "reformat",
            FixOp::ReplaceCell { .. } => "replace_cell",
            FixOp::RemoveBom => "remove_bom",
            FixOp::NormalizeLines => "normalize_lines",
            FixOp::AddVersion => "add_version",
            FixOp::Suggest => "suggest",
        }
    }

    /// Edits that inspect a file's bytes for the problem themselves, so a fixer may
    /// run them on every file the rule selects, reported or not.
    pub fn scans_content(&self) -> bool {
        matches!(self, FixOp::RemoveBom | FixOp::NormalizeLines)
    }
}

/// The typed views of a schema, built once at load ([`crate::Schema`] holds them and
/// dereferences to them, so `schema.checks` reads the view).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Views {
    /// Entities in canonical order (`rules.entities`).
    pub entities: Vec<Entity>,
    /// `objects.datatypes`, keyed by object key.
    pub datatypes: IndexMap<String, Term>,
    /// `objects.suffixes`, keyed by object key (`TwoPE` → value `2PE`).
    pub suffixes: IndexMap<String, Term>,
    /// `objects.extensions`, keyed by normalised object key (`nii_gz` → `.nii.gz`).
    pub extensions: IndexMap<String, Term>,
    /// Modality → datatypes (`rules.modalities`; modalities only in `objects` map to `[]`).
    pub modalities: IndexMap<String, Vec<String>>,
    /// `objects.formats` with compiled anchored patterns.
    pub formats: IndexMap<String, Format>,
    /// `objects.metadata`.
    pub metadata: IndexMap<String, Definition>,
    /// `objects.columns`.
    pub columns: IndexMap<String, Definition>,
    /// `objects.enums` (empty before 1.9).
    #[serde(with = "crate::compact::json_text")]
    pub enums: IndexMap<String, Value>,
    /// `rules.files.*.*.*`.
    pub file_rules: Vec<FileRule>,
    /// `rules.sidecars.*.*`.
    pub sidecar_rules: Vec<FieldRule>,
    /// `rules.dataset_metadata.*` then `rules.json.*.*`.
    pub json_rules: Vec<FieldRule>,
    /// `rules.tabular_data.*.*`.
    pub tabular_rules: Vec<TabularRule>,
    /// `rules.checks.*.*`.
    pub checks: Vec<CheckRule>,
    /// `rules.errors.*`.
    pub errors: Vec<ErrorRule>,
    /// `rules.directories.*.*` (empty before 1.10).
    pub directories: Vec<DirectoryRule>,
    /// `meta.associations.*`.
    pub associations: Vec<Association>,
    /// The context definition (`meta.context`, JSON-schema-like).
    #[serde(with = "crate::compact::json_text")]
    pub context: Value,
    /// Versions of the standard this schema knows of (`meta.versions`), newest first.
    /// Upstream lists every release here, including ones it cannot validate: use
    /// [`crate::Schema::supported_versions`] to choose a version.
    pub versions: Vec<String>,
}
