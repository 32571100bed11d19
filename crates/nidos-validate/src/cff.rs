//! `CITATION.cff`: the file is read as YAML keeping the line of every value, then
//! checked against the Citation File Format rules of the rule tree (`rules.citation`,
//! `schema/rules/citation.yaml`). An upstream compiled schema has no such rules; the
//! bundled copy, built into the binary, is used then.
//!
//! Every finding is a `CITATION_CFF_VALIDATION_ERROR` at `/CITATION.cff` whose sub-code is
//! the JSON pointer of the value concerned (`/authors/0/orcid`; a missing or unknown key
//! is pointed at by its own name) and whose message says what is expected there.

use std::collections::HashMap;

use indexmap::IndexMap;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;

use crate::issue::{Issue, Severity};

/// The bundled rules, used when the schema has none.
const BUNDLED: &str = include_str!("../../../schema/rules/citation.yaml");

/// Where the file is and which code its issues have, when the rules cannot be read.
const DEFAULT_FILE: &str = "CITATION.cff";
const DEFAULT_CODE: &str = "CITATION_CFF_VALIDATION_ERROR";

// ---------------------------------------------------------------------------------------
// The document, with positions.

/// A YAML value and the 1-based line where it starts.
#[derive(Debug)]
struct Located {
    node: Node,
    line: usize,
}

#[derive(Debug)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Located>),
    Map(Vec<(String, Located)>),
}

impl<'de> Deserialize<'de> for Located {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Located, D::Error> {
        let spanned = serde_saphyr::Spanned::<Node>::deserialize(d)?;
        Ok(Located {
            node: spanned.value,
            line: usize::try_from(spanned.referenced.line()).unwrap_or(0),
        })
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(i64::try_from(v).map_or(Node::Float(v as f64), Node::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Located>()? {
            items.push(item);
        }
        Ok(Node::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<KeyText>()? {
            let value = map.next_value::<Located>()?;
            entries.push((key.0, value));
        }
        Ok(Node::Map(entries))
    }
}

/// A mapping key: any scalar, as the text it is written as.
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyText, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = KeyText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a scalar mapping key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<KeyText, E> {
                Ok(KeyText("null".to_string()))
            }
        }
        d.deserialize_any(KeyVisitor)
    }
}

impl Node {
    /// Equal values, wherever they are written.
    fn same(&self, other: &Node) -> bool {
        match (self, other) {
            (Node::Null, Node::Null) => true,
            (Node::Bool(a), Node::Bool(b)) => a == b,
            (Node::Str(a), Node::Str(b)) => a == b,
            (Node::List(a), Node::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.node.same(&y.node))
            }
            (Node::Map(a), Node::Map(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.iter().any(|(l, w)| l == k && v.node.same(&w.node)))
            }
            (a, b) => match (a.number(), b.number()) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            },
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Node::Int(i) => Some(*i as f64),
            Node::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The value in a few words, for messages.
    fn describe(&self) -> String {
        match self {
            Node::Null => "nothing (null)".to_string(),
            Node::Bool(b) => format!("the boolean {b}"),
            Node::Int(i) => format!("the number {i}"),
            Node::Float(f) => format!("the number {f}"),
            Node::Str(s) => {
                let short: String = s.chars().take(60).collect();
                let dots = if short.len() < s.len() { "..." } else { "" };
                format!("\"{short}{dots}\"")
            }
            Node::List(items) => format!("a list of {} items", items.len()),
            Node::Map(_) => "a mapping".to_string(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The rules.

type KindId = usize;

#[derive(Debug)]
enum Shape {
    Str {
        min_length: Option<usize>,
        max_length: Option<usize>,
        pattern: Option<regress::Regex>,
        values: Option<Vec<String>>,
    },
    Number,
    Integer {
        min: Option<f64>,
        max: Option<f64>,
    },
    List {
        of: Option<KindId>,
        min_items: usize,
        distinct: bool,
    },
    Record {
        keys: IndexMap<String, KindId>,
        required: Vec<String>,
    },
    Either(Vec<KindId>),
}

#[derive(Debug)]
struct Kind {
    shape: Shape,
    /// What a value of this kind looks like, in words.
    expect: String,
}

/// The Citation File Format rules, ready to check documents.
#[derive(Debug)]
pub(crate) struct CffRules {
    file: String,
    code: String,
    document: KindId,
    kinds: Vec<Kind>,
}

/// Reads rules written as `schema/rules/citation.yaml` describes.
struct Builder<'a> {
    named: HashMap<&'a str, KindId>,
    defs: &'a serde_json::Map<String, Json>,
    kinds: Vec<Option<Kind>>,
    errors: Vec<String>,
}

impl<'a> Builder<'a> {
    /// The id of a kind named or written in place at `at`.
    fn kind_ref(&mut self, v: &'a Json, at: &str) -> KindId {
        match v {
            Json::String(name) => match self.named.get(name.as_str()) {
                Some(&id) => id,
                None => {
                    self.errors
                        .push(format!("{at}: no kind is named \"{name}\""));
                    self.placeholder()
                }
            },
            Json::Object(_) => {
                let id = self.kinds.len();
                self.kinds.push(None);
                let kind = self.build(v, at);
                self.kinds[id] = Some(kind);
                id
            }
            _ => {
                self.errors
                    .push(format!("{at}: a kind is a name or a mapping"));
                self.placeholder()
            }
        }
    }

    fn placeholder(&mut self) -> KindId {
        self.kinds.push(Some(Kind {
            shape: Shape::Number,
            expect: String::new(),
        }));
        self.kinds.len() - 1
    }

    fn build(&mut self, v: &'a Json, at: &str) -> Kind {
        let usize_of = |key: &str| v.get(key).and_then(Json::as_u64).map(|n| n as usize);
        let f64_of = |key: &str| v.get(key).and_then(Json::as_f64);
        let is = v.get("is").and_then(Json::as_str).unwrap_or("");
        let shape = match is {
            "string" => {
                let pattern = match v.get("pattern").and_then(Json::as_str) {
                    Some(p) => match regress::Regex::new(p) {
                        Ok(re) => Some(re),
                        Err(e) => {
                            self.errors.push(format!("{at}.pattern: {e}"));
                            None
                        }
                    },
                    None => None,
                };
                let values = v.get("values").and_then(Json::as_array).map(|a| {
                    a.iter()
                        .map(|x| match x {
                            Json::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect()
                });
                Shape::Str {
                    min_length: usize_of("min_length"),
                    max_length: usize_of("max_length"),
                    pattern,
                    values,
                }
            }
            "number" => Shape::Number,
            "integer" => Shape::Integer {
                min: f64_of("min"),
                max: f64_of("max"),
            },
            "list" => Shape::List {
                of: v.get("of").map(|o| self.kind_ref(o, &format!("{at}.of"))),
                min_items: usize_of("min_items").unwrap_or(0),
                distinct: v.get("distinct").and_then(Json::as_bool).unwrap_or(false),
            },
            "record" => {
                let mut keys = IndexMap::new();
                if let Some(o) = v.get("keys").and_then(Json::as_object) {
                    for (k, kv) in o {
                        let id = self.kind_ref(kv, &format!("{at}.keys.{k}"));
                        keys.insert(k.clone(), id);
                    }
                }
                let required = v
                    .get("required")
                    .and_then(Json::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Json::as_str)
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default();
                Shape::Record { keys, required }
            }
            "either" => {
                let options = v
                    .get("options")
                    .and_then(Json::as_array)
                    .map(|a| a.as_slice())
                    .unwrap_or_default();
                let ids = options
                    .iter()
                    .enumerate()
                    .map(|(i, o)| self.kind_ref(o, &format!("{at}.options[{i}]")))
                    .collect();
                Shape::Either(ids)
            }
            other => {
                self.errors.push(format!(
                    "{at}.is: \"{other}\" is not string, number, integer, list, record or either"
                ));
                Shape::Number
            }
        };
        let expect = v
            .get("expect")
            .and_then(Json::as_str)
            .map(String::from)
            .unwrap_or_else(|| self.default_expect(&shape));
        Kind { shape, expect }
    }

    /// A description for a kind the rules give none.
    fn default_expect(&self, shape: &Shape) -> String {
        match shape {
            Shape::Str {
                values: Some(v), ..
            } if v.len() == 1 => format!("the string \"{}\"", v[0]),
            Shape::Str { .. } => "a string".to_string(),
            Shape::Number => "a number".to_string(),
            Shape::Integer { min, max } => match (min, max) {
                (Some(a), Some(b)) => format!("a whole number from {a} to {b}"),
                (Some(a), None) => format!("a whole number of at least {a}"),
                (None, Some(b)) => format!("a whole number of at most {b}"),
                (None, None) => "a whole number".to_string(),
            },
            Shape::List { .. } => "a list".to_string(),
            Shape::Record { .. } => "a mapping".to_string(),
            Shape::Either(_) => "a value of one of the allowed forms".to_string(),
        }
    }
}

impl CffRules {
    /// The rules of `schema` (`rules.citation`), else the bundled ones.
    pub(crate) fn for_schema(raw: &Json) -> Result<CffRules, String> {
        match raw.get("rules").and_then(|r| r.get("citation")) {
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
        let defs = tree
            .get("kinds")
            .and_then(Json::as_object)
            .ok_or("rules.citation: `kinds` must be a mapping")?;
        let mut b = Builder {
            named: HashMap::new(),
            defs,
            kinds: Vec::new(),
            errors: Vec::new(),
        };
        for name in b.defs.keys() {
            b.named.insert(name.as_str(), b.kinds.len());
            b.kinds.push(None);
        }
        for (name, def) in b.defs {
            let Some(&id) = b.named.get(name.as_str()) else {
                continue;
            };
            let kind = match def {
                Json::String(_) => {
                    b.errors.push(format!(
                        "rules.citation.kinds.{name}: a kind must be a mapping"
                    ));
                    continue;
                }
                _ => b.build(def, &format!("rules.citation.kinds.{name}")),
            };
            b.kinds[id] = Some(kind);
        }
        let document = match tree.get("document") {
            Some(d) => b.kind_ref(d, "rules.citation.document"),
            None => {
                b.errors
                    .push("rules.citation: `document` names the kind of the file".to_string());
                0
            }
        };
        if !b.errors.is_empty() {
            return Err(b.errors.join("; "));
        }
        let mut kinds = Vec::with_capacity(b.kinds.len());
        for k in b.kinds {
            kinds.push(k.ok_or("rules.citation: a kind could not be read")?);
        }
        Ok(CffRules {
            file: text_or(tree, "file", DEFAULT_FILE),
            code: text_or(tree, "code", DEFAULT_CODE),
            document,
            kinds,
        })
    }

    /// The dataset path of the file (`/CITATION.cff`).
    pub(crate) fn path(&self) -> String {
        format!("/{}", self.file.trim_start_matches('/'))
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
        CffRules::for_schema(&Json::Null).unwrap()
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
        assert_eq!(issues[0].sub_code, "/authors/0/orcid");
        assert_eq!(issues[0].line_number(), Some(6));
    }

    /// A file of comments only is an empty document: one finding at the document.
    #[test]
    fn comments_only() {
        let issues = rules().check_bytes(b"# nothing here yet\n");
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].sub_code, "");
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
