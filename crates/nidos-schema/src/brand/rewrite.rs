//! Rewriting one brand's tokens (version key, URI scheme, ignore file, name) into
//! another's, in every key and string of a tree, where they stand as whole words.

use serde_json::Value;

use crate::model::Brand;

/// Rewrites the tokens of brand `from` into those of brand `to` in every key and
/// string of `raw`, except the brand tables themselves (`meta.brand`, `meta.brands`).
pub(crate) fn translate(raw: &mut Value, from: &Brand, to: &Brand) {
    if from == to {
        return;
    }
    let t = Tokens::new(from, to);
    let Value::Object(top) = raw else { return };
    for (k, v) in top.iter_mut() {
        if k == "meta" {
            if let Value::Object(meta) = v {
                for (mk, mv) in meta.iter_mut() {
                    if mk != "brand" && mk != "brands" {
                        t.value(mv);
                    }
                }
            }
        } else {
            t.value(v);
        }
    }
}

/// The (from, to) token pairs of a translation, longest first, and a quick test for
/// whether a string holds any of them (most of a tree's text holds none).
pub(crate) struct Tokens {
    pairs: Vec<(String, String)>,
    any: Option<regex::Regex>,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Tokens {
    pub(crate) fn new(from: &Brand, to: &Brand) -> Tokens {
        let mut pairs = vec![
            (from.version_key.clone(), to.version_key.clone()),
            (from.ignore_file.clone(), to.ignore_file.clone()),
            (
                format!("{}:", from.uri_scheme),
                format!("{}:", to.uri_scheme),
            ),
            (
                format!("{}-uri", from.uri_scheme),
                format!("{}-uri", to.uri_scheme),
            ),
            (
                format!("{}_uri", from.uri_scheme),
                format!("{}_uri", to.uri_scheme),
            ),
            (from.name.clone(), to.name.clone()),
        ];
        pairs.retain(|(a, _)| !a.is_empty());
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        let alternation: Vec<String> = pairs.iter().map(|(a, _)| regex::escape(a)).collect();
        let any = regex::Regex::new(&alternation.join("|")).ok();
        Tokens { pairs, any }
    }

    fn value(&self, v: &mut Value) {
        match v {
            Value::String(s) => {
                if let Some(n) = self.string(s) {
                    *s = n;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|x| self.value(x)),
            Value::Object(m) => {
                if m.keys().any(|k| self.string(k).is_some()) {
                    let old = std::mem::take(m);
                    for (k, mut x) in old {
                        self.value(&mut x);
                        let k = self.string(&k).unwrap_or(k);
                        m.insert(k, x);
                    }
                } else {
                    m.values_mut().for_each(|x| self.value(x));
                }
            }
            _ => {}
        }
    }

    /// The translated string, or `None` when nothing changes.
    pub(crate) fn string(&self, s: &str) -> Option<String> {
        let found = match &self.any {
            Some(re) => re.is_match(s),
            None => self.pairs.iter().any(|(a, _)| s.contains(a.as_str())),
        };
        if !found {
            return None;
        }
        let mut out = String::with_capacity(s.len() + 8);
        let mut changed = false;
        let mut prev: Option<char> = None;
        let mut i = 0;
        while i < s.len() {
            let rest = &s[i..];
            let hit = self.pairs.iter().find(|(a, _)| {
                if !rest.starts_with(a.as_str()) {
                    return false;
                }
                let starts_word = a.chars().next().is_some_and(is_word);
                let ends_word = a.chars().last().is_some_and(is_word);
                let before_ok = !starts_word || !prev.is_some_and(is_word);
                let after_ok = !ends_word || !rest[a.len()..].chars().next().is_some_and(is_word);
                before_ok && after_ok
            });
            if let Some((a, b)) = hit {
                out.push_str(b);
                prev = a.chars().last();
                i += a.len();
                changed = true;
            } else if let Some(c) = rest.chars().next() {
                out.push(c);
                prev = Some(c);
                i += c.len_utf8();
            } else {
                break;
            }
        }
        changed.then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brand::brand_named;

    fn tokens() -> Tokens {
        Tokens::new(&brand_named("Std"), &brand_named("Up"))
    }

    #[test]
    fn whole_tokens_only() {
        let t = tokens();
        for (from, to) in [
            ("json.StdVersion != null", Some("json.UpVersion != null")),
            ("std:[0-9a-z]+", Some("up:[0-9a-z]+")),
            ("exists(x, \"std-uri\")", Some("exists(x, \"up-uri\")")),
            ("std_uri", Some("up_uri")),
            ("Std URI", Some("Up URI")),
            ("see .stdignore", Some("see .upignore")),
            ("write std::sub-01/x", Some("write up::sub-01/x")),
            ("StdVersionX", None),
            ("UNKNOWN_STD_VERSION", None),
            ("hwstd:x", None),
            ("Stdout", None),
            ("standard", None),
        ] {
            assert_eq!(t.string(from).as_deref(), to, "{from}");
        }
    }
}
