//! Data-driven index tests: each `cases/*.yaml` writes a folder of files, indexes it as
//! `nidos index` does, writes and reads back the Parquet file, and checks the datasets
//! found and chosen cells of chosen rows (cells compared as display text, `null` for a
//! missing value).

use std::path::Path;

use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

fn cell(batch: &RecordBatch, col: &str, row: usize) -> String {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int32Type, Int64Type};
    use arrow_schema::DataType;
    let Some(array) = batch.column_by_name(col) else {
        return format!("<no column {col}>");
    };
    if array.is_null(row) {
        return "null".into();
    }
    match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(row).to_string(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Float64 => format!("{:?}", array.as_primitive::<Float64Type>().value(row)),
        DataType::Boolean => array.as_boolean().value(row).to_string(),
        other => format!("<{other}>"),
    }
}

fn run_case(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let case: Value = serde_saphyr::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (rel, content) in case["files"].as_object().unwrap() {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content.as_str().unwrap()).unwrap();
    }
    let schema = nidos_schema::Schema::bundled().unwrap();
    let search = dir.path().join(case["search"].as_str().unwrap());
    let found = nidos_index::find_roots(&search).unwrap();
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    let want: Vec<&str> = case["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(names, want, "{}: datasets found", path.display());
    let sets: Vec<_> = found
        .iter()
        .map(|f| nidos_index::index_found(f, &schema, &Default::default()))
        .collect();
    let batch = nidos_index::to_record_batch(&sets, &schema).unwrap();
    let mut bytes = Vec::new();
    nidos_index::write_parquet(&batch, &mut bytes).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    assert_eq!(batches.len(), 1, "one batch expected for a small index");
    let back = &batches[0];
    assert_eq!(back.num_rows(), batch.num_rows());
    for expect in case["rows"].as_array().unwrap() {
        let exp = expect.as_object().unwrap();
        let (ds, p) = (
            exp["dataset"].as_str().unwrap(),
            exp["path"].as_str().unwrap(),
        );
        let row = (0..back.num_rows())
            .find(|&r| cell(back, "dataset", r) == ds && cell(back, "path", r) == p)
            .unwrap_or_else(|| panic!("{}: no row {ds} {p}", path.display()));
        for (col, v) in exp {
            assert_eq!(
                cell(back, col, row),
                v.as_str().unwrap(),
                "{}: {ds} {p} column {col}",
                path.display()
            );
        }
    }
}

#[test]
fn index_cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let paths = nidos_testkit::files_with_extension(&dir, "yaml");
    assert!(!paths.is_empty());
    for p in &paths {
        run_case(p);
    }
}
