//! Whole-value matching of an ECMAScript pattern (`^(?:pattern)$`), as formats, TSV
//! cells and labels are checked.
//!
//! The schema's patterns are ECMAScript, so `regress` is the reference engine. It
//! backtracks, and a table of a hundred thousand numeric cells pays for that on every
//! cell. Most patterns, though, use only constructs whose ECMAScript meaning the `regex`
//! crate (a finite automaton, linear time) shares exactly: literals, character classes
//! of literals and ranges, `\d`, groups, alternation, greedy and lazy quantifiers. Such a
//! pattern is translated and run by `regex`; any other construct (lookaround,
//! back-references, `\w`, `\s`, `\b`, Unicode escapes …) keeps the pattern on `regress`.
//! Whether a *whole* string matches is a property of the language the pattern denotes,
//! not of the engine's search order, so both engines give the same answer; a
//! differential test holds them to it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// A compiled whole-value matcher. The ECMAScript form is compiled at once (it decides
/// whether the pattern is valid); the automaton, when the pattern translates, on first use.
///
/// A pattern that stays on the backtracking engine is searched inline when that is cheap
/// (see [`crate::regex_budget::costly`]: a pattern without quantified groups, two
/// unbounded quantifiers or back-references), else under the time budget of
/// [`crate::regex_budget::BUDGET`]: past it the value counts as not matching, the pattern
/// is recorded (`nidos_expr::regex_over_budget`) and every later value with it does not
/// match either, at once.
#[derive(Clone, Debug)]
pub struct FullMatcher {
    pattern: Arc<str>,
    ecmascript: Arc<regress::Regex>,
    /// The pattern in the `regex` crate's syntax, when it translates exactly.
    translated: Option<String>,
    automaton: OnceLock<Option<regex::Regex>>,
    costly: bool,
    exhausted: Arc<AtomicBool>,
}

impl FullMatcher {
    /// Compiles `pattern` for whole-value matching; `Err` with the ECMAScript engine's
    /// message when the pattern is not valid ECMAScript.
    pub fn new(pattern: &str) -> Result<FullMatcher, String> {
        let mut m = FullMatcher::backtracking(pattern)?;
        m.translated = translate(pattern).map(|t| format!("^(?:{t})$"));
        Ok(m)
    }

    /// Compiles `pattern` on the ECMAScript engine only (the reference the automaton
    /// form is tested against).
    pub fn backtracking(pattern: &str) -> Result<FullMatcher, String> {
        let ecmascript =
            regress::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| e.to_string())?;
        Ok(FullMatcher {
            pattern: Arc::from(pattern),
            ecmascript: Arc::new(ecmascript),
            translated: None,
            automaton: OnceLock::new(),
            costly: crate::regex_budget::costly(pattern),
            exhausted: Arc::new(AtomicBool::new(false)),
        })
    }

    fn automaton(&self) -> Option<&regex::Regex> {
        let t = self.translated.as_deref()?;
        self.automaton
            .get_or_init(|| regex::Regex::new(t).ok())
            .as_ref()
    }

    /// Whether all of `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        if let Some(re) = self.automaton() {
            return re.is_match(text);
        }
        // Anchored at both ends, a cheap pattern costs time linear in the text.
        if !self.costly {
            return self.ecmascript.find(text).is_some();
        }
        if self.exhausted.load(Ordering::Relaxed) {
            return false;
        }
        let (re, text) = (self.ecmascript.clone(), text.to_owned());
        match crate::regex_budget::run_budgeted(move || re.find(&text).is_some()) {
            Some(answer) => answer,
            None => {
                self.exhausted.store(true, Ordering::Relaxed);
                crate::regex_budget::record_over_budget(&self.pattern);
                false
            }
        }
    }

    /// Whether the pattern runs on the automaton.
    pub fn is_automaton(&self) -> bool {
        self.automaton().is_some()
    }
}

/// The `regex` crate's spelling of an ECMAScript pattern, or `None` when the pattern
/// uses a construct this translation does not carry over exactly.
pub(crate) fn translate(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let (spelled, next) = escape_outside(&chars, i)?;
                out.push_str(&spelled);
                i = next;
            }
            '[' => i = class(&chars, i, &mut out)?,
            '.' => {
                // ECMAScript's dot: anything but a line terminator.
                out.push_str(r"[^\n\r\x{2028}\x{2029}]");
                i += 1;
            }
            '(' => {
                if chars.get(i + 1) == Some(&'?') {
                    if chars.get(i + 2) != Some(&':') {
                        return None; // lookaround or named group
                    }
                    out.push_str("(?:");
                    i += 3;
                } else {
                    out.push('(');
                    i += 1;
                }
            }
            '{' => {
                let end = quantifier_end(&chars, i)?;
                out.extend(&chars[i..end]);
                i = end;
            }
            ')' | '|' | '*' | '+' | '?' | '^' | '$' => {
                out.push(c);
                i += 1;
            }
            _ => {
                // `]` and `}` alone are literals in ECMAScript (Annex B), as is the rest.
                out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
                i += 1;
            }
        }
    }
    Some(out)
}

/// An escape outside a class, at `chars[i]` (the backslash): its spelling and the index
/// after it.
fn escape_outside(chars: &[char], i: usize) -> Option<(String, usize)> {
    let e = *chars.get(i + 1)?;
    let spelled = match e {
        'd' => "[0-9]".to_string(),
        'D' => "[^0-9]".to_string(),
        'w' => "[0-9A-Za-z_]".to_string(),
        'W' => "[^0-9A-Za-z_]".to_string(),
        's' => format!("[{SPACE}]"),
        'S' => format!("[^{SPACE}]"),
        // ECMAScript's word boundary is ASCII's: between a character of `\w` and one
        // that is not (or an end).
        'b' => r"(?-u:\b)".to_string(),
        'B' => r"(?-u:\B)".to_string(),
        'u' | 'x' => return code_unit(chars, i),
        _ => return escape_simple(e).map(|s| (s, i + 2)),
    };
    Some((spelled, i + 2))
}

/// ECMAScript's `\s`: white space and line terminators, as a class body.
const SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// An escape that stands for one character in and out of classes.
fn escape_simple(e: char) -> Option<String> {
    Some(match e {
        't' => r"\t".to_string(),
        'n' => r"\n".to_string(),
        'r' => r"\r".to_string(),
        'f' => r"\x0C".to_string(),
        'v' => r"\x0B".to_string(),
        _ if is_syntax(e) => regex::escape(e.encode_utf8(&mut [0; 4])),
        _ => return None,
    })
}

/// `\uXXXX` or `\xHH` at `chars[i]`: the character (not a surrogate, which stands for
/// half a character), and the index after it. Anything else (`\u{…}`, too few digits) is
/// left to the ECMAScript engine.
fn code_unit(chars: &[char], i: usize) -> Option<(String, usize)> {
    let digits = if chars.get(i + 1) == Some(&'u') { 4 } else { 2 };
    let hex: String = chars.get(i + 2..i + 2 + digits)?.iter().collect();
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let code = u32::from_str_radix(&hex, 16).ok()?;
    let c = char::from_u32(code)?;
    Some((format!(r"\x{{{:X}}}", u32::from(c)), i + 2 + digits))
}

/// Characters an escape turns into themselves in both languages.
fn is_syntax(c: char) -> bool {
    matches!(
        c,
        '.' | '^'
            | '$'
            | '|'
            | '?'
            | '*'
            | '+'
            | '('
            | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | '/'
            | '\\'
            | '-'
    )
}

/// `{n}`, `{n,}` or `{n,m}` starting at `i`: the index after it. Anything else (a brace
/// ECMAScript would read as a literal) is left to the ECMAScript engine.
fn quantifier_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let digits = |j: &mut usize| {
        let from = *j;
        while chars.get(*j).is_some_and(char::is_ascii_digit) {
            *j += 1;
        }
        *j > from
    };
    if !digits(&mut j) {
        return None;
    }
    if chars.get(j) == Some(&',') {
        j += 1;
        digits(&mut j);
    }
    (chars.get(j) == Some(&'}')).then_some(j + 1)
}

/// A character class starting at `i` (`[`), written to `out`: the index after it.
fn class(chars: &[char], i: usize, out: &mut String) -> Option<usize> {
    let mut j = i + 1;
    out.push('[');
    if chars.get(j) == Some(&'^') {
        out.push('^');
        j += 1;
    }
    // `[]` matches nothing and `[^]` anything in ECMAScript; `regex` reads them otherwise.
    if chars.get(j) == Some(&']') {
        return None;
    }
    let mut prev_dash = false;
    while let Some(&c) = chars.get(j) {
        match c {
            ']' => {
                out.push(']');
                return Some(j + 1);
            }
            '\\' => {
                let e = *chars.get(j + 1)?;
                match e {
                    // A class escape cannot end a range, and a `-` after one is a
                    // literal in ECMAScript but a range in `regex`.
                    'd' | 'w' | 's' if prev_dash || chars.get(j + 2) == Some(&'-') => return None,
                    'd' => out.push_str("0-9"),
                    'w' => out.push_str("0-9A-Za-z_"),
                    's' => out.push_str(SPACE),
                    'u' | 'x' => {
                        let (spelled, next) = code_unit(chars, j)?;
                        out.push_str(&spelled);
                        prev_dash = false;
                        j = next;
                        continue;
                    }
                    _ => out.push_str(&escape_simple(e)?),
                }
                prev_dash = false;
                j += 2;
                continue;
            }
            '-' => {
                // `--` is a set difference in `regex`.
                if prev_dash {
                    return None;
                }
                out.push('-');
                prev_dash = true;
                j += 1;
                continue;
            }
            // Literals in an ECMAScript class that `regex` reads as syntax.
            '[' | '&' | '~' | '^' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        prev_dash = false;
        j += 1;
    }
    None // unterminated
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Patterns of the kinds the schema uses, and the strings to try on each.
    pub(crate) const PATTERNS: &[&str] = &[
        r" *[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)? *",
        r" *[+-]?\d+ *",
        r".*",
        r"[0-9a-zA-Z]+",
        r"[0-9a-zA-Z+]+",
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?",
        r"(sub|ses)-[^_/]+",
        r"[a-z]{2,}",
        r"a{2}b?",
        r"x{,3}",
        r"[]a]",
        r"[^]",
        r"a]b}",
        r"[a-c-e]",
        r"[\w]+",
        r"(?=a)a",
        r"[&~^[]+",
        r"\.nii(\.gz)?",
        r"n/a|[0-9]+",
        r"\u0041",
        r"(a|ab)(c|bcd)(d*)",
        r"[\-.]?x",
        r"\w+\s\w+",
        r"\bfoo\b",
        r"\Bx",
        r"[\s\w]+",
        r"\x41\u00e9",
        r"[\u0041-\u005A]+",
        r"[\d-x]",
        r"[\w-]+",
        r"\S+\W",
        r"a\fb\v",
        r"\u{41}",
        r"\ud83d",
        r"(?!/)[0-9a-zA-Z+/_\-.]+",
        r"(a)\1",
        r"(a+)+$",
        r"^(a*)*\1b",
    ];

    pub(crate) const TEXTS: &[&str] = &[
        "",
        "a",
        "ab",
        "abcd",
        "aab",
        "x",
        "xx",
        "xxxx",
        "]",
        "a]b}",
        "1",
        "-1",
        " 12 ",
        "1.5",
        ".5",
        "5.",
        "1e3",
        "1E+3",
        "e3",
        "1.2.3",
        "n/a",
        "2020-01-01T10:00:00Z",
        "2020-01-01T10:00:00.123",
        "sub-01",
        "ses-a_b",
        "abc",
        "d",
        "b",
        "-",
        "&~^[",
        ".nii",
        ".nii.gz",
        "nii",
        "A",
        "\n",
        "a\nb",
        "ab\r",
        "é",
        "日本",
        "x-",
        "e",
        "[",
        "~",
        "&",
        "foo bar",
        "foo",
        "xfoo",
        "a_1 ",
        "a\u{a0}b",
        "\t",
        "Aé",
        "AAA",
        "aa",
        "aab",
        "/x",
        "a\u{c}b\u{b}",
        "uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu",
    ];

    /// Every pattern of the upstream schemas: format patterns and the literal patterns
    /// of `match` calls in rule expressions.
    pub(crate) fn schema_patterns() -> Vec<String> {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/conformance/schemas"
        );
        let mut found = std::collections::BTreeSet::new();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new(); // shared material absent: the fixed list still runs
        };
        for entry in entries.flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            collect(&json, &mut found);
        }
        found.into_iter().collect()
    }

    fn collect(v: &serde_json::Value, found: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(o) => {
                for (k, item) in o {
                    if let (true, Some(p)) = (k == "pattern", item.as_str()) {
                        found.insert(p.to_string());
                    }
                    collect(item, found);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| collect(i, found)),
            serde_json::Value::String(s) => {
                if let Ok(expr) = crate::parse(s) {
                    match_literals(&expr, found);
                }
            }
            _ => {}
        }
    }

    fn match_literals(e: &crate::Expr, found: &mut std::collections::BTreeSet<String>) {
        if let crate::Expr::Call(c) = e {
            if let (true, Some(crate::Expr::Literal(crate::Value::String(p)))) =
                (&*c.name == "match", c.args.get(1))
            {
                found.insert(p.to_string());
            }
            c.args.iter().for_each(|a| match_literals(a, found));
        }
    }

    /// Strings of the kinds the schema's patterns test: paths, suffixes, labels, numbers.
    pub(crate) const SCHEMA_TEXTS: &[&str] = &[
        "sub-01/anat/sub-01_T1w.nii.gz",
        "sub-01_task-rest_bold.json",
        "stimuli/a.png",
        "/abs",
        "code/x.py",
        "sub-01",
        "T1w",
        "_bold.nii",
        ".tsv",
        "n/a",
        "0.5",
        "2020-01-01",
        "12:00:00",
        "https://doi.org/10.1/x",
        "CC0",
        "a b",
        "MRI",
        "[1,2]",
    ];

    #[test]
    fn automaton_agrees_with_ecmascript_on_every_schema_pattern() {
        let patterns = schema_patterns();
        for p in &patterns {
            let (Ok(fast), Ok(slow)) = (FullMatcher::new(p), FullMatcher::backtracking(p)) else {
                continue; // not valid ECMAScript: both sides reject it (tested above)
            };
            for t in SCHEMA_TEXTS.iter().chain(TEXTS) {
                assert_eq!(fast.matches(t), slow.matches(t), "pattern {p:?} on {t:?}");
            }
        }
    }

    #[test]
    fn automaton_agrees_with_ecmascript_on_every_pattern() {
        for p in PATTERNS {
            let (Ok(fast), Ok(slow)) = (FullMatcher::new(p), FullMatcher::backtracking(p)) else {
                assert!(
                    FullMatcher::new(p).is_err(),
                    "{p} compiles on one side only"
                );
                continue;
            };
            for t in TEXTS {
                assert_eq!(fast.matches(t), slow.matches(t), "pattern {p:?} on {t:?}");
            }
        }
    }

    #[test]
    fn common_patterns_run_on_the_automaton() {
        for p in [
            PATTERNS[0],
            PATTERNS[1],
            PATTERNS[2],
            PATTERNS[5],
            PATTERNS[6],
        ] {
            assert!(FullMatcher::new(p).is_ok_and(|m| m.is_automaton()), "{p}");
        }
        for p in [r"[\w]+", r"\w\s\b", r"\u0041", r"[\x41-\x43]"] {
            assert!(FullMatcher::new(p).is_ok_and(|m| m.is_automaton()), "{p}");
        }
        for p in [
            r"(?=a)a", r"[]a]", r"[^]", r"\u{41}", r"x{,3}", r"(a)\1", r"[\w-]",
        ] {
            assert!(FullMatcher::new(p).is_ok_and(|m| !m.is_automaton()), "{p}");
        }
    }

    #[test]
    fn costly_backtracking_stays_within_its_budget() {
        let m = FullMatcher::new(r"(a*)*\1b").unwrap_or_else(|e| panic!("{e}"));
        assert!(!m.is_automaton());
        assert!(m.matches("aab"));
        let start = std::time::Instant::now();
        assert!(!m.matches(&format!("{}!", "a".repeat(40))));
        assert!(start.elapsed() < crate::regex_budget::BUDGET * 3);
        assert!(crate::regex_over_budget().contains(&r"(a*)*\1b".to_string()));
    }

    #[test]
    fn invalid_ecmascript_is_rejected() {
        assert!(FullMatcher::new("(").is_err());
        assert!(FullMatcher::new("a{2,1}").is_err());
    }
}
