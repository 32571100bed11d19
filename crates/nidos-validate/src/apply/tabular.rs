//! Tabular rules: the columns of a TSV file, their order, index and values.

use std::collections::HashSet;
use std::sync::OnceLock;

use nidos_dataset::loaders::tsv::{Column as TableColumn, Table};
use nidos_expr::Context;
use nidos_schema::{ColumnReq, DeprecatedValue, TabularRule};

use crate::issue::{Issue, Severity};

use super::prepared::{ColumnPlan, Prepared};
use super::signature::*;
use super::*;

/// The table a tabular rule checks: its distinct headers in file order, and its cells,
/// read column by column from the compact table (no column is made into values).
pub(crate) struct TableView<'a> {
    pub headers: Vec<String>,
    pub table: Option<&'a Table>,
}

impl<'a> TableView<'a> {
    /// The column the `columns` object holds under `name`.
    fn column(&self, name: &str) -> Option<TableColumn<'a>> {
        self.table?.object_column(name)
    }
}

pub(crate) fn apply_tabular(
    prepared: &Prepared<'_>,
    (rule, plans): (&TabularRule, &[OnceLock<ColumnPlan>]),
    ctx: &dyn Context,
    facts: &FileFacts<'_>,
    table: &TableView<'_>,
    out: &mut Vec<Issue>,
) {
    if facts.extension != ".tsv" && facts.extension != ".tsv.gz" {
        return;
    }
    let sidecar = ctx.lookup("sidecar");
    let schema = prepared.schema;
    // Rule columns, by the header name they take in a file.
    let names: Vec<(&str, &ColumnReq)> = rule
        .columns
        .values()
        .map(|c| (c.name.as_str(), c))
        .collect();
    let rule_names: HashSet<&str> = names.iter().map(|(n, _)| *n).collect();
    let initial: HashSet<&str> = rule.initial_columns.iter().map(String::as_str).collect();

    for (j, (name, req)) in names.iter().enumerate() {
        let Some(values) = table.column(name) else {
            if req.level == nidos_schema::Level::Required && !initial.contains(req.key.as_str()) {
                out.push(
                    Issue::new("TSV_COLUMN_MISSING", Severity::Error, facts.location)
                        .sub(*name)
                        .rule(&rule.id),
                );
            }
            continue;
        };
        let side_def = sidecar.get(name);
        let plan = plans
            .get(j)
            .map(|p| p.get_or_init(|| ColumnPlan::new(schema, &prepared.patterns, req)));
        let Some(plan) = plan else { continue };
        // A sidecar entry of any shape defines the column (a bare string is a
        // description-only definition of a text column), as in the reference.
        if side_def.is_null() {
            let column = Column {
                name,
                deprecated: prepared.deprecated_values(name),
            };
            check_values(
                &column,
                plan.compiled.as_ref(),
                values,
                facts,
                &rule.id,
                out,
            );
            continue;
        }
        let side = RawSignature::from_column_definition(&side_def);
        let raw = if plan.overridable {
            side
        } else {
            match refine(plan.raw.clone(), side) {
                Ok(r) => r,
                Err(base) => {
                    let side = RawSignature::from_column_definition(&side_def);
                    let message = redefinition_message(&base, &side);
                    let origin = (facts.sidecar_origin)(name).unwrap_or(facts.path);
                    out.push(
                        Issue::new("TSV_COLUMN_TYPE_REDEFINED", Severity::Warning, origin)
                            .sub(*name)
                            .rule(&rule.id)
                            .message(message),
                    );
                    base
                }
            }
        };
        let sig = Signature::compile(&raw, schema, &prepared.patterns);
        let column = Column {
            name,
            deprecated: prepared.deprecated_values(name),
        };
        check_values(&column, sig.as_ref(), values, facts, &rule.id, out);
    }

    for header in &table.headers {
        if rule_names.contains(header.as_str()) {
            continue;
        }
        let policy = rule.additional_columns.as_deref().unwrap_or("n/a");
        let side_def = sidecar.get(header);
        if policy == "not_allowed" {
            out.push(
                Issue::new(
                    "TSV_ADDITIONAL_COLUMNS_NOT_ALLOWED",
                    Severity::Error,
                    facts.location,
                )
                .sub(header.as_str())
                .rule(&rule.id),
            );
        } else if side_def.is_null() {
            let (code, severity) = if policy == "allowed_if_defined" {
                ("TSV_ADDITIONAL_COLUMNS_MUST_DEFINE", Severity::Error)
            } else {
                ("TSV_ADDITIONAL_COLUMNS_UNDEFINED", Severity::Warning)
            };
            out.push(
                Issue::new(code, severity, facts.location)
                    .sub(header.as_str())
                    .rule(&rule.id),
            );
        } else if let Some(values) = table.column(header) {
            let sig = Signature::compile(
                &RawSignature::from_column_definition(&side_def),
                schema,
                &prepared.patterns,
            );
            let column = Column {
                name: header,
                deprecated: prepared.deprecated_values(header),
            };
            check_values(&column, sig.as_ref(), values, facts, &rule.id, out);
        }
    }

    if !rule.initial_columns.is_empty() {
        let mut wanted = Vec::new();
        for key in &rule.initial_columns {
            let name = schema
                .column_def(key)
                .map(|d| d.name.as_str())
                .unwrap_or(key.as_str());
            let required =
                rule.columns.get(key).map(|c| c.level) == Some(nidos_schema::Level::Required);
            let position = table.headers.iter().position(|h| h == name);
            if position.is_none() && !required {
                continue;
            }
            wanted.push((name, position));
        }
        for (i, (name, position)) in wanted.into_iter().enumerate() {
            match position {
                None => out.push(
                    Issue::new("TSV_COLUMN_MISSING", Severity::Error, facts.location)
                        .sub(name)
                        .rule(&rule.id)
                        .message(format!("required initial column {} not found", i + 1)),
                ),
                Some(p) if p != i => out.push(
                    Issue::new(
                        "TSV_COLUMN_ORDER_INCORRECT",
                        Severity::Error,
                        facts.location,
                    )
                    .sub(name)
                    .rule(&rule.id)
                    .message(format!(
                        "column {name} must be column {}, found at {}",
                        i + 1,
                        p + 1
                    )),
                ),
                Some(_) => {}
            }
        }
    }

    if !rule.index_columns.is_empty() {
        let cols: Vec<TableColumn<'_>> = rule
            .index_columns
            .iter()
            .map(|k| {
                schema
                    .column_def(k)
                    .map(|d| d.name.as_str())
                    .unwrap_or(k.as_str())
            })
            .filter_map(|n| table.column(n))
            .collect();
        if let Some(first) = cols.first() {
            for row in repeated_rows(&cols, first.len()) {
                let key: String = cols.iter().map(|c| c.get(row).unwrap_or("")).collect();
                out.push(
                    Issue::new(
                        "TSV_INDEX_VALUE_NOT_UNIQUE",
                        Severity::Error,
                        facts.location,
                    )
                    .rule(&rule.id)
                    .line(row + 2)
                    .message(format!("row {}: value {key:?} repeats", row + 2)),
                );
            }
        }
    }
}

/// The rows, in order, whose index key (their cells of `cols`, concatenated) an earlier
/// row has. Without a copy of any key: the rows are sorted by the keys' hashes, and rows
/// of one hash by key and position; memory is 16 bytes a row.
fn repeated_rows(cols: &[TableColumn<'_>], n: usize) -> Vec<usize> {
    use std::hash::BuildHasher;
    let key = |r: usize| {
        cols.iter()
            .flat_map(move |c| c.get(r).unwrap_or("").bytes())
    };
    let state = foldhash::fast::FixedState::with_seed(0);
    // The hash of the whole key, whatever its cells (equal concatenations hash equal).
    let mut buf = String::new();
    let mut by_hash: Vec<(u64, usize)> = (0..n)
        .map(|r| {
            buf.clear();
            for c in cols {
                buf.push_str(c.get(r).unwrap_or(""));
            }
            (state.hash_one(buf.as_str()), r)
        })
        .collect();
    by_hash.sort_unstable();
    let mut repeated = Vec::new();
    for run in by_hash.chunk_by_mut(|a, b| a.0 == b.0) {
        if run.len() < 2 {
            continue;
        }
        run.sort_unstable_by(|a, b| key(a.1).cmp(key(b.1)).then(a.1.cmp(&b.1)));
        for pair in run.windows(2) {
            if let [a, b] = pair {
                if key(a.1).eq(key(b.1)) {
                    repeated.push(b.1);
                }
            }
        }
    }
    repeated.sort_unstable();
    repeated
}

/// A column whose values are checked: its header and the values the schema deprecates.
pub(super) struct Column<'a> {
    pub name: &'a str,
    pub deprecated: &'a [DeprecatedValue],
}

/// Checks a column's values: the first value the constraint rejects is a type error,
/// unless it is a deprecated value, which raises its own issue (once per value).
pub(super) fn check_values(
    column: &Column<'_>,
    sig: Option<&Signature>,
    values: TableColumn<'_>,
    facts: &FileFacts<'_>,
    rule_id: &str,
    out: &mut Vec<Issue>,
) {
    let Some(sig) = sig else {
        return;
    };
    let path = facts.location;
    let mut reported = vec![false; column.deprecated.len()];
    // Columns repeat values (levels, constant durations): a value equal to the last
    // accepted one is accepted without matching it again.
    let mut last_accepted: Option<&str> = None;
    for (row, text) in values.iter().enumerate() {
        if last_accepted == Some(text) {
            continue;
        }
        if sig.accepts(text) {
            last_accepted = Some(text);
            continue;
        }
        if let Some(i) = column.deprecated.iter().position(|d| d.value == text) {
            if let (Some(done), Some(d)) = (reported.get_mut(i), column.deprecated.get(i)) {
                if !*done {
                    *done = true;
                    let severity = d.issue.level.unwrap_or(Severity::Warning);
                    out.push(
                        Issue::new(&d.issue.code, severity, path)
                            .rule(rule_id)
                            .line(row + 2)
                            .message(d.issue.message.as_str()),
                    );
                }
            }
            continue;
        }
        out.push(
            Issue::new("TSV_VALUE_INCORRECT_TYPE", Severity::Error, path)
                .sub(column.name)
                .rule(rule_id)
                .line(row + 2)
                .message(format!("'{text}'{}", na_hint(text))),
        );
        break;
    }
}
