//! The Arrow record batch of an index and its Parquet form.
//!
//! Columns, in order: `dataset`; one per schema entity by short key (index entities as
//! `int32`, others as text, as bids2table has them); `datatype`, `suffix`, `ext`;
//! `extra_entities` (map of name pairs the schema does not know); `root` (dictionary
//! encoded); `path` (dataset-relative); `size` (bytes); `metadata` (the merged sidecar as
//! JSON text); then `meta__<Key>` for each sidecar key whose values are all booleans,
//! all integers, all numbers or all strings (typed `bool`, `int64`, `float64`, text).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, MapBuilder, StringBuilder,
    StringDictionaryBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use nidos_schema::Schema;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde_json::{Map, Value};

use crate::{DatasetIndex, IndexError};

/// The prefix of the typed metadata columns.
pub const METADATA_PREFIX: &str = "meta__";

/// The type a sidecar key's values share across the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Float,
    Text,
    /// Values of several kinds, or arrays and objects: JSON text only.
    Mixed,
}

fn kind_of(v: &Value) -> Option<Kind> {
    match v {
        Value::Null => None,
        Value::Bool(_) => Some(Kind::Bool),
        Value::Number(n) if n.is_i64() => Some(Kind::Int),
        Value::Number(_) => Some(Kind::Float),
        Value::String(_) => Some(Kind::Text),
        Value::Array(_) | Value::Object(_) => Some(Kind::Mixed),
    }
}

fn join(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        (x, y) if x == y => x,
        (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
        _ => Kind::Mixed,
    }
}

/// The kind of each sidecar key used by some row, in key order.
fn metadata_kinds(sets: &[DatasetIndex]) -> BTreeMap<String, Kind> {
    let mut kinds: BTreeMap<String, Kind> = BTreeMap::new();
    for set in sets {
        for obj in &set.metadata {
            for (k, v) in obj {
                let Some(kind) = kind_of(v) else { continue };
                kinds
                    .entry(k.clone())
                    .and_modify(|old| *old = join(*old, kind))
                    .or_insert(kind);
            }
        }
    }
    kinds
}

/// Builds the index table of the given datasets; entity columns are the schema's.
pub fn to_record_batch(sets: &[DatasetIndex], schema: &Schema) -> Result<RecordBatch, IndexError> {
    let total: usize = sets.iter().map(|s| s.rows.len()).sum();
    let mut fields: Vec<Field> = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    let text_column = |f: &dyn Fn(usize, &DatasetIndex, &crate::FileRow) -> Option<String>| {
        let mut b = StringBuilder::with_capacity(total, total * 8);
        for (i, set) in sets.iter().enumerate() {
            for row in &set.rows {
                b.append_option(f(i, set, row));
            }
        }
        Arc::new(b.finish()) as ArrayRef
    };

    fields.push(Field::new("dataset", DataType::Utf8, false));
    columns.push(text_column(&|_, s, _| Some(s.name.clone())));

    for e in &schema.entities {
        if e.format == "index" {
            let mut b = Int32Builder::with_capacity(total);
            for set in sets {
                for row in &set.rows {
                    b.append_option(row.entities.get(&e.key).and_then(|v| v.parse::<i32>().ok()));
                }
            }
            fields.push(Field::new(&e.key, DataType::Int32, true));
            columns.push(Arc::new(b.finish()));
        } else {
            fields.push(Field::new(&e.key, DataType::Utf8, true));
            columns.push(text_column(&|_, _, r| r.entities.get(&e.key).cloned()));
        }
    }
    fields.push(Field::new("datatype", DataType::Utf8, true));
    columns.push(text_column(&|_, _, r| r.datatype.clone()));
    fields.push(Field::new("suffix", DataType::Utf8, true));
    columns.push(text_column(&|_, _, r| r.suffix.clone()));
    fields.push(Field::new("ext", DataType::Utf8, true));
    columns.push(text_column(&|_, _, r| Some(r.ext.clone())));

    let mut extra = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    for set in sets {
        for row in &set.rows {
            for (k, v) in &row.extra_entities {
                extra.keys().append_value(k);
                extra.values().append_value(v);
            }
            extra.append(true)?;
        }
    }
    let extra = extra.finish();
    fields.push(Field::new(
        "extra_entities",
        extra.data_type().clone(),
        true,
    ));
    columns.push(Arc::new(extra));

    let mut roots = StringDictionaryBuilder::<Int32Type>::new();
    for set in sets {
        for _ in &set.rows {
            roots.append_value(&set.root);
        }
    }
    fields.push(Field::new(
        "root",
        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        false,
    ));
    columns.push(Arc::new(roots.finish()));
    fields.push(Field::new("path", DataType::Utf8, false));
    columns.push(text_column(&|_, _, r| Some(r.path.clone())));

    let mut sizes = Int64Builder::with_capacity(total);
    for set in sets {
        for row in &set.rows {
            sizes.append_value(i64::try_from(row.size).unwrap_or(i64::MAX));
        }
    }
    fields.push(Field::new("size", DataType::Int64, false));
    columns.push(Arc::new(sizes.finish()));

    // Each distinct merged sidecar is rendered once per dataset.
    let texts: Vec<Vec<String>> = sets
        .iter()
        .map(|s| {
            s.metadata
                .iter()
                .map(|m| serde_json::to_string(m).unwrap_or_default())
                .collect()
        })
        .collect();
    fields.push(Field::new("metadata", DataType::Utf8, true));
    columns.push(text_column(&|i, _, r| {
        texts.get(i)?.get(r.metadata).cloned()
    }));

    fields.push(Field::new("status", DataType::Utf8, false));
    columns.push(text_column(&|_, s, _| Some(s.status.to_string())));

    let lookup = |s: &DatasetIndex, r: &crate::FileRow, key: &str| -> Option<Value> {
        s.metadata
            .get(r.metadata)
            .and_then(|m: &Map<String, Value>| m.get(key))
            .cloned()
    };
    for (key, kind) in metadata_kinds(sets) {
        let name = format!("{METADATA_PREFIX}{key}");
        let (dt, array): (DataType, ArrayRef) = match kind {
            Kind::Mixed => continue,
            Kind::Bool => {
                let mut b = BooleanBuilder::with_capacity(total);
                for set in sets {
                    for row in &set.rows {
                        b.append_option(lookup(set, row, &key).and_then(|v| v.as_bool()));
                    }
                }
                (DataType::Boolean, Arc::new(b.finish()))
            }
            Kind::Int => {
                let mut b = Int64Builder::with_capacity(total);
                for set in sets {
                    for row in &set.rows {
                        b.append_option(lookup(set, row, &key).and_then(|v| v.as_i64()));
                    }
                }
                (DataType::Int64, Arc::new(b.finish()))
            }
            Kind::Float => {
                let mut b = Float64Builder::with_capacity(total);
                for set in sets {
                    for row in &set.rows {
                        b.append_option(lookup(set, row, &key).and_then(|v| v.as_f64()));
                    }
                }
                (DataType::Float64, Arc::new(b.finish()))
            }
            Kind::Text => {
                let array = text_column(&|_, s, r| {
                    lookup(s, r, &key).and_then(|v| v.as_str().map(str::to_string))
                });
                (DataType::Utf8, array)
            }
        };
        fields.push(Field::new(name, dt, true));
        columns.push(array);
    }
    let schema = Arc::new(ArrowSchema::new(fields));
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// Writes a batch as one Parquet file (Snappy-compressed).
pub fn write_parquet<W: Write + Send>(batch: &RecordBatch, out: W) -> Result<(), IndexError> {
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut writer = ArrowWriter::try_new(out, batch.schema(), Some(props))?;
    writer.write(batch)?;
    writer.close()?;
    Ok(())
}
