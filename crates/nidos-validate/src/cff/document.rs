//! A CITATION.cff document read as YAML, keeping the 1-based line where each value
//! starts.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A YAML value and the 1-based line where it starts.
#[derive(Debug)]
pub(super) struct Located {
    pub(super) node: Node,
    pub(super) line: usize,
}

#[derive(Debug)]
pub(super) enum Node {
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

pub(super) struct NodeVisitor;

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
pub(super) struct KeyText(String);

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
    pub(super) fn same(&self, other: &Node) -> bool {
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

    pub(super) fn number(&self) -> Option<f64> {
        match self {
            Node::Int(i) => Some(*i as f64),
            Node::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The value in a few words, for messages.
    pub(super) fn describe(&self) -> String {
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
