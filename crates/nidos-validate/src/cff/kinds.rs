//! The kinds of value the Citation File Format rules describe, read from the rule tree
//! (`schema/rules/citation.yaml`).

use std::collections::HashMap;

use indexmap::IndexMap;
use serde_json::Value as Json;

pub(super) type KindId = usize;

#[derive(Debug)]
pub(super) enum Shape {
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
pub(super) struct Kind {
    pub(super) shape: Shape,
    /// What a value of this kind looks like, in words.
    pub(super) expect: String,
}

/// Reads rules written as `schema/rules/citation.yaml` describes.
pub(super) struct Builder<'a> {
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

/// The kinds of the rule tree `tree` (`kinds`) and the kind of the whole document
/// (`document`), or every problem found in them.
pub(super) fn read(tree: &Json) -> Result<(KindId, Vec<Kind>), String> {
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
    Ok((document, kinds))
}
