//! Schema loading on arbitrary JSON: `$ref` resolution, the structure check and the
//! compiled-JSON loader must return errors, never panic or loop. Objects are also merged
//! into a tiny hand-written skeleton so the loader gets past the version checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let _ = nidos_schema::check_value(&v, false);
    let _ = nidos_schema::check_value(&v, true);
    let _ = nidos_schema::resolve_refs(v.clone());
    let _ = nidos_schema::Schema::from_compiled_json(v.clone());
    if let Value::Object(patch) = v {
        let mut base = json!({
            "schema_version": "0.0.1",
            "bids_version": "1.0.0",
            "objects": {"entities": {}, "datatypes": {}, "suffixes": {}, "extensions": {}},
            "rules": {"files": {}, "checks": {}, "sidecars": {}, "tabular_data": {}},
            "meta": {"context": {}, "versions": ["1.0.0"]}
        });
        if let Some(o) = base.as_object_mut() {
            for (k, val) in patch {
                o.insert(k, val);
            }
        }
        if let Ok(resolved) = nidos_schema::resolve_refs(base) {
            let _ = nidos_schema::Schema::from_compiled_json(resolved);
        }
    }
});
