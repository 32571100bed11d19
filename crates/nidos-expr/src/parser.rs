//! From source text to [`Expr`], through the pest grammar in `grammar/expr.pest`.

use std::sync::Arc;

use pest::iterators::Pair;
use pest::Parser as _;

use crate::ast::Expr;
use crate::registry::{self, REGISTRY};
use crate::scan::{scan, unterminated_string, Place};
use crate::value::Value;

#[derive(pest_derive::Parser)]
#[grammar = "../../grammar/expr.pest"]
struct Grammar;

/// Why a text is not an expression, and where.
///
/// Variants of the message, each with an input that triggers it:
/// - `expected an operand, found the end of input` — `1 +`
/// - `expected an operator or the end of the expression, found \`b\`` — `a b`
/// - `expected an operator or \`)\`` — `(1`; `…, \`,\` or \`]\`` — `[1, 2`
/// - `expected a name` — `a.`
/// - `unterminated string: expected a closing quote` — `"abc`
/// - `wrong number of arguments: \`length\` takes 1, found 2` — `length(1, 2)`
/// - `invalid number` — never in practice (the grammar only admits valid numbers)
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line}, column {column}")]
pub struct ParseError {
    /// What went wrong, saying what was expected.
    pub message: String,
    /// Byte offset into the source.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
}

impl ParseError {
    fn at(src: &str, offset: usize, message: String) -> ParseError {
        let offset = offset.min(src.len());
        let before = src.get(..offset).unwrap_or(src);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let column = before.get(line_start..).unwrap_or("").chars().count() + 1;
        ParseError {
            message,
            offset,
            line,
            column,
        }
    }

    /// The source line holding the error and a caret under the column, for display.
    /// A long line shows only [`SNIPPET_CHARS`] characters around the column, with `…`
    /// where it was cut.
    pub fn snippet(&self, src: &str) -> String {
        let line = src.lines().nth(self.line - 1).unwrap_or("");
        let col = self.column - 1;
        let from = col.saturating_sub(SNIPPET_CHARS / 2);
        let shown: String = line.chars().skip(from).take(SNIPPET_CHARS).collect();
        let cut_before = from > 0;
        let cut_after = line.chars().nth(from + SNIPPET_CHARS).is_some();
        let pad: String = line
            .chars()
            .skip(from)
            .take(col - from)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let (lead, lead_pad) = if cut_before { ("…", " ") } else { ("", "") };
        let tail = if cut_after { "…" } else { "" };
        format!("{lead}{shown}{tail}\n{lead_pad}{pad}^")
    }
}

/// How many characters of a source line [`ParseError::snippet`] shows at most.
pub const SNIPPET_CHARS: usize = 120;

/// What a grammar rule stands for in an error message.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Expected {
    Operand,
    Name,
    Operator,
    End,
}

fn classify(rule: &Rule) -> Option<Expected> {
    Some(match rule {
        Rule::EOI => Expected::End,
        Rule::or_op
        | Rule::and_op
        | Rule::cmp_op
        | Rule::in_op
        | Rule::add_op
        | Rule::mul_op
        | Rule::pow_op
        | Rule::member
        | Rule::index => Expected::Operator,
        Rule::ident => Expected::Name,
        Rule::dq_string | Rule::sq_string | Rule::ident_char | Rule::WHITESPACE => return None,
        _ => Expected::Operand,
    })
}

/// The innermost bracket still open at `offset`, and whether a `,` may follow
/// (call arguments and array items).
fn open_bracket(src: &str, offset: usize) -> Option<(char, bool)> {
    let mut stack: Vec<(char, bool)> = Vec::new();
    let mut prev_significant: Option<char> = None;
    for (i, c, place) in scan(src) {
        if i >= offset {
            break;
        }
        match place {
            Place::Inside => continue,
            Place::Open | Place::Close => {
                prev_significant = Some(c);
                continue;
            }
            Place::Code => {}
        }
        let after_operand = prev_significant.is_some_and(|p| {
            p.is_alphanumeric() || matches!(p, '_' | '$' | ')' | ']' | '"' | '\'')
        });
        match c {
            '(' => stack.push((')', after_operand)),
            '[' => stack.push((']', !after_operand)),
            ')' | ']' => {
                stack.pop();
            }
            _ => {}
        }
        if !c.is_whitespace() {
            prev_significant = Some(c);
        }
    }
    stack.pop()
}

fn convert_error(src: &str, e: pest::error::Error<Rule>) -> ParseError {
    let offset = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let message = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            if let Some(at) = unterminated_string(src) {
                let msg = "unterminated string: expected a closing quote";
                return ParseError::at(src, at, msg.into());
            }
            let mut kinds: Vec<Expected> = positives.iter().filter_map(classify).collect();
            kinds.sort();
            kinds.dedup();
            let mut wanted: Vec<String> = Vec::new();
            for k in &kinds {
                match k {
                    Expected::Operand => wanted.push("an operand".into()),
                    Expected::Name => wanted.push("a name".into()),
                    Expected::Operator => {
                        wanted.push("an operator".into());
                        if let Some((closer, comma)) = open_bracket(src, offset) {
                            if comma {
                                wanted.push("`,`".into());
                            }
                            wanted.push(format!("`{closer}`"));
                        }
                    }
                    Expected::End => wanted.push("the end of the expression".into()),
                }
            }
            if wanted.is_empty() {
                wanted.push("an operand".into());
            }
            let list = match wanted.as_slice() {
                [one] => one.clone(),
                [init @ .., last] => format!("{} or {}", init.join(", "), last),
                [] => String::new(),
            };
            let found = match src.get(offset..).and_then(|r| r.chars().next()) {
                None => "the end of input".to_string(),
                Some(c) => format!("`{c}`"),
            };
            format!("expected {list}, found {found}")
        }
        pest::error::ErrorVariant::CustomError { message } => message.clone(),
    };
    ParseError::at(src, offset, message)
}

/// How deeply expressions may nest (brackets, prefix operators, `**` chains) and how
/// deep the resulting tree may be. Real rules stay far below; the limit keeps the
/// recursive parser and interpreter clear of stack overflows on hostile input.
pub const MAX_NESTING: usize = 128;
const MAX_TREE_DEPTH: usize = 2 * MAX_NESTING;

/// The longest expression source accepted, in bytes. Rules are a few hundred bytes;
/// the generated parser holds some hundreds of bytes per source byte while it works,
/// so longer text is refused before it is parsed.
pub const MAX_SOURCE_BYTES: usize = 256 * 1024;

/// Parses one expression.
pub fn parse(src: &str) -> Result<Expr> {
    if src.len() > MAX_SOURCE_BYTES {
        return Err(ParseError::at(
            src,
            0,
            format!(
                "expression too long ({} bytes; the limit is {MAX_SOURCE_BYTES})",
                src.len()
            ),
        ));
    }
    let nesting = check_nesting(src)?;
    if nesting > SHALLOW {
        // Recursive descent through the generated parser costs a lot of stack per
        // level (tens of KiB in debug builds); deep inputs get a thread of their own.
        let joined = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(DEEP_STACK)
                .spawn_scoped(s, || parse_unchecked(src))
                .map(|handle| handle.join())
        });
        return match joined {
            Ok(Ok(result)) => result,
            _ => Err(ParseError::at(
                src,
                0,
                "expression nested too deeply".into(),
            )),
        };
    }
    parse_unchecked(src)
}

/// Nesting up to this depth parses on the caller's stack.
const SHALLOW: usize = 12;
const DEEP_STACK: usize = 64 << 20;

fn parse_unchecked(src: &str) -> Result<Expr> {
    let mut pairs = Grammar::parse(Rule::expression, src).map_err(|e| convert_error(src, e))?;
    let top = pairs
        .next()
        .ok_or_else(|| ParseError::at(src, 0, "expected an expression".into()))?;
    let inner = top
        .into_inner()
        .next()
        .ok_or_else(|| ParseError::at(src, 0, "expected an expression".into()))?;
    let expr = build(src, inner)?;
    if tree_depth(&expr) > MAX_TREE_DEPTH {
        return Err(ParseError::at(
            src,
            0,
            format!("expression nested too deeply (more than {MAX_TREE_DEPTH} levels)"),
        ));
    }
    Ok(expr)
}

/// Rejects bracket nesting, runs of prefix operators and `**` chains beyond
/// [`MAX_NESTING`] before the recursive-descent parser sees them.
/// Returns the deepest nesting seen.
fn check_nesting(src: &str) -> Result<usize> {
    let mut depth = 0usize;
    let mut prefix_run = 0usize;
    let mut pow_count = 0usize;
    let mut prev: Option<char> = None;
    let mut deepest = 0usize;
    for (i, c, place) in scan(src) {
        match place {
            Place::Inside | Place::Close => continue,
            Place::Open => {}
            Place::Code => match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                '*' if prev == Some('*') => pow_count += 1,
                _ => {}
            },
        }
        if matches!(c, '!' | '-') {
            prefix_run += 1;
        } else if !c.is_whitespace() {
            prefix_run = 0;
        }
        if depth > MAX_NESTING || prefix_run > MAX_NESTING || pow_count > MAX_NESTING {
            return Err(ParseError::at(
                src,
                i,
                format!("expression nested too deeply (limit {MAX_NESTING})"),
            ));
        }
        deepest = deepest.max(depth + prefix_run + pow_count);
        prev = Some(c);
    }
    Ok(deepest)
}

/// The depth of a tree, computed without recursion.
fn tree_depth(e: &Expr) -> usize {
    let mut max = 0;
    let mut stack = vec![(e, 1usize)];
    while let Some((node, d)) = stack.pop() {
        max = max.max(d);
        match node {
            Expr::Literal(_) | Expr::Name(_) => {}
            Expr::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Expr::Member(o, _) => stack.push((o, d + 1)),
            Expr::Index(o, i) => {
                stack.push((o, d + 1));
                stack.push((i, d + 1));
            }
            Expr::Call(c) => stack.extend(c.args.iter().map(|a| (a, d + 1))),
        }
        if max > MAX_TREE_DEPTH {
            break;
        }
    }
    max
}

type Result<T> = std::result::Result<T, ParseError>;

fn bug(src: &str, pair: &Pair<Rule>) -> ParseError {
    ParseError::at(
        src,
        pair.as_span().start(),
        format!("internal parser error at {:?}", pair.as_rule()),
    )
}

fn too_deep(src: &str, pair: &Pair<Rule>) -> ParseError {
    ParseError::at(
        src,
        pair.as_span().start(),
        format!("expression nested too deeply (more than {MAX_TREE_DEPTH} operators in a chain)"),
    )
}

fn build(src: &str, pair: Pair<Rule>) -> Result<Expr> {
    match pair.as_rule() {
        Rule::or_expr | Rule::and_expr | Rule::cmp_expr | Rule::add_expr | Rule::mul_expr => {
            let mut inner = pair.into_inner();
            let first = inner
                .next()
                .ok_or_else(|| ParseError::at(src, 0, "empty".into()))?;
            let mut lhs = build(src, first)?;
            let mut ops = 0usize;
            while let Some(op) = inner.next() {
                ops += 1;
                if ops > MAX_TREE_DEPTH {
                    return Err(too_deep(src, &op));
                }
                let rhs_pair = inner.next().ok_or_else(|| bug(src, &op))?;
                let rhs = build(src, rhs_pair)?;
                let name = binary_name(op.as_str().trim());
                lhs = Expr::call(&name, vec![lhs, rhs]);
            }
            Ok(lhs)
        }
        Rule::pow_expr => {
            let mut inner = pair.into_inner();
            let base_pair = inner
                .next()
                .ok_or_else(|| ParseError::at(src, 0, "empty".into()))?;
            let base = build(src, base_pair)?;
            match (inner.next(), inner.next()) {
                (Some(_op), Some(exp)) => Ok(Expr::call("_**_", vec![base, build(src, exp)?])),
                _ => Ok(base),
            }
        }
        Rule::not_expr | Rule::unary => {
            let span_start = pair.as_span().start();
            let mut inner = pair.into_inner();
            let first = inner
                .next()
                .ok_or_else(|| ParseError::at(src, span_start, "empty".into()))?;
            match first.as_rule() {
                Rule::not_op | Rule::neg_op => {
                    let name = if first.as_rule() == Rule::not_op {
                        "!_"
                    } else {
                        "-_"
                    };
                    let operand = inner.next().ok_or_else(|| bug(src, &first))?;
                    Ok(Expr::call(name, vec![build(src, operand)?]))
                }
                _ => build(src, first),
            }
        }
        Rule::postfix => {
            let mut inner = pair.into_inner();
            let first = inner
                .next()
                .ok_or_else(|| ParseError::at(src, 0, "empty".into()))?;
            let mut e = build(src, first)?;
            for (n, p) in inner.enumerate() {
                if n >= MAX_TREE_DEPTH {
                    return Err(too_deep(src, &p));
                }
                match p.as_rule() {
                    Rule::member => {
                        let name = p.into_inner().next().map(|n| n.as_str()).unwrap_or("");
                        e = Expr::Member(Box::new(e), Arc::from(name));
                    }
                    Rule::index => {
                        let start = p.as_span().start();
                        let idx = p.into_inner().next().ok_or_else(|| {
                            ParseError::at(src, start, "expected an index".into())
                        })?;
                        e = Expr::Index(Box::new(e), Box::new(build(src, idx)?));
                    }
                    _ => return Err(bug(src, &p)),
                }
            }
            Ok(e)
        }
        Rule::paren => {
            let start = pair.as_span().start();
            let inner = pair
                .into_inner()
                .next()
                .ok_or_else(|| ParseError::at(src, start, "expected an expression".into()))?;
            build(src, inner)
        }
        Rule::number => {
            let text = pair.as_str();
            match text.parse::<f64>() {
                Ok(n) => Ok(Expr::Literal(Value::Number(n))),
                Err(_) => Err(ParseError::at(
                    src,
                    pair.as_span().start(),
                    format!("invalid number `{text}`"),
                )),
            }
        }
        Rule::string => {
            let raw = pair.into_inner().next().map(|p| p.as_str()).unwrap_or("");
            Ok(Expr::Literal(Value::str(unescape(raw))))
        }
        Rule::array => {
            let items = pair
                .into_inner()
                .map(|p| build(src, p))
                .collect::<Result<Vec<_>>>()?;
            Ok(Expr::array(items))
        }
        Rule::object => Ok(Expr::Literal(Value::object(Default::default()))),
        Rule::name => Ok(match pair.as_str() {
            "true" => Expr::Literal(Value::Bool(true)),
            "false" => Expr::Literal(Value::Bool(false)),
            "null" => Expr::Literal(Value::Null),
            other => Expr::Name(Arc::from(other)),
        }),
        Rule::call => {
            let start = pair.as_span().start();
            let mut inner = pair.into_inner();
            let name_pair = inner
                .next()
                .ok_or_else(|| ParseError::at(src, start, "empty".into()))?;
            let name = name_pair.as_str();
            let args = inner.map(|p| build(src, p)).collect::<Result<Vec<_>>>()?;
            if let Some(func) = registry::lookup(name) {
                if let Some(entry) = REGISTRY.iter().find(|e| e.func == func) {
                    if args.len() < entry.min_args || args.len() > entry.max_args {
                        let want = if entry.min_args == entry.max_args {
                            format!("{}", entry.min_args)
                        } else {
                            format!("{} to {}", entry.min_args, entry.max_args)
                        };
                        return Err(ParseError::at(
                            src,
                            start,
                            format!(
                                "wrong number of arguments: `{name}` takes {want}, found {}",
                                args.len()
                            ),
                        ));
                    }
                }
            }
            Ok(Expr::call(name, args))
        }
        _ => Err(bug(src, &pair)),
    }
}

fn binary_name(op: &str) -> String {
    format!("_{op}_")
}

/// Resolves escapes: `\\` is one backslash and a backslash before a quote is the
/// quote; any other backslash stays, so `'\.nii'` keeps its regex escape.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n @ ('\\' | '"' | '\'')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}
