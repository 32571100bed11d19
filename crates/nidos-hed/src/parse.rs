//! The HED string parser: comma-separated tags and parenthesised groups, nested to any depth,
//! plus `{column}` splices (sidecars only). Returns the tree and every syntax problem found,
//! each with its character offset.
//!
//! The language has four delimiters and no escapes, so the parser is a single scan with a stack
//! of open groups; a grammar generator would add nothing but a second error vocabulary to map.

use crate::issue::HedIssue;

/// A tag as written: trimmed text and its character span in the string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagToken {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// One element of a HED string or group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Tag(TagToken),
    Group(Group),
    /// `{name}`: the annotation of another sidecar column spliced in.
    Splice(TagToken),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Group {
    pub items: Vec<Item>,
    /// Character offset of the opening parenthesis.
    pub start: usize,
}

/// A parsed HED string: its top-level items.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HedString {
    pub items: Vec<Item>,
}

impl HedString {
    /// All tags at any depth, in order.
    pub fn tags(&self) -> Vec<&TagToken> {
        let mut out = Vec::new();
        collect_tags(&self.items, &mut out);
        out
    }
}

fn collect_tags<'a>(items: &'a [Item], out: &mut Vec<&'a TagToken>) {
    for item in items {
        match item {
            Item::Tag(t) => out.push(t),
            Item::Group(g) => collect_tags(&g.items, out),
            Item::Splice(_) => {}
        }
    }
}

/// What the previous delimiter was, to tell empty elements and missing commas apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    Start,
    Comma,
    Open,
    Close,
}

/// Parses `s`. Syntax issues (`PARENTHESES_MISMATCH`, `TAG_EMPTY`, `COMMA_MISSING`,
/// `CHARACTER_INVALID`) come back with the tree built from what could be read.
pub fn parse(s: &str) -> (HedString, Vec<HedIssue>) {
    let mut issues = Vec::new();
    let chars: Vec<char> = s.chars().collect();

    for (i, &c) in chars.iter().enumerate() {
        if c.is_control() || (c as u32 >= 0x7f && (c as u32) < 0xa0) {
            issues.push(
                HedIssue::error(
                    "CHARACTER_INVALID",
                    format!("invalid character U+{:04X} at position {i}", c as u32),
                )
                .at(i),
            );
        }
    }

    // Balance first: with unmatched parentheses the structure is unknown.
    let mut depth: i64 = 0;
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    issues.push(
                        HedIssue::error(
                            "PARENTHESES_MISMATCH",
                            format!("closing parenthesis at position {i} has no opening one"),
                        )
                        .at(i),
                    );
                    return (HedString::default(), issues);
                }
            }
            _ => {}
        }
    }
    if depth > 0 {
        issues.push(
            HedIssue::error(
                "PARENTHESES_MISMATCH",
                format!("{depth} opening parenthes(es) never closed"),
            )
            .at(chars.len()),
        );
        return (HedString::default(), issues);
    }

    let mut stack: Vec<Group> = vec![Group::default()];
    let mut prev = Prev::Start;
    let mut tok_start = 0usize;
    let blank = |from: usize, to: usize| chars[from..to].iter().all(|c| c.is_whitespace());

    let mut i = 0usize;
    while i <= chars.len() {
        let c = chars.get(i).copied();
        let is_delim = matches!(c, None | Some(',') | Some('(') | Some(')'));
        if !is_delim {
            i += 1;
            continue;
        }
        let has_text = !blank(tok_start, i);
        if has_text {
            if prev == Prev::Close {
                issues.push(
                    HedIssue::error(
                        "COMMA_MISSING",
                        format!(
                            "a comma is missing after the group closed before position {tok_start}"
                        ),
                    )
                    .at(tok_start),
                );
            }
            let token = make_token(&chars, tok_start, i);
            if let Some(top) = stack.last_mut() {
                top.items.push(token);
            }
        }
        match c {
            Some('(') => {
                if has_text {
                    issues.push(
                        HedIssue::error(
                            "COMMA_MISSING",
                            format!("a comma is missing before the group at position {i}"),
                        )
                        .at(i),
                    );
                } else if prev == Prev::Close {
                    issues.push(
                        HedIssue::error(
                            "COMMA_MISSING",
                            format!("a comma is missing between the groups at position {i}"),
                        )
                        .at(i),
                    );
                }
                stack.push(Group {
                    items: Vec::new(),
                    start: i,
                });
                prev = Prev::Open;
            }
            Some(')') => {
                if !has_text && matches!(prev, Prev::Comma) {
                    issues.push(
                        HedIssue::error(
                            "TAG_EMPTY",
                            format!("empty tag before the closing parenthesis at position {i}"),
                        )
                        .at(i),
                    );
                }
                let group = stack.pop().unwrap_or_default();
                if group.items.is_empty() && prev == Prev::Open {
                    issues.push(
                        HedIssue::error(
                            "TAG_EMPTY",
                            format!("empty group at position {}", group.start),
                        )
                        .at(group.start),
                    );
                }
                if let Some(top) = stack.last_mut() {
                    top.items.push(Item::Group(group));
                }
                prev = Prev::Close;
            }
            Some(',') => {
                if !has_text && matches!(prev, Prev::Start | Prev::Comma | Prev::Open) {
                    issues.push(
                        HedIssue::error(
                            "TAG_EMPTY",
                            format!("empty tag before the comma at position {i}"),
                        )
                        .at(i),
                    );
                }
                prev = Prev::Comma;
            }
            _ => {
                if !has_text && prev == Prev::Comma {
                    issues.push(HedIssue::error("TAG_EMPTY", "the string ends with a comma").at(i));
                }
            }
        }
        i += 1;
        tok_start = i;
    }
    let top = stack.pop().unwrap_or_default();
    (HedString { items: top.items }, issues)
}

fn make_token(chars: &[char], from: usize, to: usize) -> Item {
    let mut start = from;
    let mut end = to;
    while start < end && chars[start].is_whitespace() {
        start += 1;
    }
    while end > start && chars[end - 1].is_whitespace() {
        end -= 1;
    }
    let text: String = chars[start..end].iter().collect();
    let token = TagToken { text, start, end };
    if token.text.starts_with('{') && token.text.ends_with('}') && token.text.len() >= 2 {
        Item::Splice(token)
    } else {
        Item::Tag(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(s: &str) -> Vec<&'static str> {
        parse(s).1.into_iter().map(|i| i.code).collect()
    }

    #[test]
    fn offsets_and_codes() {
        assert!(codes("(Red, Blue), Green").is_empty());
        assert_eq!(codes("Red, , Green"), ["TAG_EMPTY"]);
        assert_eq!(codes("(Red)(Blue)"), ["COMMA_MISSING"]);
        assert_eq!(codes("((Red)"), ["PARENTHESES_MISMATCH"]);
        let (tree, _) = parse("  Red ,(Blue)");
        match &tree.items[0] {
            Item::Tag(t) => assert_eq!((t.start, t.end, t.text.as_str()), (2, 5, "Red")),
            other => panic!("unexpected {other:?}"),
        }
    }
}
