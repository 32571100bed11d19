//! File-name parsing: never a panic on any string (multi-byte characters, many dots,
//! dashes and underscores), and the extension is a suffix of the name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nidos_dataset::filename::split_extension;
use nidos_dataset::parse_name;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let name = String::from_utf8_lossy(rest);
    let p = parse_name(&name, mode & 1 == 1);
    let _ = format!("{p:?}");
    let (stem, ext) = split_extension(&name);
    assert!(
        name.ends_with(ext),
        "extension {ext:?} not a suffix of {name:?}"
    );
    assert!(
        name.starts_with(stem),
        "stem {stem:?} not a prefix of {name:?}"
    );
});
