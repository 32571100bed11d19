//! The syntax tree. Operators are lowered to calls of named registry entries
//! (`_==_`, `_+_`, `!_`, …), so the tree has one node kind for every operation.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::regex_cache::CompiledRegex;
use crate::registry::{self, Func, PREC_NEG, PREC_POSTFIX};
use crate::value::Value;

/// A parsed expression. Build it with [`crate::parse`]; evaluate it with [`crate::eval`]
/// as often as needed (it is immutable, cheap to share between threads).
///
/// `Display` prints source text that parses back to an equal tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    /// A constant: number, string, `true`/`false`/`null`, `{}`, or an array literal
    /// whose items are all constants (folded at parse time).
    Literal(Value),
    /// An array literal with at least one non-constant item.
    Array(Vec<Expr>),
    /// A root-scope name, looked up through the [`crate::Context`].
    Name(Arc<str>),
    /// `object.name`
    Member(Box<Expr>, Arc<str>),
    /// `object[index]`
    Index(Box<Expr>, Box<Expr>),
    /// A function call or an operator (`_&&_`, `!_`, …).
    Call(Call),
}

/// A call of a registry entry (function or operator), or of an unknown function.
/// Serialized as its name and arguments; the registry entry and pattern are found
/// again when it is read back.
#[derive(Clone, Serialize, Deserialize)]
#[serde(into = "CallForm", from = "CallForm")]
pub struct Call {
    /// The function name as written, or the operator's registry name (`_<=_`).
    pub name: Arc<str>,
    pub args: Vec<Expr>,
    /// The registry entry, resolved once at construction; `None` for unknown names.
    pub(crate) func: Option<Func>,
    /// `match(x, 'literal')`: the pattern compiled once at parse time.
    pub(crate) regex: Option<Arc<CompiledRegex>>,
}

impl Call {
    /// Builds a call, resolving the name in the registry.
    pub fn new(name: &str, args: Vec<Expr>) -> Call {
        let func = registry::lookup(name);
        let regex = match (func, args.get(1)) {
            (Some(Func::Match), Some(Expr::Literal(Value::String(p)))) => {
                Some(Arc::new(CompiledRegex::compile(p)))
            }
            _ => None,
        };
        Call {
            name: Arc::from(name),
            args,
            func,
            regex,
        }
    }

    /// Whether the name is a known function or operator.
    pub fn is_known(&self) -> bool {
        self.func.is_some()
    }
}

/// What a serialized [`Call`] holds.
#[derive(Serialize, Deserialize)]
struct CallForm {
    name: Arc<str>,
    args: Vec<Expr>,
}

impl From<Call> for CallForm {
    fn from(c: Call) -> CallForm {
        CallForm {
            name: c.name,
            args: c.args,
        }
    }
}

impl From<CallForm> for Call {
    fn from(f: CallForm) -> Call {
        Call::new(&f.name, f.args)
    }
}

impl PartialEq for Call {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.args == other.args
    }
}

impl fmt::Debug for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("name", &self.name)
            .field("args", &self.args)
            .finish()
    }
}

impl Expr {
    /// A call of `name` (function or operator registry name).
    pub fn call(name: &str, args: Vec<Expr>) -> Expr {
        Expr::Call(Call::new(name, args))
    }

    /// An array literal, folded to a constant when every item is constant
    /// (this is the form the parser produces).
    pub fn array(items: Vec<Expr>) -> Expr {
        if items.iter().all(|e| matches!(e, Expr::Literal(_))) {
            let values = items
                .into_iter()
                .map(|e| match e {
                    Expr::Literal(v) => v,
                    _ => Value::Null,
                })
                .collect();
            Expr::Literal(Value::array(values))
        } else {
            Expr::Array(items)
        }
    }

    /// Names of called functions that the registry does not know (old schemas
    /// call `evaluate`, `len`, `intersect`; such calls evaluate to null).
    /// Sorted, without duplicates.
    pub fn unknown_functions(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Call(c) = e {
                if c.func.is_none() {
                    out.push(c.name.to_string());
                }
            }
        });
        out.sort();
        out.dedup();
        out
    }

    /// Root-scope names the expression reads (`sidecar` in `sidecar.EchoTime`).
    /// Sorted, without duplicates.
    pub fn root_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Name(n) = e {
                out.push(n.to_string());
            }
        });
        out.sort();
        out.dedup();
        out
    }

    /// Whether the expression's value depends on no root name outside `names`: it reads
    /// only those and calls only known functions other than `exists` (the one function
    /// that asks the context, resolving paths from the file's place).
    pub fn reads_only(&self, names: &[&str]) -> bool {
        let mut only = true;
        self.walk(&mut |e| match e {
            Expr::Name(n) if !names.contains(&n.as_ref()) => only = false,
            Expr::Call(c) if !c.is_known() || c.name.as_ref() == "exists" => only = false,
            _ => {}
        });
        only
    }

    /// Visits every node, parents before children.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Literal(_) | Expr::Name(_) => {}
            Expr::Array(items) => items.iter().for_each(|e| e.walk(f)),
            Expr::Member(o, _) => o.walk(f),
            Expr::Index(o, i) => {
                o.walk(f);
                i.walk(f);
            }
            Expr::Call(c) => c.args.iter().for_each(|e| e.walk(f)),
        }
    }

    /// The binding strength of the outermost construct (higher binds tighter).
    fn precedence(&self) -> u8 {
        match self {
            Expr::Call(c) => match c.func.and_then(|f| f.operator()) {
                Some(op) => op.precedence,
                None => PREC_POSTFIX,
            },
            // A negative number literal prints with a leading `-`; treat it like a
            // unary minus so it is parenthesised where a postfix would misparse.
            Expr::Literal(Value::Number(n)) if n.is_sign_negative() => PREC_NEG,
            _ => PREC_POSTFIX,
        }
    }
}

fn write_child(f: &mut fmt::Formatter<'_>, e: &Expr, min_prec: u8) -> fmt::Result {
    if e.precedence() < min_prec {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

/// Writes a string literal: double-quoted, escaping `"` and `\`.
pub(crate) fn write_string(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for ch in s.chars() {
        match ch {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// Writes a number so that it parses back to the same `f64`.
pub(crate) fn write_number(f: &mut impl fmt::Write, n: f64) -> fmt::Result {
    if n.is_nan() {
        // Not producible by the parser; `0/0` evaluates to NaN.
        f.write_str("(0 / 0)")
    } else if n.is_infinite() {
        f.write_str(if n > 0.0 { "1e999" } else { "-1e999" })
    } else if n == 0.0 && n.is_sign_negative() {
        f.write_str("-0")
    } else if n.fract() == 0.0 && n.abs() < 1e16 {
        write!(f, "{}", n as i64)
    } else {
        // Debug gives the shortest text that round-trips, with an exponent when long.
        write!(f, "{n:?}")
    }
}

fn write_literal(f: &mut fmt::Formatter<'_>, v: &Value) -> fmt::Result {
    match v {
        Value::Null => f.write_str("null"),
        Value::Bool(b) => write!(f, "{b}"),
        Value::Number(n) => write_number(f, *n),
        Value::String(s) => write_string(f, s),
        Value::Array(items) => {
            f.write_str("[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_literal(f, item)?;
            }
            f.write_str("]")
        }
        // Only `{}` is writable; a non-empty object constant cannot come from the parser.
        Value::Object(_) => f.write_str("{}"),
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Literal(v) => write_literal(f, v),
            Expr::Array(items) => {
                f.write_str("[")?;
                write_list(f, items)?;
                f.write_str("]")
            }
            Expr::Name(n) => f.write_str(n),
            Expr::Member(o, name) => {
                write_child(f, o, PREC_POSTFIX)?;
                write!(f, ".{name}")
            }
            Expr::Index(o, i) => {
                write_child(f, o, PREC_POSTFIX)?;
                write!(f, "[{i}]")
            }
            Expr::Call(c) => {
                let op = c.func.and_then(|func| func.operator());
                match (op, c.args.as_slice()) {
                    (Some(op), [operand]) if op.prefix => {
                        f.write_str(op.symbol)?;
                        // `-(3)` and `-(3[0])` must not print as the literal `-3`.
                        let text = operand.to_string();
                        let glued_number = op.symbol == "-"
                            && text.starts_with(|c: char| c.is_ascii_digit() || c == '.');
                        if glued_number || operand.precedence() < op.precedence {
                            write!(f, "({text})")
                        } else {
                            f.write_str(&text)
                        }
                    }
                    (Some(op), [lhs, rhs]) if !op.prefix => {
                        let (lp, rp) = if op.right_assoc {
                            (op.precedence + 1, op.precedence)
                        } else {
                            (op.precedence, op.precedence + 1)
                        };
                        write_child(f, lhs, lp)?;
                        write!(f, " {} ", op.symbol)?;
                        write_child(f, rhs, rp)
                    }
                    _ => {
                        write!(f, "{}(", c.name)?;
                        write_list(f, &c.args)?;
                        f.write_str(")")
                    }
                }
            }
        }
    }
}
