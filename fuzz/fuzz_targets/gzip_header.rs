//! gzip member header parsing: never a panic; a parsed header lies within the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nidos_dataset::loaders::gzip::read_gzip_header;

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = read_gzip_header(data) {
        assert!(h.header_len <= data.len(), "header_len past the input");
        let _ = h.to_value();
    }
});
