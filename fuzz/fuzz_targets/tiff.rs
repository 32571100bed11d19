//! TIFF IFD and OME-XML reading: never a panic (offset loops, huge counts, bad XML).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nidos_dataset::loaders::tiff::{read_ome_xml, read_tiff};

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = read_tiff(data) {
        let _ = t.to_value();
        if let Some(o) = &t.ome {
            let _ = o.to_value();
        }
    }
    if let Ok(s) = std::str::from_utf8(data) {
        if let Some(o) = read_ome_xml(s) {
            let _ = o.to_value();
        }
    }
});
