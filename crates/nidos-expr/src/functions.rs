//! The built-in functions and the operators that need more than a line.

use std::cmp::Ordering;
use std::collections::HashSet;

use crate::context::Context;
use crate::js;
use crate::jssort;
use crate::regex_cache::{self, CompiledRegex};
use crate::value::Value;

/// `a in b`: array membership (by `==`), object key, substring. Null for other
/// right-hand sides (JavaScript throws there).
pub fn contains(a: &Value, b: &Value) -> Value {
    match b {
        Value::Array(items) => Value::Bool(items.iter().any(|i| js::loose_eq(a, i))),
        Value::Object(o) => match a {
            Value::Null => Value::Null,
            Value::String(k) => Value::Bool(o.contains_key(k.as_ref())),
            other => Value::Bool(o.contains_key(js::to_js_string(other).as_str())),
        },
        Value::String(s) => match a {
            Value::String(needle) => Value::Bool(s.contains(needle.as_ref())),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

/// `a + b`: string concatenation when either side is a string (after arrays and
/// objects turn into strings), numeric addition otherwise; null operands give null.
pub fn add(a: &Value, b: &Value) -> Value {
    if a.is_null() || b.is_null() {
        return Value::Null;
    }
    if let (Value::Number(x), Value::Number(y)) = (a, b) {
        return Value::Number(x + y);
    }
    let pa = js::to_primitive(a);
    let pb = js::to_primitive(b);
    if matches!(pa, Value::String(_)) || matches!(pb, Value::String(_)) {
        let mut s = js::to_js_string(&pa);
        s.push_str(&js::to_js_string(&pb));
        Value::str(s)
    } else {
        Value::Number(js::to_number(&pa) + js::to_number(&pb))
    }
}

/// `match(target, pattern)` with a pattern compiled at parse time.
pub fn match_compiled(target: &Value, re: &CompiledRegex) -> Value {
    match target {
        Value::String(s) => re.is_match(s).map(Value::Bool).unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// `match(target, pattern)` with a computed pattern: a non-string pattern is used
/// as its string form (`null` searches for "null", as `RegExp(null)` does).
pub fn match_dynamic(target: &Value, pattern: &Value) -> Value {
    let Value::String(s) = target else {
        return Value::Null;
    };
    let re = match pattern {
        Value::String(p) => regex_cache::cached(p),
        other => regex_cache::cached(&js::to_js_string(other)),
    };
    re.is_match(s).map(Value::Bool).unwrap_or(Value::Null)
}

fn as_list(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items.as_ref().clone(),
        other => vec![other.clone()],
    }
}

/// `intersects(a, b)`: scalars count as one-item lists; the items of the longer list
/// that also occur in the shorter one, or `false` when there are none.
pub fn intersects(a: &Value, b: &Value) -> Value {
    let (mut long, mut short) = (as_slice_or_one(a), as_slice_or_one(b));
    if long.len() < short.len() {
        std::mem::swap(&mut long, &mut short);
    }
    if short.is_empty() {
        return Value::Bool(false);
    }
    // A hash set of the shorter list's items: linear in both lengths. Items holding NaN
    // equal nothing (not even themselves), so they neither enter the set nor match.
    let keys: HashSet<ItemKey> = short.iter().filter_map(ItemKey::of).collect();
    let shared: Vec<Value> = long
        .iter()
        .filter(|x| ItemKey::of(x).is_some_and(|k| keys.contains(&k)))
        .cloned()
        .collect();
    if shared.is_empty() {
        Value::Bool(false)
    } else {
        Value::array(shared)
    }
}

fn as_slice_or_one(v: &Value) -> std::borrow::Cow<'_, [Value]> {
    match v {
        Value::Array(items) => std::borrow::Cow::Borrowed(items.as_slice()),
        other => std::borrow::Cow::Owned(vec![other.clone()]),
    }
}

/// `length(x)`: items of an array, characters of a string, else null.
pub fn length(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Number(a.len() as f64),
        Value::String(s) => Value::Number(s.chars().count() as f64),
        _ => Value::Null,
    }
}

/// `exists(paths, rule)`: how many of the paths exist under the rule. A null list
/// counts 0; a single path counts as a list of one; a null rule means `dataset`.
/// Null when the context cannot answer (no file tree, unknown rule).
pub fn exists(paths: &Value, rule: &Value, ctx: &dyn Context) -> Value {
    let rule = match rule {
        Value::Null => "dataset".to_string(),
        other => js::to_js_string(other),
    };
    let list = match paths {
        Value::Null => return Value::Number(0.0),
        other => as_list(other),
    };
    let mut n = 0usize;
    for p in &list {
        let Value::String(p) = p else {
            return Value::Null;
        };
        match ctx.exists(&rule, p) {
            Some(true) => n += 1,
            Some(false) => {}
            None => return Value::Null,
        }
    }
    Value::Number(n as f64)
}

/// `count(list, value)`: how many items equal the value (strictly: `"1"` is not 1).
pub fn count(list: &Value, value: &Value) -> Value {
    match list {
        Value::Array(items) => {
            Value::Number(items.iter().filter(|x| js::strict_eq(x, value)).count() as f64)
        }
        _ => Value::Null,
    }
}

/// `index(list, value)`: the first position of the value (strict equality) in a list,
/// or of a substring in a string; null when absent.
pub fn index_of(list: &Value, value: &Value) -> Value {
    match (list, value) {
        (Value::Array(items), _) => items
            .iter()
            .position(|x| js::strict_eq(x, value))
            .map(|p| Value::Number(p as f64))
            .unwrap_or(Value::Null),
        (Value::String(s), Value::String(needle)) => s
            .find(needle.as_ref())
            .map(|byte| Value::Number(s[..byte].chars().count() as f64))
            .unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// `min(list)` / `max(list)`: items convert with `Number()` and those that are not
/// numbers (such as `"n/a"`) are ignored; a scalar counts as a list of one. An empty
/// list gives the identity (`Infinity` for min), which prints as null.
pub fn min_max(list: &Value, want_max: bool) -> Value {
    if list.is_null() {
        return Value::Null;
    }
    let nums = as_slice_or_one(list)
        .iter()
        .map(js::item_to_number)
        .filter(|n| !n.is_nan())
        .collect::<Vec<_>>();
    let init = if want_max {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    Value::Number(nums.into_iter().fold(
        init,
        |acc, n| {
            if want_max {
                acc.max(n)
            } else {
                acc.min(n)
            }
        },
    ))
}

/// `sorted(list, method)`: a sorted copy, exactly as the reference's JavaScript
/// `list.toSorted(comparator)` orders it (see [`crate::jssort`]). `auto` compares as
/// JavaScript's `<` and `>` do (numbers numerically, strings by characters); `numeric`
/// subtracts the `Number()` values, so a non-number (`n/a`) gives NaN, which neither
/// precedes nor follows anything and stays where the algorithm leaves it; `lexical`
/// compares string forms, ignoring case first.
pub fn sorted(list: &Value, method: &Value) -> Value {
    let Value::Array(items) = list else {
        return Value::Null;
    };
    let mut out = items.as_ref().clone();
    match method.as_str() {
        Some("auto") => jssort::sort_by(&mut out, |a, b| match js::compare(a, b) {
            Some(Ordering::Less) => -1.0,
            Some(Ordering::Greater) => 1.0,
            _ => 0.0,
        }),
        Some("numeric") => jssort::sort_by(&mut out, |a, b| {
            js::item_to_number(a) - js::item_to_number(b)
        }),
        Some("lexical") => jssort::sort_by(&mut out, |a, b| match lexical(a, b) {
            Ordering::Less => -1.0,
            Ordering::Equal => 0.0,
            Ordering::Greater => 1.0,
        }),
        // JavaScript's default sort: by string form, character by character.
        _ => jssort::sort_by(&mut out, |a, b| {
            match js::to_js_string(a).cmp(&js::to_js_string(b)) {
                Ordering::Less => -1.0,
                Ordering::Equal => 0.0,
                Ordering::Greater => 1.0,
            }
        }),
    }
    Value::array(out)
}

/// An approximation of `localeCompare`: case-insensitive first, lower case first on ties.
fn lexical(a: &Value, b: &Value) -> Ordering {
    let (a, b) = (js::to_js_string(a), js::to_js_string(b));
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| b.cmp(&a))
}

/// JavaScript's `ToIntegerOrInfinity`.
fn to_integer(v: &Value) -> f64 {
    let n = js::to_number(v);
    if n.is_nan() {
        0.0
    } else {
        n.trunc()
    }
}

/// `substr(str, start, end)`: the characters from `start` up to (not including) `end`.
/// A negative start counts from the end; null arguments give null.
pub fn substr(s: &Value, start: &Value, end: &Value) -> Value {
    if s.is_null() || start.is_null() || end.is_null() {
        return Value::Null;
    }
    let Value::String(s) = s else {
        return Value::Null;
    };
    let chars: Vec<char> = s.chars().collect();
    let size = chars.len() as f64;
    let start_n = to_integer(start);
    let len = to_integer(end) - start_n;
    let from = if start_n < 0.0 {
        (size + start_n).max(0.0)
    } else {
        start_n.min(size)
    };
    let count = len.clamp(0.0, size - from);
    let (from, count) = (from as usize, count as usize);
    Value::str(chars[from..from + count].iter().collect::<String>())
}

/// `allequal(a, b)`: two lists of the same length with equal items at each position.
pub fn allequal(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => Value::Bool(
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| js::strict_eq(p, q)),
        ),
        _ => Value::Bool(false),
    }
}

/// `unique(list)`: the items without repeats, keeping first occurrences (`1` and
/// `1.0` are the same item); a string gives its distinct characters.
pub fn unique(list: &Value) -> Value {
    let items: Vec<Value> = match list {
        Value::Array(items) => items.as_ref().clone(),
        Value::String(s) => s.chars().map(|c| Value::str(c.to_string())).collect(),
        _ => return Value::Null,
    };
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    // Every item through a hash set of its value (linear). A NaN number is one item, as
    // a scalar; a list or object holding NaN equals nothing, so it is always kept.
    let mut seen: HashSet<ItemKey> = HashSet::new();
    for item in items {
        let fresh = match &item {
            Value::Number(n) if n.is_nan() => seen.insert(ItemKey::Number(n.to_bits())),
            _ => ItemKey::of(&item).is_none_or(|key| seen.insert(key)),
        };
        if fresh {
            out.push(item);
        }
    }
    Value::array(out)
}

/// A hashable identity of a value under the language's equality (`==` on values):
/// `1` and `1.0` are one number, `-0` and `0` too; arrays item by item; objects by
/// their entries whatever their order. `None` for a value holding NaN (equal to
/// nothing).
#[derive(PartialEq, Eq, Hash)]
enum ItemKey {
    Null,
    Bool(bool),
    Number(u64),
    String(std::sync::Arc<str>),
    Array(Vec<ItemKey>),
    Object(Vec<(String, ItemKey)>),
}

impl ItemKey {
    fn of(v: &Value) -> Option<ItemKey> {
        Some(match v {
            Value::Null => ItemKey::Null,
            Value::Bool(b) => ItemKey::Bool(*b),
            Value::Number(n) if n.is_nan() => return None,
            Value::Number(n) if *n == 0.0 => ItemKey::Number(0),
            Value::Number(n) => ItemKey::Number(n.to_bits()),
            Value::String(s) => ItemKey::String(s.clone()),
            Value::Array(items) => {
                ItemKey::Array(items.iter().map(ItemKey::of).collect::<Option<_>>()?)
            }
            Value::Object(o) => {
                let mut entries = o
                    .iter()
                    .map(|(k, v)| Some((k.clone(), ItemKey::of(v)?)))
                    .collect::<Option<Vec<_>>>()?;
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                ItemKey::Object(entries)
            }
        })
    }
}

/// Applies a string function to a string, or to each string item of a list (other
/// items pass unchanged); null for anything else.
fn map_strings(v: &Value, f: impl Fn(&str) -> Option<String>) -> Value {
    match v {
        Value::String(s) => f(s).map(Value::str).unwrap_or(Value::Null),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                match item {
                    Value::String(s) => match f(s) {
                        Some(r) => out.push(Value::str(r)),
                        None => return Value::Null,
                    },
                    other => out.push(other.clone()),
                }
            }
            Value::array(out)
        }
        _ => Value::Null,
    }
}

/// `lower(x)`: a string in lower case, or a list with each string item in lower case.
pub fn lower(v: &Value) -> Value {
    map_strings(v, |s| Some(s.to_lowercase()))
}

/// `replace(x, pattern, text)`: every match of the ECMAScript pattern replaced by the
/// literal `text`, in a string or in each string item of a list. Null when an argument
/// has the wrong type, the pattern does not compile or a replacement ran past the
/// backtracking budget.
pub fn replace(v: &Value, pattern: &Value, text: &Value) -> Value {
    let (Value::String(pattern), Value::String(text)) = (pattern, text) else {
        return Value::Null;
    };
    let compiled = regex_cache::cached(pattern);
    if compiled.regex().is_none() {
        return Value::Null;
    }
    map_strings(v, |s| compiled.replace_all(s, text))
}

/// `filter(list, pattern)`: the string items of a list that the ECMAScript pattern
/// matches (an unanchored search, as `match`). Null for a non-list or a bad pattern.
pub fn filter(list: &Value, pattern: &Value) -> Value {
    let (Value::Array(items), Value::String(pattern)) = (list, pattern) else {
        return Value::Null;
    };
    let re = regex_cache::cached(pattern);
    let mut out = Vec::new();
    for item in items.iter() {
        if let Value::String(s) = item {
            match re.is_match(s) {
                Some(true) => out.push(item.clone()),
                Some(false) => {}
                None => return Value::Null,
            }
        }
    }
    Value::array(out)
}

/// `zip(a, b)`: the pairs `[a[i], b[i]]` as long as the shorter list; null unless both
/// are lists.
pub fn zip(a: &Value, b: &Value) -> Value {
    let (Value::Array(a), Value::Array(b)) = (a, b) else {
        return Value::Null;
    };
    Value::array(
        a.iter()
            .zip(b.iter())
            .map(|(x, y)| Value::array(vec![x.clone(), y.clone()]))
            .collect(),
    )
}
