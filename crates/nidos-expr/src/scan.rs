//! The one scanner of expression source text that tells string literals from code:
//! the parser's error hints and nesting limit, the REPL's "input continues" test and
//! the schema's list of called functions all read the source through it, so they agree
//! on where a string starts and ends.
//!
//! A string opens with `"` or `'` and closes with the same quote; inside it a `\`
//! escapes the next character. Nothing else is interpreted: brackets and operators are
//! left to the callers.

/// Where a character of the source stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Outside any string literal.
    Code,
    /// The quote that opens a string literal.
    Open,
    /// Inside a string literal (escapes included).
    Inside,
    /// The quote that closes a string literal.
    Close,
}

/// The characters of `src` with their byte offsets and places.
pub fn scan(src: &str) -> Scan<'_> {
    Scan {
        chars: src.char_indices(),
        state: Scanner::default(),
    }
}

/// Iterator of [`scan`].
#[derive(Clone, Debug)]
pub struct Scan<'a> {
    chars: std::str::CharIndices<'a>,
    state: Scanner,
}

impl Iterator for Scan<'_> {
    type Item = (usize, char, Place);

    fn next(&mut self) -> Option<(usize, char, Place)> {
        let (i, c) = self.chars.next()?;
        Some((i, c, self.state.place(c)))
    }
}

/// The scanner's state between characters, for a text that arrives in pieces (the
/// REPL's lines): feeding it the pieces one after the other places each character as
/// [`scan`] would in the whole text.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scanner {
    quote: Option<char>,
    escaped: bool,
}

impl Scanner {
    /// The place of the next character.
    pub fn place(&mut self, c: char) -> Place {
        match self.quote {
            Some(q) => {
                if self.escaped {
                    self.escaped = false;
                    Place::Inside
                } else if c == '\\' {
                    self.escaped = true;
                    Place::Inside
                } else if c == q {
                    self.quote = None;
                    Place::Close
                } else {
                    Place::Inside
                }
            }
            None if c == '"' || c == '\'' => {
                self.quote = Some(c);
                Place::Open
            }
            None => Place::Code,
        }
    }

    /// Whether a string literal is open.
    pub fn in_string(&self) -> bool {
        self.quote.is_some()
    }
}

/// The byte offset of a string literal that never closes, if any.
pub fn unterminated_string(src: &str) -> Option<usize> {
    let mut open = None;
    for (i, _, place) in scan(src) {
        match place {
            Place::Open => open = Some(i),
            Place::Close => open = None,
            Place::Code | Place::Inside => {}
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::{scan, unterminated_string, Place};

    fn places(src: &str) -> String {
        scan(src)
            .map(|(_, _, p)| match p {
                Place::Code => 'c',
                Place::Open => 'o',
                Place::Inside => 'i',
                Place::Close => 'x',
            })
            .collect()
    }

    #[test]
    fn strings_escapes_and_code() {
        assert_eq!(places(r#"a("b)",'c\'d')"#), "ccoiixcoiiiixc");
        assert_eq!(places(r#""it's""#), "oiiiix");
        assert_eq!(unterminated_string(r#"x == "ab"#), Some(5));
        assert_eq!(unterminated_string(r#"'a\'' + "b""#), None);
        assert_eq!(unterminated_string("é + 'ü"), Some(5));
    }
}
