//! The rule-expression language of the Std standard.
//!
//! ```ignore
//! use nidos_expr::{parse, eval, ObjectContext, Value};
//! let expr = parse("sidecar.RepetitionTime > 1").unwrap();
//! let ctx = ObjectContext::from_json(&serde_json::json!({"sidecar": {"RepetitionTime": 2}}));
//! assert_eq!(eval(&expr, &ctx), Value::Bool(true));
//! ```
//!
//! Architecture invariant: this crate never touches the filesystem. Everything it
//! knows about a dataset arrives through the [`Context`] trait.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod context;
mod value;

pub use context::{Context, ObjectContext};
pub use value::{Object, Value};

/// Placeholder until the parser lands (issue 2).
#[derive(Clone, Debug, PartialEq)]
pub struct Expr;

/// A parse error with its byte offset and what was expected there.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message} at line {line}, column {column}")]
pub struct ParseError {
    pub message: String,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

pub fn parse(_src: &str) -> Result<Expr, ParseError> {
    Err(ParseError { message: "parser not built yet".into(), offset: 0, line: 1, column: 1 })
}

pub fn eval(_expr: &Expr, _ctx: &dyn Context) -> Value {
    Value::Null
}
