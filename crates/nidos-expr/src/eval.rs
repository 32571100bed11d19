//! The interpreter. Evaluation never fails: whatever JavaScript would answer with
//! `undefined` or a `TypeError` comes out as null here.

use std::borrow::Cow;

use crate::ast::{Call, Expr};
use crate::context::Context;
use crate::functions;
use crate::js;
use crate::registry::Func;
use crate::value::Value;

/// Evaluates an expression against a root scope.
pub fn eval(expr: &Expr, ctx: &dyn Context) -> Value {
    eval_cow(expr, ctx).into_owned()
}

/// Evaluates, borrowing constants from the tree and values the context keeps (and
/// their members) instead of cloning them.
pub(crate) fn eval_cow<'a>(expr: &'a Expr, ctx: &'a dyn Context) -> Cow<'a, Value> {
    match expr {
        Expr::Literal(v) => Cow::Borrowed(v),
        Expr::Name(n) => match n.as_ref() {
            "true" | "false" | "null" => Cow::Owned(lookup_root(n, ctx)),
            _ => ctx.lookup(n),
        },
        Expr::Member(obj, name) => {
            if let Expr::Name(root) = &**obj {
                if let Some(v) = member_of_root(root, name, ctx) {
                    return v;
                }
            }
            member_cow(eval_cow(obj, ctx), name)
        }
        Expr::Array(items) => Cow::Owned(Value::array(
            items
                .iter()
                .map(|e| eval_cow(e, ctx).into_owned())
                .collect(),
        )),
        Expr::Index(obj, idx) => {
            let i = eval_cow(idx, ctx);
            if let (Expr::Name(root), Value::String(key)) = (&**obj, &*i) {
                if let Some(v) = member_of_root(root, key, ctx) {
                    return Cow::Owned(v.into_owned());
                }
            }
            Cow::Owned(index(&eval_cow(obj, ctx), &i))
        }
        Expr::Call(call) => Cow::Owned(eval_call(call, ctx)),
    }
}

/// `root.key` as the context answers it without making all of `root`
/// ([`Context::lookup_member`]); not for the constants' names.
fn member_of_root<'a>(root: &str, key: &str, ctx: &'a dyn Context) -> Option<Cow<'a, Value>> {
    match root {
        "true" | "false" | "null" => None,
        _ => ctx.lookup_member(root, key),
    }
}

/// `value.name` of an evaluated value, borrowing the member of a borrowed object.
fn member_cow<'a>(v: Cow<'a, Value>, name: &str) -> Cow<'a, Value> {
    match v {
        Cow::Borrowed(Value::Object(o)) => match o.get(name) {
            Some(v) => Cow::Borrowed(v),
            None => Cow::Owned(Value::Null),
        },
        other => Cow::Owned(member(&other, name)),
    }
}

/// `true`, `false` and `null` are bound in the root scope and cannot be overridden
/// (the parser folds them to constants; this covers hand-built trees).
fn lookup_root(name: &str, ctx: &dyn Context) -> Value {
    match name {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        _ => ctx.lookup(name).into_owned(),
    }
}

/// `value.name`: object members; `length` of arrays and strings (as in JavaScript);
/// null otherwise.
pub(crate) fn member(v: &Value, name: &str) -> Value {
    match v {
        Value::Object(o) => o.get(name).cloned().unwrap_or(Value::Null),
        Value::Array(a) if name == "length" => Value::Number(a.len() as f64),
        Value::String(s) if name == "length" => Value::Number(s.chars().count() as f64),
        _ => Value::Null,
    }
}

/// An index usable on an array or string: a non-negative integer, given as a number
/// or as its canonical decimal string.
fn as_position(i: &Value) -> Option<usize> {
    let n = match i {
        Value::Number(n) => *n,
        Value::String(s) => {
            let n = js::str_to_number(s);
            if js::number_to_string(n) != s.as_ref() {
                return None;
            }
            n
        }
        _ => return None,
    };
    if n >= 0.0 && n.fract() == 0.0 && n < 9.007_199_254_740_992e15 {
        Some(n as usize)
    } else {
        None
    }
}

/// `value[i]`: array items and string characters by position (out of range, negative
/// or fractional gives null), object members by key.
pub(crate) fn index(v: &Value, i: &Value) -> Value {
    match v {
        Value::Array(a) => match as_position(i) {
            Some(p) => a.get(p).cloned().unwrap_or(Value::Null),
            None => match i.as_str() {
                Some(key) => member(v, key),
                None => Value::Null,
            },
        },
        Value::String(s) => match as_position(i) {
            Some(p) => s
                .chars()
                .nth(p)
                .map(|c| Value::str(c.to_string()))
                .unwrap_or(Value::Null),
            None => match i.as_str() {
                Some(key) => member(v, key),
                None => Value::Null,
            },
        },
        Value::Object(_) => match i {
            Value::String(key) => member(v, key),
            Value::Null => Value::Null,
            other => member(v, &js::to_js_string(other)),
        },
        _ => Value::Null,
    }
}

fn eval_call<'a>(call: &'a Call, ctx: &'a dyn Context) -> Value {
    let Some(func) = call.func else {
        // Unknown function (e.g. `len` in old schemas): null.
        return Value::Null;
    };
    let args = &call.args;
    let arg = |i: usize| -> Cow<'_, Value> {
        match args.get(i) {
            Some(e) => eval_cow(e, ctx),
            None => Cow::Owned(Value::Null),
        }
    };
    match func {
        // Short-circuiting operators return one of their operands, as in JavaScript.
        Func::Or => {
            let a = arg(0);
            if a.truthy() {
                a.into_owned()
            } else {
                arg(1).into_owned()
            }
        }
        Func::And => {
            let a = arg(0);
            if a.truthy() {
                arg(1).into_owned()
            } else {
                a.into_owned()
            }
        }
        Func::Not => Value::Bool(!arg(0).truthy()),
        Func::Eq => Value::Bool(js::loose_eq(&arg(0), &arg(1))),
        Func::Ne => Value::Bool(!js::loose_eq(&arg(0), &arg(1))),
        Func::Lt => Value::Bool(js::compare(&arg(0), &arg(1)).is_some_and(|o| o.is_lt())),
        Func::Le => Value::Bool(js::compare(&arg(0), &arg(1)).is_some_and(|o| o.is_le())),
        Func::Gt => Value::Bool(js::compare(&arg(0), &arg(1)).is_some_and(|o| o.is_gt())),
        Func::Ge => Value::Bool(js::compare(&arg(0), &arg(1)).is_some_and(|o| o.is_ge())),
        Func::In => functions::contains(&arg(0), &arg(1)),
        Func::Add => functions::add(&arg(0), &arg(1)),
        Func::Sub => arith(&arg(0), &arg(1), |a, b| a - b),
        Func::Mul => arith(&arg(0), &arg(1), |a, b| a * b),
        Func::Div => arith(&arg(0), &arg(1), |a, b| a / b),
        Func::Rem => arith(&arg(0), &arg(1), |a, b| a % b),
        Func::Pow => arith(&arg(0), &arg(1), js_pow),
        Func::Neg => {
            let a = arg(0);
            if a.is_null() {
                Value::Null
            } else {
                Value::Number(-js::to_number(&a))
            }
        }
        Func::Match => match &call.regex {
            Some(re) => functions::match_compiled(&arg(0), re),
            None => functions::match_dynamic(&arg(0), &arg(1)),
        },
        Func::Type => Value::str(arg(0).type_name()),
        Func::Intersects => functions::intersects(&arg(0), &arg(1)),
        Func::Length => functions::length(&arg(0)),
        Func::Exists => {
            let rule = if args.len() > 1 {
                arg(1)
            } else {
                Cow::Owned(Value::str("dataset"))
            };
            functions::exists(&arg(0), &rule, ctx)
        }
        Func::Count => functions::count(&arg(0), &arg(1)),
        Func::Index => functions::index_of(&arg(0), &arg(1)),
        Func::Min => functions::min_max(&arg(0), false),
        Func::Max => functions::min_max(&arg(0), true),
        Func::Sorted => {
            let method = if args.len() > 1 {
                arg(1)
            } else {
                Cow::Owned(Value::str("auto"))
            };
            functions::sorted(&arg(0), &method)
        }
        Func::Substr => functions::substr(&arg(0), &arg(1), &arg(2)),
        Func::AllEqual => functions::allequal(&arg(0), &arg(1)),
        Func::Unique => functions::unique(&arg(0)),
        Func::Lower => functions::lower(&arg(0)),
        Func::Replace => functions::replace(&arg(0), &arg(1), &arg(2)),
        Func::Filter => functions::filter(&arg(0), &arg(1)),
        Func::Zip => functions::zip(&arg(0), &arg(1)),
    }
}

/// Numeric operators: null operands give null; other operands convert with
/// `Number(x)` (so `"3" * 2` is 6 and `"n/a" * 2` is NaN).
fn arith(a: &Value, b: &Value, f: impl Fn(f64, f64) -> f64) -> Value {
    if a.is_null() || b.is_null() {
        return Value::Null;
    }
    Value::Number(f(js::to_number(a), js::to_number(b)))
}

/// `Math.pow` differs from `powf` only for a NaN exponent base of ±1.
fn js_pow(a: f64, b: f64) -> f64 {
    if b.is_nan() || (a.abs() == 1.0 && b.is_infinite()) {
        f64::NAN
    } else {
        a.powf(b)
    }
}
