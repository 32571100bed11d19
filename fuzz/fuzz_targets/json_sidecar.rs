//! JSON sidecar loading must never panic, whatever the bytes (BOMs, UTF-16, deep nesting,
//! huge numbers), and a loaded object must convert to an expression value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nidos_dataset::loaders::json::{read_json_object, to_value};

fuzz_target!(|data: &[u8]| {
    if let Ok(loaded) = read_json_object(data) {
        let v = to_value(&loaded.value);
        let _ = v.as_object().map(|o| o.len());
    }
});
