//! TSV reading (plain, gzip, headerless) must never panic and must keep the table
//! rectangular: every column has the same number of kept rows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nidos_dataset::loaders::tsv::{
    read_tsv, read_tsv_gz, read_tsv_gz_headerless, read_tsv_headerless, Table, TsvOptions,
};

fn check(t: &Table) {
    let n = t.kept_rows();
    for i in 0..t.n_cols() {
        let col = t.column_at(i).expect("a column per header");
        assert_eq!(col.iter().count(), n, "ragged kept columns");
        assert!(col.get(n).is_none());
    }
    assert!(n <= t.n_rows);
    let _ = t.to_value();
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let opts = if mode & 1 == 0 {
        TsvOptions::all()
    } else {
        TsvOptions::max_rows(usize::from(mode >> 4))
    };
    let cols = vec!["a".to_string(), "b".to_string()];
    let res = match (mode >> 1) & 3 {
        0 => read_tsv(rest, &opts),
        1 => read_tsv_gz(rest, &opts),
        2 => read_tsv_headerless(rest, &cols, &opts),
        _ => read_tsv_gz_headerless(rest, &cols, &opts),
    };
    if let Ok(l) = res {
        check(&l.value);
    }
});
