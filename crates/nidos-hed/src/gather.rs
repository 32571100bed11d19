//! Definitions gathered from HED strings: each `(Definition/Name[/#], (contents))` group
//! resolved by the checker becomes an entry of [`Definitions`].

use crate::check::{all_nodes, Checker, Node, Role};
use crate::defs::{Definition, Definitions};
use crate::issue::HedIssue;
use crate::tag::Special;

impl Definitions {
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
            if self.contains(&name) {
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
            self.insert(
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
