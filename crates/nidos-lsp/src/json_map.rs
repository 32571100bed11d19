//! Where things are in a JSON document: the byte ranges of keys and values (from
//! `jsonc-parser`'s syntax tree, for a document that parses), and what the cursor is on
//! while the document is being typed (from its token scanner, which needs no complete
//! document).

use jsonc_parser::ast::{ObjectPropName, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::tokens::Token;
use jsonc_parser::{CollectOptions, ParseOptions, Scanner, ScannerOptions};

/// One member of an object, with the object keys leading to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Keys from the top-level object down to this member's (its own last).
    pub path: Vec<String>,
    /// Bytes of the key, quotes included.
    pub key: (usize, usize),
    /// Bytes of the value.
    pub value: (usize, usize),
}

/// Every object member of a document, in document order; empty when it does not parse.
pub fn members(text: &str) -> Vec<Member> {
    let Ok(parsed) =
        jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(v) = &parsed.value {
        collect(v, &mut Vec::new(), &mut out);
    }
    out
}

fn collect(v: &Value<'_>, path: &mut Vec<String>, out: &mut Vec<Member>) {
    match v {
        Value::Object(o) => {
            for p in &o.properties {
                let (name, range) = match &p.name {
                    ObjectPropName::String(s) => (s.value.to_string(), s.range),
                    ObjectPropName::Word(w) => (w.value.to_owned(), w.range),
                };
                path.push(name);
                let vr = p.value.range();
                out.push(Member {
                    path: path.clone(),
                    key: (range.start, range.end),
                    value: (vr.start, vr.end),
                });
                collect(&p.value, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for e in &a.elements {
                collect(e, path, out);
            }
        }
        _ => {}
    }
}

/// The first member named `key` at the shallowest depth it occurs.
pub fn find_key<'m>(members: &'m [Member], key: &str) -> Option<&'m Member> {
    members
        .iter()
        .filter(|m| m.path.last().map(String::as_str) == Some(key))
        .min_by_key(|m| m.path.len())
}

/// What the cursor is on in a JSON document.
#[derive(Clone, Debug, PartialEq)]
pub enum Cursor {
    /// Where a key of the object at `path` goes (or is being typed: `typed` so far,
    /// starting at byte `start`, the opening quote when there is one).
    Key {
        path: Vec<String>,
        typed: String,
        start: usize,
    },
    /// Where the value of `path` (its last element the key) goes, or is being typed.
    Value {
        path: Vec<String>,
        typed: String,
        start: usize,
    },
    /// Anywhere else (inside an array of an array, a comment, …).
    Other,
}

#[derive(Debug)]
enum Frame {
    /// An object; `key` is the last key read, `after_colon` whether its value is next.
    Object {
        key: Option<String>,
        after_colon: bool,
    },
    Array,
}

/// The keys written in the object at `path` (keys of the enclosing objects), read
/// from the tokens of a document that need not parse to its end.
pub fn keys_of(text: &str, path: &[String]) -> Vec<String> {
    let mut scanner = Scanner::new(text, &ScannerOptions::default());
    let mut stack: Vec<Frame> = Vec::new();
    let mut out = Vec::new();
    while let Ok(Some(token)) = scanner.scan() {
        if let (
            Token::String(_) | Token::Word(_),
            Some(Frame::Object {
                after_colon: false, ..
            }),
        ) = (&token, stack.last())
        {
            let name = match &token {
                Token::String(s) => s.to_string(),
                Token::Word(w) => (*w).to_owned(),
                _ => String::new(),
            };
            if keys(&stack) == path {
                out.push(name);
            }
        }
        step(&mut stack, token);
    }
    out
}

/// One token's effect on the stack of open containers.
fn step(stack: &mut Vec<Frame>, token: Token<'_>) {
    match token {
        Token::OpenBrace => stack.push(Frame::Object {
            key: None,
            after_colon: false,
        }),
        Token::OpenBracket => stack.push(Frame::Array),
        Token::CloseBrace | Token::CloseBracket => {
            stack.pop();
            close_value(stack);
        }
        Token::Colon => {
            if let Some(Frame::Object { after_colon, .. }) = stack.last_mut() {
                *after_colon = true;
            }
        }
        Token::Comma => {
            if let Some(Frame::Object { key, after_colon }) = stack.last_mut() {
                *key = None;
                *after_colon = false;
            }
        }
        Token::String(_) | Token::Word(_) => {
            let name = match token {
                Token::String(s) => s.into_owned(),
                Token::Word(w) => w.to_owned(),
                _ => String::new(),
            };
            match stack.last_mut() {
                Some(Frame::Object {
                    key,
                    after_colon: false,
                }) => *key = Some(name),
                _ => close_value(stack),
            }
        }
        Token::Boolean(_) | Token::Number(_) | Token::Null => close_value(stack),
        Token::CommentLine(_) | Token::CommentBlock(_) => {}
    }
}

/// What is at byte `offset` of `text`, read from the tokens before it.
pub fn cursor_at(text: &str, offset: usize) -> Cursor {
    let offset = offset.min(text.len());
    let head = &text[..floor(text, offset)];
    let mut scanner = Scanner::new(head, &ScannerOptions::default());
    let mut stack: Vec<Frame> = Vec::new();
    loop {
        let start = scanner.token_start();
        let token = match scanner.scan() {
            Ok(Some(t)) => t,
            Ok(None) => break,
            Err(_) => {
                // An unfinished token at the cursor: a string or word being typed.
                let s = scanner.token_start().max(start);
                let partial = head.get(s..).unwrap_or("");
                return at_token(&stack, partial.trim_start_matches(['"', '\'']), s);
            }
        };
        let (tstart, tend) = (scanner.token_start(), scanner.token_end());
        if tend >= head.len() {
            // The token touching the cursor is the one being typed.
            if let Token::String(s) = &token {
                if !head.ends_with('"') || tend - tstart < 2 {
                    return at_token(&stack, s, tstart);
                }
            }
            if let Token::Word(w) | Token::Number(w) = &token {
                return at_token(&stack, w, tstart);
            }
        }
        step(&mut stack, token);
    }
    at_token(&stack, "", head.len())
}

/// A value ended: the enclosing object (if any) waits for a comma next.
fn close_value(stack: &mut [Frame]) {
    if let Some(Frame::Object { after_colon, .. }) = stack.last_mut() {
        *after_colon = false;
    }
}

fn keys(stack: &[Frame]) -> Vec<String> {
    stack
        .iter()
        .filter_map(|f| match f {
            Frame::Object { key: Some(k), .. } => Some(k.clone()),
            _ => None,
        })
        .collect()
}

fn at_token(stack: &[Frame], typed: &str, start: usize) -> Cursor {
    let typed = typed.to_owned();
    match stack.last() {
        Some(Frame::Object {
            key: Some(_),
            after_colon: true,
        }) => Cursor::Value {
            path: keys(stack),
            typed,
            start,
        },
        Some(Frame::Object {
            after_colon: false,
            key,
        }) => {
            // Keys of the enclosing objects only: this object's own key is being typed.
            let mut path = keys(stack);
            if key.is_some() {
                path.pop();
            }
            Cursor::Key { path, typed, start }
        }
        Some(Frame::Array) => match stack.get(stack.len().wrapping_sub(2)) {
            // An element of an array that is a member's value: a value of that member.
            Some(Frame::Object { key: Some(_), .. }) => Cursor::Value {
                path: keys(stack),
                typed,
                start,
            },
            _ => Cursor::Other,
        },
        _ => Cursor::Other,
    }
}

fn floor(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(path: &[&str], typed: &str, start: usize) -> Cursor {
        Cursor::Key {
            path: path.iter().map(|s| s.to_string()).collect(),
            typed: typed.into(),
            start,
        }
    }

    fn value(path: &[&str], typed: &str, start: usize) -> Cursor {
        Cursor::Value {
            path: path.iter().map(|s| s.to_string()).collect(),
            typed: typed.into(),
            start,
        }
    }

    #[test]
    fn members_carry_their_ranges() {
        let text = r#"{"A": 1, "B": {"C": [true]}}"#;
        let m = members(text);
        assert_eq!(m.len(), 3);
        assert_eq!(&text[m[0].key.0..m[0].key.1], "\"A\"");
        assert_eq!(&text[m[0].value.0..m[0].value.1], "1");
        assert_eq!(m[2].path, ["B", "C"]);
        assert_eq!(find_key(&m, "C").unwrap().path, ["B", "C"]);
        assert!(members("{\"A\": ").is_empty());
    }

    #[test]
    fn the_cursor_is_read_from_an_unfinished_document() {
        assert_eq!(cursor_at("{", 1), key(&[], "", 1));
        assert_eq!(cursor_at("{\"Rep", 5), key(&[], "Rep", 1));
        assert_eq!(cursor_at("{\"A\": 1, ", 9), key(&[], "", 9));
        assert_eq!(cursor_at("{\"A\": ", 6), value(&["A"], "", 6));
        assert_eq!(cursor_at("{\"A\": \"x", 8), value(&["A"], "x", 6));
        assert_eq!(
            cursor_at("{\"A\": {\"Levels\": {", 18),
            key(&["A", "Levels"], "", 18)
        );
        assert_eq!(cursor_at("{\"A\": [\"x\", ", 12), value(&["A"], "", 12));
        assert_eq!(cursor_at("{\"A\": 1}", 8), Cursor::Other);
        // The cursor inside a finished key: that key is being typed.
        assert_eq!(cursor_at("{\"Ab\": 1}", 3), key(&[], "A", 1));
    }

    #[test]
    fn keys_are_read_from_an_unfinished_document() {
        let text = "{\"A\": 1, \"B\": {\"C\": 2}, \"D\": [{\"E\": 3}],\n  \"";
        assert_eq!(keys_of(text, &[]), ["A", "B", "D"]);
        assert_eq!(keys_of(text, &["B".to_owned()]), ["C"]);
    }
}
