//! Edits of JSON text: parse (refusing duplicate keys, which a rewrite would lose),
//! change the object, and write it back in the file's own layout (indent, spacing,
//! line ends, final newline), keys in their original order. Top-level members the edit
//! did not change are written back as their original text, so only the edited members
//! differ (a hand-formatted `[0, 2, 4]` stays on its line, `1.50` stays `1.50`).

use indexmap::IndexMap;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::text_edit::UTF8_BOM;

/// A JSON document being edited: its object and how it was laid out.
pub(crate) struct JsonDoc {
    pub map: Map<String, Value>,
    /// The members as parsed, and their original text.
    original: Map<String, Value>,
    raw: IndexMap<String, Box<RawValue>>,
    layout: Layout,
}

#[derive(Clone, Debug, PartialEq)]
enum Style {
    /// Several lines, this indent per level, and this after a key: `": "`, or `":"` in a
    /// file that writes `"key":value`.
    Pretty(Vec<u8>, &'static [u8]),
    /// One line with a space after `,` and `:` (`{"a": 1, "b": 2}`).
    Spaced,
    /// One line, no spaces.
    Compact,
}

#[derive(Clone, Debug)]
struct Layout {
    style: Style,
    bom: bool,
    /// The line end of new lines: the file's most frequent one (`\n`, `\r\n` or `\r`).
    newline: &'static [u8],
    /// The text before the object and after it (white space), kept as it was: the
    /// file's last line end stays what it was.
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl JsonDoc {
    /// Parses a JSON object. The error says why it cannot be edited safely.
    pub fn parse(bytes: &[u8]) -> Result<JsonDoc, String> {
        let (bom, body) = match bytes.strip_prefix(UTF8_BOM) {
            Some(rest) => (true, rest),
            None => (false, bytes),
        };
        let text = std::str::from_utf8(body).map_err(|_| "the file is not UTF-8".to_string())?;
        let mut de = serde_json::Deserializer::from_str(text);
        NoDuplicates::deserialize(&mut de)
            .and_then(|_| de.end())
            .map_err(|e| format!("cannot be edited safely: {e}"))?;
        let map = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err("the top level is not an object".into()),
            Err(e) => return Err(format!("not valid JSON: {e}")),
        };
        let raw: IndexMap<String, Box<RawValue>> =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
        Ok(JsonDoc {
            original: map.clone(),
            map,
            raw,
            layout: Layout::detect(bom, text),
        })
    }

    /// A new, empty object written with two-space indents.
    pub fn empty() -> JsonDoc {
        JsonDoc {
            map: Map::new(),
            original: Map::new(),
            raw: IndexMap::new(),
            layout: Layout {
                style: Style::Pretty(b"  ".to_vec(), b": "),
                bom: false,
                newline: b"\n",
                head: Vec::new(),
                tail: b"\n".to_vec(),
            },
        }
    }

    /// The document's text in its layout.
    pub fn render(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        if self.layout.bom {
            out.extend_from_slice(UTF8_BOM);
        }
        out.extend_from_slice(&self.layout.head);
        out.extend_from_slice(&self.body().map_err(|e| e.to_string())?);
        out.extend_from_slice(&self.layout.tail);
        Ok(out)
    }
}

impl JsonDoc {
    /// The object's text without the final newline: `{`, the members (unchanged ones as
    /// they were written), `}`.
    fn body(&self) -> serde_json::Result<Vec<u8>> {
        if self.map.is_empty() {
            return Ok(b"{}".to_vec());
        }
        /// `{`, member separator, key-value separator, `}`, indent of one level.
        type Punctuation<'a> = [&'a [u8]; 5];
        let [open, sep, colon, close, indent]: Punctuation<'_> = match &self.layout.style {
            Style::Pretty(indent, colon) => [b"{\n", b",\n", colon, b"\n}", indent],
            Style::Spaced => [b"{", b", ", b": ", b"}", b""],
            Style::Compact => [b"{", b",", b":", b"}", b""],
        };
        // Text written here (not copied from the file) takes the file's line end.
        let newline = self.layout.newline;
        let put = |out: &mut Vec<u8>, text: &[u8]| {
            for &b in text {
                if b == b'\n' {
                    out.extend_from_slice(newline);
                } else {
                    out.push(b);
                }
            }
        };
        let mut out = Vec::new();
        put(&mut out, open);
        for (i, (key, value)) in self.map.iter().enumerate() {
            if i > 0 {
                put(&mut out, sep);
            }
            out.extend_from_slice(indent);
            out.extend_from_slice(serde_json::to_string(key)?.as_bytes());
            out.extend_from_slice(colon);
            match self.raw.get(key) {
                Some(raw) if self.original.get(key) == Some(value) => {
                    out.extend_from_slice(raw.get().as_bytes());
                }
                _ => {
                    let text = match &self.layout.style {
                        Style::Pretty(indent, _) => {
                            write_with(value, PrettyFormatter::with_indent(indent))?
                        }
                        Style::Spaced => write_with(value, SpacedFormatter)?,
                        Style::Compact => write_with(value, CompactFormatter)?,
                    };
                    // A nested value's lines sit one level deeper.
                    for &b in &text {
                        put(&mut out, &[b]);
                        if b == b'\n' {
                            out.extend_from_slice(indent);
                        }
                    }
                }
            }
        }
        put(&mut out, close);
        Ok(out)
    }
}

fn write_with<F: Formatter>(value: &Value, f: F) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, f);
    serde::Serialize::serialize(value, &mut ser)?;
    Ok(out)
}

impl Layout {
    fn detect(bom: bool, text: &str) -> Layout {
        let trimmed = text.trim();
        let start = text.len() - text.trim_start().len();
        let head = text.as_bytes()[..start].to_vec();
        let tail = text.as_bytes()[start + trimmed.len()..].to_vec();
        let b = trimmed.as_bytes();
        let crlf = trimmed.matches("\r\n").count();
        let cr = b.iter().filter(|&&c| c == b'\r').count() - crlf;
        let lf = b.iter().filter(|&&c| c == b'\n').count() - crlf;
        let newline: &'static [u8] = if crlf > lf && crlf >= cr {
            b"\r\n"
        } else if cr > lf && cr > crlf {
            b"\r"
        } else {
            b"\n"
        };
        let style = if trimmed.contains(['\n', '\r']) {
            // The indent of the first indented line is one level.
            let indent = trimmed
                .split(['\n', '\r'])
                .skip(1)
                .find_map(|l| {
                    let n = l.len() - l.trim_start_matches([' ', '\t']).len();
                    (n > 0).then(|| l.as_bytes()[..n].to_vec())
                })
                .unwrap_or_else(|| b"  ".to_vec());
            // Keys followed by `":` and no space, against those followed by `": `.
            let spaced = trimmed.matches("\": ").count();
            let tight = trimmed.matches("\":").count() - spaced;
            let colon: &'static [u8] = if tight > spaced { b":" } else { b": " };
            Style::Pretty(indent, colon)
        } else if trimmed.contains("\": ") || trimmed.contains(", ") {
            Style::Spaced
        } else {
            Style::Compact
        };
        Layout {
            style,
            bom,
            newline,
            head,
            tail,
        }
    }
}

/// One line, `", "` between members and `": "` after keys.
struct SpacedFormatter;

impl Formatter for SpacedFormatter {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        separate(w, first)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        separate(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}

/// `", "` before every member of an array or object but the first.
fn separate<W: ?Sized + std::io::Write>(w: &mut W, first: bool) -> std::io::Result<()> {
    if first {
        Ok(())
    } else {
        w.write_all(b", ")
    }
}

/// Walks a JSON text and fails on an object that repeats a key (a parsed map keeps one
/// of them, so rewriting the file would silently drop the other).
struct NoDuplicates;

impl<'de> Deserialize<'de> for NoDuplicates {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicates)
    }
}

impl<'de> Visitor<'de> for NoDuplicates {
    type Value = NoDuplicates;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(NoDuplicates)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(NoDuplicates)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(NoDuplicates)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(NoDuplicates)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(NoDuplicates)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(NoDuplicates)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<NoDuplicates>()?.is_some() {}
        Ok(NoDuplicates)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key {key:?} appears twice in one object"
                )));
            }
            map.next_value::<NoDuplicates>()?;
        }
        Ok(NoDuplicates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str) -> String {
        let doc = JsonDoc::parse(text.as_bytes()).unwrap();
        String::from_utf8(doc.render().unwrap()).unwrap()
    }

    #[test]
    fn layouts_survive_a_rewrite() {
        for text in [
            "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ]\n}\n",
            "{\n    \"a\": 1,\n    \"b\": \"x\"\n}",
            "{\r\n\t\"a\": 1\r\n}\r\n",
            "{\r\n\t\"a\": {\r\n\t\t\"b\": 1\r\n\t}\r\n}\r\n",
            "{\"a\": 1, \"b\": [1, 2]}\n",
            "{\"a\":1,\"b\":{\"c\":null}}",
            "{\r  \"a\": 1,\r  \"b\": [\r    1\r  ]\r}\r",
        ] {
            assert_eq!(roundtrip(text), text);
        }
    }

    #[test]
    fn only_edited_members_change() {
        let text = "{\n  \"T\": [0, 2, 4],\n  \"A\": 1.50,\n  \"B\": {\"x\": 1}\n}\n";
        let mut doc = JsonDoc::parse(text.as_bytes()).unwrap();
        doc.map.insert("A".into(), serde_json::json!({"y": [1]}));
        let out = String::from_utf8(doc.render().unwrap()).unwrap();
        assert_eq!(
            out,
            "{\n  \"T\": [0, 2, 4],\n  \"A\": {\n    \"y\": [\n      1\n    ]\n  },\n  \"B\": {\"x\": 1}\n}\n"
        );
    }

    #[test]
    fn line_ends_of_the_file_are_kept() {
        let edit = |text: &str| {
            let mut doc = JsonDoc::parse(text.as_bytes()).unwrap();
            doc.map.insert("N".into(), serde_json::json!([1]));
            String::from_utf8(doc.render().unwrap()).unwrap()
        };
        // CR-only line ends: the lines and the indent stay.
        assert_eq!(
            edit("{\r  \"a\": 1\r}\r"),
            "{\r  \"a\": 1,\r  \"N\": [\r    1\r  ]\r}\r"
        );
        // Mostly CRLF, but the last line end is LF: it stays LF.
        assert_eq!(
            edit("{\r\n  \"a\": 1\r\n}\n"),
            "{\r\n  \"a\": 1,\r\n  \"N\": [\r\n    1\r\n  ]\r\n}\n"
        );
        // LF file with one CRLF inside: new lines are LF, the last line end too.
        assert_eq!(
            edit("{\n  \"a\": 1,\r\n  \"b\": 2\n}\n"),
            "{\n  \"a\": 1,\n  \"b\": 2,\n  \"N\": [\n    1\n  ]\n}\n"
        );
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let err = JsonDoc::parse(br#"{"a": {"b": 1, "b": 2}}"#).err().unwrap();
        assert!(err.contains("appears twice"), "{err}");
        assert!(JsonDoc::parse(b"[1]").is_err());
    }
}
