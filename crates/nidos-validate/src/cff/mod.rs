//! `CITATION.cff`: the file is read as YAML keeping the line of every value, then
//! checked against the Citation File Format rules of the rule tree (`rules.citation`,
//! `schema/rules/citation.yaml`). An upstream compiled schema has no such rules; the
//! bundled copy, built into the binary, is used then.
//!
//! Every finding is a `CITATION_CFF_VALIDATION_ERROR` at `/CITATION.cff` whose sub-code is
//! the JSON pointer of the value concerned (`/authors/0/orcid`; a missing or unknown key
//! is pointed at by its own name) and whose message says what is expected there.

use serde_json::Value as Json;

use crate::issue::{Issue, Severity};

/// The bundled rules, used when the schema has none.
const BUNDLED: &str = include_str!("../../../../schema/rules/citation.yaml");

/// Where the file is and which code its issues have, when the rules cannot be read.
const DEFAULT_FILE: &str = "CITATION.cff";
const DEFAULT_CODE: &str = "CITATION_CFF_VALIDATION_ERROR";

mod document;
mod kinds;

use document::{Located, Node};
use kinds::{Kind, KindId, Shape};

/// The Citation File Format rules, ready to check documents.
#[derive(Debug)]
pub(crate) struct CffRules {
    file: String,
    code: String,
    document: KindId,
    kinds: Vec<Kind>,
}

impl CffRules {
    /// The rules a schema gives (its `rules.citation`), else the bundled ones.
    pub(crate) fn for_schema(citation: Option<&Json>) -> Result<CffRules, String> {
        match citation {
            Some(tree) => CffRules::from_tree(tree),
            None => {
                let tree: Json = serde_saphyr::from_str(BUNDLED)
                    .map_err(|e| format!("bundled citation rules: {e}"))?;
                CffRules::from_tree(&tree)
            }
        }
    }

    /// Reads rules from their tree (`file`, `code`, `document`, `kinds`).
    pub(crate) fn from_tree(tree: &Json) -> Result<CffRules, String> {
        let (document, kinds) = kinds::read(tree)?;
        Ok(CffRules {
            file: text_or(tree, "file", DEFAULT_FILE),
            code: text_or(tree, "code", DEFAULT_CODE),
            document,
            kinds,
        })
    }

    /// The dataset path of the file that the rules of [`CffRules::for_schema`] check,
    /// without reading the rules (the bundled ones check `CITATION.cff`).
    pub(crate) fn path_for_schema(citation: Option<&Json>) -> String {
        let file = citation.map_or(DEFAULT_FILE.to_string(), |tree| {
            text_or(tree, "file", DEFAULT_FILE)
        });
        dataset_path(&file)
    }

    /// The dataset path of the file (`/CITATION.cff`).
    pub(crate) fn path(&self) -> String {
        dataset_path(&self.file)
    }

    /// Every issue of one CITATION.cff's content.
    pub(crate) fn check_bytes(&self, bytes: &[u8]) -> Vec<Issue> {
        let location = self.path();
        let issue = |at: &str, message: String, line: usize| {
            let mut i = Issue::new(self.code.as_str(), Severity::Error, location.as_str())
                .sub(at)
                .message(message);
            if line > 0 {
                i = i.line(line);
            }
            i
        };
        let doc: Located = match serde_saphyr::from_slice(bytes) {
            Ok(doc) => doc,
            Err(e) => {
                let (line, column) = e
                    .location()
                    .map_or((0, 0), |l| (l.line() as usize, l.column() as usize));
                let plain = e.without_snippet().to_string();
                // The reader's text ends with the position, which the message gives first.
                let suffix = format!(" at line {line}, column {column}");
                let plain = plain.strip_suffix(&suffix).unwrap_or(&plain);
                let message = if line > 0 {
                    format!("the file is not valid YAML (line {line}, column {column}): {plain}")
                } else {
                    format!("the file is not valid YAML: {plain}")
                };
                return vec![issue("", message, line)];
            }
        };
        let mut found = Vec::new();
        self.check(&doc, self.document, "", &mut found);
        found
            .into_iter()
            .map(|v| issue(&v.at, v.message, v.line))
            .collect()
    }

    fn check(&self, v: &Located, kind: KindId, at: &str, out: &mut Vec<Finding>) {
        let Some(k) = self.kinds.get(kind) else {
            return;
        };
        let mut say = |message: String| {
            out.push(Finding {
                at: at.to_string(),
                message,
                line: v.line,
                decisive: false,
            })
        };
        let wrong = |what: &str| format!("must be {what}; found {}", v.node.describe());
        if !self.shape_fits(&v.node, kind) {
            say(wrong(&k.expect));
            return;
        }
        match (&k.shape, &v.node) {
            (
                Shape::Str {
                    min_length,
                    max_length,
                    pattern,
                    values,
                },
                Node::Str(s),
            ) => {
                let n = s.chars().count();
                let short = min_length.is_some_and(|m| n < m);
                let long = max_length.is_some_and(|m| n > m);
                let unmatched = pattern.as_ref().is_some_and(|re| re.find(s).is_none());
                let outside = values.as_ref().is_some_and(|vs| !vs.iter().any(|x| x == s));
                if short || long || unmatched || outside {
                    out.push(Finding {
                        at: at.to_string(),
                        message: wrong(&k.expect),
                        line: v.line,
                        // A kind allowing one string only names what its record is.
                        decisive: outside && values.as_ref().is_some_and(|vs| vs.len() == 1),
                    });
                }
            }
            (Shape::Integer { min, max }, node) => {
                let n = node.number().unwrap_or(0.0);
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    say(wrong(&k.expect));
                }
            }
            (
                Shape::List {
                    of,
                    min_items,
                    distinct,
                },
                Node::List(items),
            ) => {
                if items.len() < *min_items {
                    say(format!(
                        "must list at least {min_items} item{}; {} is {}",
                        if *min_items == 1 { "" } else { "s" },
                        k.expect,
                        if items.is_empty() {
                            "expected, found an empty list".to_string()
                        } else {
                            format!("expected, found {} items", items.len())
                        }
                    ));
                }
                for (i, item) in items.iter().enumerate() {
                    let item_at = format!("{at}/{i}");
                    if *distinct {
                        if let Some(j) = items[..i].iter().position(|x| x.node.same(&item.node)) {
                            out.push(Finding {
                                at: item_at.clone(),
                                message: format!(
                                    "repeats item {j} of the list (line {}); list each item once",
                                    items[j].line
                                ),
                                line: item.line,
                                decisive: false,
                            });
                        }
                    }
                    if let Some(of) = of {
                        self.check(item, *of, &item_at, out);
                    }
                }
            }
            (Shape::Record { keys, required }, Node::Map(entries)) => {
                for key in required {
                    if !entries.iter().any(|(k, _)| k == key) {
                        out.push(Finding {
                            at: format!("{at}/{}", pointer_token(key)),
                            message: format!(
                                "the required key \"{key}\" is missing ({})",
                                k.expect
                            ),
                            line: v.line,
                            decisive: false,
                        });
                    }
                }
                for (key, value) in entries {
                    let key_at = format!("{at}/{}", pointer_token(key));
                    match keys.get(key) {
                        Some(&kid) => self.check(value, kid, &key_at, out),
                        None => out.push(Finding {
                            at: key_at,
                            message: format!(
                                "\"{key}\" is not a key of the format here ({})",
                                k.expect
                            ),
                            line: value.line,
                            decisive: false,
                        }),
                    }
                }
            }
            (Shape::Either(options), _) => self.check_either(v, kind, options, at, out),
            _ => {}
        }
    }

    /// A value of one of several kinds: accepted when it is one of them. Otherwise the
    /// option it comes closest to explains why (fewest findings, options contradicted by
    /// a fixed value last); when no option fits its shape or two come equally close, one
    /// finding says what the value may be.
    fn check_either(
        &self,
        v: &Located,
        kind: KindId,
        options: &[KindId],
        at: &str,
        out: &mut Vec<Finding>,
    ) {
        let mut tried: Vec<(bool, usize, Vec<Finding>)> = Vec::new();
        for &o in options {
            if !self.shape_fits(&v.node, o) {
                continue;
            }
            let mut sub = Vec::new();
            self.check(v, o, at, &mut sub);
            if sub.is_empty() {
                return;
            }
            let decisive = sub.iter().any(|f| f.decisive);
            tried.push((decisive, sub.len(), sub));
        }
        tried.sort_by_key(|(d, n, _)| (*d, *n));
        let expect = self.kinds.get(kind).map_or("", |k| k.expect.as_str());
        let general = Finding {
            at: at.to_string(),
            message: format!("must be {expect}; found {}", v.node.describe()),
            line: v.line,
            decisive: false,
        };
        let mut tried = tried.into_iter();
        match (tried.next(), tried.next()) {
            (Some((d, n, best)), next) => {
                let tie = next.is_some_and(|(d2, n2, _)| d2 == d && n2 == n);
                if d || tie {
                    out.push(general);
                } else {
                    out.extend(best);
                }
            }
            (None, _) => out.push(general),
        }
    }

    /// Whether the value has the shape of the kind (a string for a string kind…); an
    /// `either` fits when one of its options does.
    fn shape_fits(&self, node: &Node, kind: KindId) -> bool {
        let Some(k) = self.kinds.get(kind) else {
            return true;
        };
        match &k.shape {
            Shape::Str { .. } => matches!(node, Node::Str(_)),
            Shape::Number => matches!(node, Node::Int(_) | Node::Float(_)),
            Shape::Integer { .. } => match node {
                Node::Int(_) => true,
                Node::Float(f) => f.fract() == 0.0 && f.is_finite(),
                _ => false,
            },
            Shape::List { .. } => matches!(node, Node::List(_)),
            Shape::Record { .. } => matches!(node, Node::Map(_)),
            Shape::Either(options) => options.iter().any(|&o| self.shape_fits(node, o)),
        }
    }
}

/// One reason the document does not follow the format.
struct Finding {
    /// JSON pointer of the value.
    at: String,
    message: String,
    line: usize,
    /// The value contradicts a fixed string (the `type` of an identifier): the option
    /// that asked for it is not the one meant.
    decisive: bool,
}

/// A key as a JSON pointer token (`~` and `/` escaped).
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `file` (`CITATION.cff`) as a dataset path (`/CITATION.cff`).
fn dataset_path(file: &str) -> String {
    format!("/{}", file.trim_start_matches('/'))
}

fn text_or(tree: &Json, key: &str, default: &str) -> String {
    tree.get(key)
        .and_then(Json::as_str)
        .unwrap_or(default)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> CffRules {
        CffRules::for_schema(None).unwrap()
    }

    #[test]
    fn bundled_rules_read() {
        let r = rules();
        assert_eq!(r.path(), "/CITATION.cff");
        assert!(r.kinds.len() > 30);
    }

    #[test]
    fn lines_are_kept() {
        let r = rules();
        let text =
            "cff-version: 1.2.0\nmessage: m\ntitle: t\nauthors:\n  - name: X\n    orcid: nope\n";
        let issues = r.check_bytes(text.as_bytes());
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(*issues[0].sub_code(), "/authors/0/orcid");
        assert_eq!(issues[0].line_number(), Some(6));
    }

    /// A file of comments only is an empty document: one finding at the document.
    #[test]
    fn comments_only() {
        let issues = rules().check_bytes(b"# nothing here yet\n");
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(*issues[0].sub_code(), "");
    }

    /// Bytes that are not UTF-8 are a finding, not a panic.
    #[test]
    fn not_text() {
        let issues = rules().check_bytes(&[0xff, 0xfe, 0x00, 0x41]);
        assert_eq!(issues.len(), 1, "{issues:?}");
    }

    /// Rules naming a kind that does not exist, or with a bad pattern, do not load.
    #[test]
    fn broken_rules_are_reported() {
        let tree = serde_json::json!({
            "document": "top",
            "kinds": {
                "top": {"is": "record", "keys": {"a": "nowhere", "b": {"is": "string", "pattern": "("}}}
            }
        });
        let err = CffRules::from_tree(&tree).unwrap_err();
        assert!(err.contains("nowhere"), "{err}");
        assert!(err.contains("pattern"), "{err}");
    }
}
