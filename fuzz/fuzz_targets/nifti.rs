//! NIfTI-1/2 header reading from a prefix (`.nii`) and from a gzip stream (`.nii.gz`):
//! never a panic, never unbounded inflation. The input is also gzipped by the target so
//! the `.nii.gz` path reaches the header parser, not only the gzip checks. The reader of
//! in-memory bytes (what validation uses) must agree with the streaming one.
#![no_main]

use std::io::{Cursor, Write};

use flate2::write::GzEncoder;
use flate2::Compression;
use libfuzzer_sys::fuzz_target;
use nidos_dataset::loaders::nifti::{
    read_nifti_header, read_nifti_header_gz, read_nifti_header_gz_bytes,
};

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = read_nifti_header(data) {
        let _ = h.to_value();
    }
    let streamed = read_nifti_header_gz(Cursor::new(data)).map(|h| h.to_value());
    let in_memory = read_nifti_header_gz_bytes(data).map(|h| h.to_value());
    assert_eq!(format!("{streamed:?}"), format!("{in_memory:?}"));
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    if enc.write_all(data).is_ok() {
        if let Ok(gz) = enc.finish() {
            let streamed = read_nifti_header_gz(Cursor::new(&gz)).map(|h| h.to_value());
            let in_memory = read_nifti_header_gz_bytes(&gz).map(|h| h.to_value());
            assert_eq!(format!("{streamed:?}"), format!("{in_memory:?}"));
        }
    }
});
