//! The rule-expression language of the Std standard.
//!
//! ```
//! use nidos_expr::{parse, eval, ObjectContext, Value};
//! let expr = parse("sidecar.RepetitionTime > 1").unwrap();
//! let ctx = ObjectContext::from_json(&serde_json::json!({"sidecar": {"RepetitionTime": 2}}));
//! assert_eq!(eval(&expr, &ctx), Value::Bool(true));
//! // Parse once, evaluate many times; the tree prints back as source.
//! assert_eq!(expr.to_string(), "sidecar.RepetitionTime > 1");
//! ```
//!
//! Architecture invariant: this crate never touches the filesystem. Everything it
//! knows about a dataset arrives through the [`Context`] trait.
//!
//! Pieces: `grammar/expr.pest` (syntax) → [`parse`] → [`Expr`] (operators lowered to
//! calls of the one [`registry`]) → [`eval`] with JavaScript-compatible semantics
//! (see `docs/expression-language.md`).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod ast;
pub mod cases;
mod context;
mod eval;
pub mod full_match;
mod functions;
pub mod js;
pub mod jssort;
mod parser;
mod regex_budget;
mod regex_cache;
pub mod registry;
pub mod scan;
mod value;

pub use ast::{Call, Expr};
pub use context::{Context, ObjectContext};
pub use parser::{ParseError, MAX_SOURCE_BYTES};
pub use value::{Object, Value};

/// The ECMAScript patterns whose searches ran past the backtracking engine's time
/// budget in this process (their `match`, `filter` and `replace` gave null); see
/// `docs/reliability.md`.
pub fn regex_over_budget() -> Vec<String> {
    regex_budget::over_budget()
}

/// Parses one expression. Newlines count as whitespace.
pub fn parse(src: &str) -> Result<Expr, ParseError> {
    parser::parse(src)
}

/// Evaluates a parsed expression against a root scope. Never fails: what cannot be
/// computed (missing fields, wrong types, unknown functions) is null.
pub fn eval(expr: &Expr, ctx: &dyn Context) -> Value {
    eval::eval(expr, ctx)
}

/// Parses and evaluates in one step (convenience for one-off evaluations).
pub fn eval_str(src: &str, ctx: &dyn Context) -> Result<Value, ParseError> {
    parse(src).map(|e| eval(&e, ctx))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn expr_is_send_sync() {
        assert_send_sync::<Expr>();
    }
}
