//! HED strings: the parser and the full string checks (8.4.0 schema, with definitions) never
//! panic, and every issue the parser reports lies within the string.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nidos_hed::check::{Checker, Role};
use nidos_hed::defs::Definitions;
use nidos_hed::SchemaSource;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let s = String::from_utf8_lossy(rest);
    let chars = s.chars().count();
    let (_, issues) = nidos_hed::parse(&s);
    for i in &issues {
        let at = i.offset.unwrap_or(0);
        assert!(at <= chars, "offset {at} beyond {chars} characters in {s:?}");
    }
    let Ok(schemas) = SchemaSource::default().load_versions(&serde_json::json!(["8.4.0", "sc:score_2.1.0"])) else {
        return;
    };
    let empty = Definitions::default();
    let gatherer = Checker::new(&schemas, &empty);
    let mut ignored = Vec::new();
    let mut defs = Definitions::default();
    defs.gather(&gatherer, "(Definition/Acc/#, (Acceleration/# m-per-s^2, Red)), (Definition/Col, (Blue))", &mut ignored);
    if mode & 1 == 1 {
        defs.gather(&gatherer, &s, &mut ignored);
    }
    let checker = Checker::new(&schemas, &defs);
    let role = match mode % 3 {
        0 => Role::Event,
        1 => Role::SidecarValue,
        _ => Role::SidecarLevel,
    };
    let _ = checker.check(&s, role, mode & 4 == 4);
});
