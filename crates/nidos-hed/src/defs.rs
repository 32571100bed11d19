//! Definitions: `(Definition/Name[/#], (contents))` groups gathered from sidecars (or given by a
//! test), looked up by `Def` and `Def-expand`.

use foldhash::HashMap;

use crate::check::{all_nodes, Checker, Node, Role};
use crate::issue::HedIssue;
use crate::tag::Special;

#[derive(Debug, Clone)]
pub struct Definition {
    pub name: String,
    /// The contents' tag that holds `#`, written out, when the definition takes a value.
    pub placeholder: Option<String>,
    /// Order-insensitive key of the contents group (with `#` in place), if there are contents.
    pub key: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Definitions {
    by_name: HashMap<String, Definition>,
}

impl Definitions {
    pub fn get(&self, lower_name: &str) -> Option<&Definition> {
        self.by_name.get(lower_name)
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Adds the definitions in `s` (already checked elsewhere; broken ones are skipped).
    /// A name defined twice is a `DEFINITION_INVALID` issue.
    pub fn gather(&mut self, checker: &Checker<'_>, s: &str, issues: &mut Vec<HedIssue>) {
        let mut ignored = Vec::new();
        let Some(nodes) =
            checker.resolve_string(s, crate::tag::Placeholders::Allowed, &mut ignored)
        else {
            return;
        };
        for node in &nodes {
            let Node::Group(items, _) = node else {
                continue;
            };
            let Some(d) = items
                .iter()
                .filter_map(Node::resolved)
                .find(|r| r.special == Special::Definition)
            else {
                continue;
            };
            let (name, value) = d.def_name();
            let contents = items.iter().find_map(|n| match n {
                Node::Group(c, _) => Some(c),
                _ => None,
            });
            let placeholder = if value.is_some() {
                contents.and_then(|c| {
                    all_nodes(c).into_iter().find_map(|n| match n {
                        Node::Tag(t, _) if t.text.contains('#') => Some(t.text.clone()),
                        _ => None,
                    })
                })
            } else {
                None
            };
            let key = contents.map(|c| Node::Group(c.clone(), 0).key());
            if self.by_name.contains_key(&name) {
                issues.push(
                    HedIssue::error(
                        "DEFINITION_INVALID",
                        format!("the definition \"{name}\" is defined more than once"),
                    )
                    .at(d.token.start),
                );
                continue;
            }
            let display = d.token.text.clone();
            self.by_name.insert(
                name,
                Definition {
                    name: display,
                    placeholder,
                    key,
                },
            );
        }
    }

    /// Definitions from a list of strings, with the issues of the strings themselves.
    pub fn from_strings(checker: &Checker<'_>, strings: &[String]) -> (Self, Vec<HedIssue>) {
        let mut defs = Definitions::default();
        let mut issues = Vec::new();
        for s in strings {
            issues.extend(checker.check(s, Role::Definitions, false).issues);
            defs.gather(checker, s, &mut issues);
        }
        (defs, issues)
    }
}
