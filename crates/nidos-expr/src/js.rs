//! JavaScript value coercions, as the reference validator (which evaluates rules as
//! JavaScript) applies them: `Number(x)`, `String(x)`, `==`, `<`.
//!
//! One deliberate difference: the language has a single null, and it behaves like
//! JavaScript's `undefined` in arithmetic and ordering (a missing sidecar field is
//! `undefined` there), so `null < 1` is false rather than true.

use std::cmp::Ordering;

use crate::value::Value;

/// `Number(s)` for a string: trims whitespace, empty is 0, accepts decimal,
/// `0x`/`0o`/`0b` integers and `Infinity`; anything else is NaN.
pub fn str_to_number(s: &str) -> f64 {
    let t = s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if t.is_empty() {
        return 0.0;
    }
    let radix = |digits: &str, radix: u32| {
        if digits.is_empty() {
            return f64::NAN;
        }
        let mut n = 0.0f64;
        for ch in digits.chars() {
            match ch.to_digit(radix) {
                Some(d) => n = n * radix as f64 + d as f64,
                None => return f64::NAN,
            }
        }
        n
    };
    let lower2 = t.get(..2).map(str::to_ascii_lowercase);
    match lower2.as_deref() {
        Some("0x") => return radix(&t[2..], 16),
        Some("0o") => return radix(&t[2..], 8),
        Some("0b") => return radix(&t[2..], 2),
        _ => {}
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    // Rust's float syntax is JavaScript's decimal syntax plus inf/nan words, which
    // the character filter excludes.
    let ok_chars = t
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !ok_chars || !t.bytes().any(|b| b.is_ascii_digit()) {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// `Number(x)`. Null counts as `undefined` (NaN) except inside arrays, where JSON
/// nulls are real nulls (0) — matching how the reference sees sidecar data.
pub fn to_number(v: &Value) -> f64 {
    match v {
        Value::Null => f64::NAN,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => *n,
        Value::String(s) => str_to_number(s),
        Value::Array(_) | Value::Object(_) => str_to_number(&to_js_string(v)),
    }
}

/// `Number(x)` as applied to an item of a JSON array (`null` is 0 there).
pub fn item_to_number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        other => to_number(other),
    }
}

/// JavaScript's `Number.prototype.toString()`.
pub fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if n == 0.0 {
        return "0".into();
    }
    let abs = n.abs();
    if (1e-6..1e21).contains(&abs) {
        // Rust prints the shortest round-trip digits without an exponent.
        return format!("{n}");
    }
    // Exponent form: mantissa digits as the shortest round-trip, `e+` / `e-`.
    let s = format!("{n:e}");
    match s.split_once('e') {
        Some((mant, exp)) if exp.starts_with('-') => format!("{mant}e{exp}"),
        Some((mant, exp)) => format!("{mant}e+{exp}"),
        None => s,
    }
}

/// `String(x)`; arrays join their items with `,` (nulls as empty), objects are
/// `[object Object]`.
pub fn to_js_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_to_string(*n),
        Value::String(s) => s.to_string(),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Null => String::new(),
                other => to_js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// The language's `==`: structural for arrays and objects (`[1] == [1.0]`), and
/// JavaScript's loose equality between primitives (`"2" == 2`, `true == 1`).
/// `null` equals only `null`.
pub fn loose_eq(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Null, Null) => true,
        (Null, _) | (_, Null) => false,
        (Number(x), Number(y)) => x == y,
        (String(x), String(y)) => x == y,
        (Bool(x), Bool(y)) => x == y,
        (Array(_), Array(_)) | (Object(_), Object(_)) => a == b,
        (Array(_), Object(_)) | (Object(_), Array(_)) => false,
        (Number(x), String(s)) | (String(s), Number(x)) => *x == str_to_number(s),
        (Bool(x), other) | (other, Bool(x)) => {
            loose_eq(&Value::Number(f64::from(u8::from(*x))), other)
        }
        // An array or object against a primitive compares its string form.
        (Array(_) | Object(_), prim) | (prim, Array(_) | Object(_)) => loose_eq(
            &Value::str(to_js_string(if matches!(a, Array(_) | Object(_)) {
                a
            } else {
                b
            })),
            prim,
        ),
    }
}

/// JavaScript's abstract relational comparison: strings compare by characters,
/// everything else numerically. `None` when unordered (NaN, or a null operand).
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => return None,
        (Value::Number(x), Value::Number(y)) => return x.partial_cmp(y),
        (Value::String(x), Value::String(y)) => return Some(x.as_ref().cmp(y.as_ref())),
        _ => {}
    }
    let pa = to_primitive(a);
    let pb = to_primitive(b);
    match (&pa, &pb) {
        (Value::String(x), Value::String(y)) => Some(x.as_ref().cmp(y.as_ref())),
        _ => to_number(&pa).partial_cmp(&to_number(&pb)),
    }
}

/// Arrays and objects become their string form; primitives stay.
pub fn to_primitive(v: &Value) -> Value {
    match v {
        Value::Array(_) | Value::Object(_) => Value::str(to_js_string(v)),
        other => other.clone(),
    }
}

/// `SameValueZero`, extended structurally to arrays and objects: the equality of
/// `Set`, `indexOf` and `===` between primitives.
pub fn strict_eq(a: &Value, b: &Value) -> bool {
    a == b
}
