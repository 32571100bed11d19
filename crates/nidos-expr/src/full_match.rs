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

use std::sync::OnceLock;

/// A compiled whole-value matcher. The ECMAScript form is compiled at once (it decides
/// whether the pattern is valid); the automaton, when the pattern translates, on first use.
#[derive(Clone, Debug)]
pub struct FullMatcher {
    ecmascript: regress::Regex,
    /// The pattern in the `regex` crate's syntax, when it translates exactly.
    translated: Option<String>,
    automaton: OnceLock<Option<regex::Regex>>,
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
            ecmascript,
            translated: None,
            automaton: OnceLock::new(),
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
        match self.automaton() {
            Some(re) => re.is_match(text),
            None => self.ecmascript.find(text).is_some(),
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
                let e = *chars.get(i + 1)?;
                out.push_str(&escape_outside(e)?);
                i += 2;
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

/// An escape outside a class.
fn escape_outside(e: char) -> Option<String> {
    Some(match e {
        'd' => "[0-9]".to_string(),
        'D' => "[^0-9]".to_string(),
        't' => r"\t".to_string(),
        'n' => r"\n".to_string(),
        'r' => r"\r".to_string(),
        _ if is_syntax(e) => regex::escape(e.encode_utf8(&mut [0; 4])),
        _ => return None,
    })
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
                    'd' => out.push_str("0-9"),
                    't' => out.push_str(r"\t"),
                    'n' => out.push_str(r"\n"),
                    'r' => out.push_str(r"\r"),
                    _ if is_syntax(e) => out.push_str(&regex::escape(e.encode_utf8(&mut [0; 4]))),
                    _ => return None,
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
    ];

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
        for p in [r"[\w]+", r"(?=a)a", r"[]a]", r"[^]", r"\u0041", r"x{,3}"] {
            assert!(FullMatcher::new(p).is_ok_and(|m| !m.is_automaton()), "{p}");
        }
    }

    #[test]
    fn invalid_ecmascript_is_rejected() {
        assert!(FullMatcher::new("(").is_err());
        assert!(FullMatcher::new("a{2,1}").is_err());
    }
}
