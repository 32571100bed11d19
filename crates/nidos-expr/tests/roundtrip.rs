//! Property: printing a tree and parsing the text gives the same tree; and no input,
//! however malformed, makes the parser or the interpreter panic.

use nidos_expr::{eval, parse, Expr, ObjectContext, Value};
use proptest::prelude::*;

const KEYWORDS: &[&str] = &["in", "true", "false", "null"];

fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z_$][a-zA-Z0-9_$]{0,6}".prop_filter("keyword", |s| !KEYWORDS.contains(&s.as_str()))
}

fn literal() -> impl Strategy<Value = Expr> {
    prop_oneof![
        any::<f64>()
            .prop_filter("finite", |n| n.is_finite())
            .prop_map(|n| Expr::Literal(Value::Number(n))),
        (-1000i32..1000).prop_map(|n| Expr::Literal(Value::Number(n as f64))),
        "[a-z \"'\\\\.\\n()\\[\\]{}]{0,8}".prop_map(|s| Expr::Literal(Value::str(s))),
        any::<bool>().prop_map(|b| Expr::Literal(Value::Bool(b))),
        Just(Expr::Literal(Value::Null)),
        Just(Expr::Literal(Value::object(Default::default()))),
    ]
}

const BINARY: &[&str] = &[
    "_||_", "_&&_", "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "_in_", "_+_", "_-_", "_*_",
    "_/_", "_%_", "_**_",
];

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        3 => literal(),
        2 => ident().prop_map(|n| Expr::Name(n.as_str().into())),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            (prop::sample::select(BINARY), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| Expr::call(op, vec![a, b])),
            (prop::sample::select(&["!_", "-_"][..]), inner.clone())
                .prop_map(|(op, a)| Expr::call(op, vec![a])),
            (inner.clone(), ident())
                .prop_map(|(o, n)| Expr::Member(Box::new(o), n.as_str().into())),
            (inner.clone(), inner.clone()).prop_map(|(o, i)| Expr::Index(Box::new(o), Box::new(i))),
            prop::collection::vec(inner.clone(), 0..4).prop_map(Expr::array),
            (
                prop::sample::select(&["length", "type", "unique", "min", "max"][..]),
                inner.clone()
            )
                .prop_map(|(f, a)| Expr::call(f, vec![a])),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::call("intersects", vec![a, b])),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| Expr::call("substr", vec![a, b, c])),
            (ident(), prop::collection::vec(inner, 0..3))
                .prop_map(|(n, args)| { Expr::call(&format!("zz{n}"), args) }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn print_then_parse_is_identity(e in expr()) {
        let text = e.to_string();
        let back = parse(&text).map_err(|err| TestCaseError::fail(format!("`{text}`: {err}")))?;
        prop_assert_eq!(&back, &e, "printed as `{}`", text);
        // Evaluating any tree never panics.
        let _ = eval(&e, &ObjectContext::default());
    }

    #[test]
    fn arbitrary_text_never_panics(src in "[a-z0-9 +\\-*/%!=<>&|.,()\\[\\]{}'\"\\\\\n]{0,40}") {
        if let Ok(e) = parse(&src) {
            let _ = eval(&e, &ObjectContext::default());
            let again = parse(&e.to_string());
            prop_assert_eq!(again.as_ref(), Ok(&e));
        }
    }
}

/// Hostile nesting is an error, not a stack overflow (tests run on 2 MiB stacks).
#[test]
fn deep_nesting_is_bounded() {
    let ok = format!("{}1{}", "(".repeat(128), ")".repeat(128));
    assert_eq!(
        eval(&parse(&ok).unwrap(), &ObjectContext::default()),
        Value::Number(1.0)
    );
    for deep in [
        format!("{}x{}", "[".repeat(128), "]".repeat(128)),
        format!("{}x", "!".repeat(128)),
        format!("{}x{}", "-(".repeat(64), ")".repeat(64)),
        "x + ".repeat(250) + "x",
        "2 ** ".repeat(128) + "1",
    ] {
        let e = parse(&deep).unwrap();
        let _ = eval(&e, &ObjectContext::default());
        assert_eq!(parse(&e.to_string()).unwrap(), e);
    }
    let long = "1,".repeat(nidos_expr::MAX_SOURCE_BYTES / 2) + "1";
    let err = parse(&format!("[{long}]")).unwrap_err();
    assert!(
        err.message.starts_with("expression too long"),
        "{}",
        err.message
    );
    assert!(err.snippet(&long).len() < 400);
    for bad in [
        format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000)),
        format!("{}x", "!".repeat(100_000)),
        format!("{}x", "- ".repeat(100_000)),
        "2 ** ".repeat(10_000) + "2",
        "1 + ".repeat(100_000) + "1",
        "a.b".to_string() + &".c".repeat(100_000),
    ] {
        let err = parse(&bad).unwrap_err();
        // Past `MAX_SOURCE_BYTES` the length is what is refused.
        assert!(
            err.message.contains("nested") || err.message.contains("too long"),
            "{}",
            err.message
        );
    }
}
