//! The one registry of everything callable: operators (under names such as `_==_`
//! and `!_`) and the built-in functions. The parser resolves a name once; the
//! interpreter dispatches on the resolved [`Func`].

// Binding strengths of the operators, for printing (higher binds tighter).
pub(crate) const PREC_OR: u8 = 1;
pub(crate) const PREC_AND: u8 = 2;
pub(crate) const PREC_NOT: u8 = 3;
pub(crate) const PREC_CMP: u8 = 4;
pub(crate) const PREC_ADD: u8 = 5;
pub(crate) const PREC_MUL: u8 = 6;
pub(crate) const PREC_POW: u8 = 7;
pub(crate) const PREC_NEG: u8 = 8;
pub(crate) const PREC_POSTFIX: u8 = 9;

/// How an operator is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Operator {
    pub symbol: &'static str,
    pub precedence: u8,
    pub prefix: bool,
    pub right_assoc: bool,
}

/// A registry entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    // Operators.
    Or,
    And,
    Not,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Neg,
    // Functions.
    Match,
    Type,
    Intersects,
    Length,
    Exists,
    Count,
    Index,
    Min,
    Max,
    Sorted,
    Substr,
    AllEqual,
    Unique,
    Lower,
    Replace,
    Filter,
    Zip,
}

/// One row of the registry.
pub struct Entry {
    /// Registry name: the function name, or `_op_` / `op_` for operators.
    pub name: &'static str,
    pub func: Func,
    /// Accepted argument counts (inclusive).
    pub min_args: usize,
    pub max_args: usize,
    /// One-line description (REPL `:help`, docs).
    pub summary: &'static str,
    operator: Option<Operator>,
}

const fn op(
    name: &'static str,
    func: Func,
    symbol: &'static str,
    precedence: u8,
    prefix: bool,
    summary: &'static str,
) -> Entry {
    let n = if prefix { 1 } else { 2 };
    Entry {
        name,
        func,
        min_args: n,
        max_args: n,
        summary,
        operator: Some(Operator {
            symbol,
            precedence,
            prefix,
            right_assoc: matches!(func, Func::Pow),
        }),
    }
}

const fn function(
    name: &'static str,
    func: Func,
    min_args: usize,
    max_args: usize,
    summary: &'static str,
) -> Entry {
    Entry {
        name,
        func,
        min_args,
        max_args,
        summary,
        operator: None,
    }
}

/// Every operator and function, operators first (one entry a line).
#[rustfmt::skip]
pub static REGISTRY: &[Entry] = &[
    op("_||_", Func::Or, "||", PREC_OR, false, "a if a is truthy, else b"),
    op("_&&_", Func::And, "&&", PREC_AND, false, "a if a is falsy, else b"),
    op("!_", Func::Not, "!", PREC_NOT, true, "true if the operand is falsy"),
    op("_==_", Func::Eq, "==", PREC_CMP, false, "structural equality"),
    op("_!=_", Func::Ne, "!=", PREC_CMP, false, "negated equality"),
    op("_<_", Func::Lt, "<", PREC_CMP, false, "less than"),
    op("_<=_", Func::Le, "<=", PREC_CMP, false, "less than or equal"),
    op("_>_", Func::Gt, ">", PREC_CMP, false, "greater than"),
    op("_>=_", Func::Ge, ">=", PREC_CMP, false, "greater than or equal"),
    op("_in_", Func::In, "in", PREC_CMP, false, "membership: array item, object key, substring"),
    op("_+_", Func::Add, "+", PREC_ADD, false, "addition or string concatenation"),
    op("_-_", Func::Sub, "-", PREC_ADD, false, "subtraction"),
    op("_*_", Func::Mul, "*", PREC_MUL, false, "multiplication"),
    op("_/_", Func::Div, "/", PREC_MUL, false, "division"),
    op("_%_", Func::Rem, "%", PREC_MUL, false, "remainder"),
    op("_**_", Func::Pow, "**", PREC_POW, false, "power (right-associative)"),
    op("-_", Func::Neg, "-", PREC_NEG, true, "negation"),
    function("match", Func::Match, 2, 2, "match(str, regex): regex search (ECMAScript syntax)"),
    function("type", Func::Type, 1, 1, "type(x): null, boolean, number, string, array or object"),
    function("intersects", Func::Intersects, 2, 2, "intersects(a, b): the shared items, or false when none"),
    function("length", Func::Length, 1, 1, "length(x): items of an array, characters of a string"),
    function("exists", Func::Exists, 1, 2, "exists(paths, rule): how many paths exist (rule: dataset, subject, stimuli, file, <scheme>-uri)"),
    function("count", Func::Count, 2, 2, "count(list, value): how many items equal value"),
    function("index", Func::Index, 2, 2, "index(list, value): first position of value, or null"),
    function("min", Func::Min, 1, 1, "min(list): smallest number, ignoring non-numbers such as n/a"),
    function("max", Func::Max, 1, 1, "max(list): largest number, ignoring non-numbers such as n/a"),
    function("sorted", Func::Sorted, 1, 2, "sorted(list, method): sorted copy; method auto, numeric or lexical"),
    function("substr", Func::Substr, 3, 3, "substr(str, start, end): characters start..end"),
    function("allequal", Func::AllEqual, 2, 2, "allequal(a, b): same length and equal items"),
    function("unique", Func::Unique, 1, 1, "unique(list): items without repeats, first kept"),
    function("lower", Func::Lower, 1, 1, "lower(x): lower-case string, or each string of a list"),
    function("replace", Func::Replace, 3, 3, "replace(x, regex, text): every match replaced, in a string or each string of a list"),
    function("filter", Func::Filter, 2, 2, "filter(list, regex): the string items that match"),
    function("zip", Func::Zip, 2, 2, "zip(a, b): the pairs [a[i], b[i]], as long as the shorter list"),
];

/// Resolves a registry name (function name or operator name such as `_==_`).
pub fn lookup(name: &str) -> Option<Func> {
    REGISTRY.iter().find(|e| e.name == name).map(|e| e.func)
}

/// The registry row of a resolved entry.
pub fn entry(func: Func) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.func == func)
}

/// The names of the built-in functions (not operators), in registry order.
pub fn function_names() -> impl Iterator<Item = &'static str> {
    REGISTRY
        .iter()
        .filter(|e| e.operator.is_none())
        .map(|e| e.name)
}

impl Func {
    pub(crate) fn operator(self) -> Option<Operator> {
        entry(self).and_then(|e| e.operator)
    }

    /// The registry name.
    pub fn name(self) -> &'static str {
        entry(self).map(|e| e.name).unwrap_or("?")
    }
}
