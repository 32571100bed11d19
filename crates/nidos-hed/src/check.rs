//! The checks of one HED string beyond single tags: repeated expressions, unique tags, the
//! placement of group-bound and top-level tags, definitions, `Def`/`Def-expand` use and the
//! shape of temporal groups (`Onset`, `Offset`, `Inset`, `Duration`, `Delay`).

use std::cell::RefCell;

use foldhash::HashMap;

use crate::defs::Definitions;
use crate::issue::HedIssue;
use crate::parse::{parse, Item, TagToken};
use crate::tag::{resolve, Placeholders, Resolved, Special};
use crate::versions::HedSchemas;

/// An item of a string after tag resolution.
#[derive(Debug, Clone)]
pub enum Node {
    /// A tag; `None` when it did not resolve (its issue is already reported).
    Tag(TagToken, Option<Resolved>),
    Group(Vec<Node>, usize),
    Splice(TagToken),
}

impl Node {
    pub fn resolved(&self) -> Option<&Resolved> {
        match self {
            Node::Tag(_, r) => r.as_ref(),
            _ => None,
        }
    }
    fn special(&self) -> Special {
        self.resolved().map_or(Special::None, |r| r.special)
    }
    fn is_group(&self) -> bool {
        matches!(self, Node::Group(..))
    }
    /// An order-insensitive key for duplicate detection and content comparison.
    pub fn key(&self) -> String {
        match self {
            Node::Tag(t, r) => r
                .as_ref()
                .map_or_else(|| t.text.to_lowercase(), |r| r.canonical.clone()),
            Node::Group(items, _) => {
                let mut keys: Vec<String> = items.iter().map(Node::key).collect();
                keys.sort();
                format!("({})", keys.join(","))
            }
            Node::Splice(t) => t.text.to_lowercase(),
        }
    }
    fn offset(&self) -> usize {
        match self {
            Node::Tag(t, _) | Node::Splice(t) => t.start,
            Node::Group(_, s) => *s,
        }
    }
    /// The group's `Def-expand` tag, when this is a `Def-expand` group.
    fn def_expand(&self) -> Option<&Resolved> {
        match self {
            Node::Group(items, _) => items
                .iter()
                .filter_map(Node::resolved)
                .find(|r| r.special == Special::DefExpand),
            _ => None,
        }
    }
}

/// The tags among `items` (not in nested groups) that were resolved and pass `keep`.
fn resolved_where(items: &[Node], keep: impl Fn(&Resolved) -> bool) -> Vec<&Resolved> {
    items
        .iter()
        .filter_map(Node::resolved)
        .filter(|r| keep(r))
        .collect()
}

/// What the string is and where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A complete event annotation (an events row, a HED column cell, a test string).
    Event,
    /// A sidecar entry for a value column: exactly one `#`.
    SidecarValue,
    /// A sidecar entry for a categorical level: no `#`.
    SidecarLevel,
    /// Definitions given on their own (a test's definition list).
    Definitions,
}

pub struct Checker<'a> {
    pub schemas: &'a HedSchemas,
    pub defs: &'a Definitions,
    /// Resolutions already made, by tag text and placeholder rule (annotations repeat the
    /// same tags row after row).
    resolved: RefCell<HashMap<(String, bool), Resolution>>,
}

/// A tag's resolution and the issues it gave.
type Resolution = (Option<Resolved>, Vec<HedIssue>);

/// Distinct tags a checker remembers before it stops adding to its cache.
const CACHE_LIMIT: usize = 1 << 14;

/// The result of checking one string.
pub struct Checked {
    pub nodes: Vec<Node>,
    pub issues: Vec<HedIssue>,
}

fn e(code: &'static str, at: usize, msg: impl Into<String>) -> HedIssue {
    HedIssue::error(code, msg).at(at)
}

impl<'a> Checker<'a> {
    pub fn new(schemas: &'a HedSchemas, defs: &'a Definitions) -> Self {
        Checker {
            schemas,
            defs,
            resolved: RefCell::new(HashMap::default()),
        }
    }

    /// [`resolve`], remembered per tag text; offsets are those of `t`.
    fn resolve_cached(
        &self,
        t: &TagToken,
        placeholders: Placeholders,
        issues: &mut Vec<HedIssue>,
    ) -> Option<Resolved> {
        let key = (t.text.clone(), placeholders == Placeholders::Allowed);
        if let Some((r, found)) = self.resolved.borrow().get(&key) {
            issues.extend(found.iter().cloned().map(|i| i.at(t.start)));
            return r.clone().map(|mut r| {
                r.token = t.clone();
                r
            });
        }
        let mut found = Vec::new();
        let r = resolve(t, self.schemas, placeholders, &mut found);
        issues.extend(found.iter().cloned());
        // A tag with a value (`Experimental-trial/12`) is left out: a value column gives
        // one such tag per distinct cell, each met once (its piece is remembered whole), and
        // a table with thousands of them grew the cache, and had fresh pages zeroed, for
        // entries never read again.
        let with_value = r.as_ref().is_some_and(|r| r.value.is_some());
        let mut cache = self.resolved.borrow_mut();
        if cache.len() < CACHE_LIMIT && !with_value {
            cache.insert(key, (r.clone(), found));
        }
        r
    }

    /// Parses and resolves `s` without the structural checks.
    pub fn resolve_string(
        &self,
        s: &str,
        placeholders: Placeholders,
        issues: &mut Vec<HedIssue>,
    ) -> Option<Vec<Node>> {
        let (tree, syntax) = parse(s);
        let failed = syntax.iter().any(|i| !i.warning);
        issues.extend(syntax);
        if failed {
            return None;
        }
        Some(self.resolve_items(&tree.items, placeholders, issues))
    }

    fn resolve_items(
        &self,
        items: &[Item],
        placeholders: Placeholders,
        issues: &mut Vec<HedIssue>,
    ) -> Vec<Node> {
        items
            .iter()
            .map(|item| match item {
                Item::Tag(t) => Node::Tag(t.clone(), self.resolve_cached(t, placeholders, issues)),
                Item::Group(g) => {
                    Node::Group(self.resolve_items(&g.items, placeholders, issues), g.start)
                }
                Item::Splice(t) => Node::Splice(t.clone()),
            })
            .collect()
    }

    /// Checks one string in its role.
    pub fn check(&self, s: &str, role: Role, allow_splices: bool) -> Checked {
        self.check_with(s, role, allow_splices, false)
    }

    /// As [`Checker::check`]; `deferred` marks a sidecar string that is spliced into another
    /// column's annotation, so its top level is not the event's top level.
    pub fn check_with(&self, s: &str, role: Role, allow_splices: bool, deferred: bool) -> Checked {
        let mut issues = Vec::new();
        let placeholders = if role == Role::Event {
            Placeholders::Forbidden
        } else {
            Placeholders::Allowed
        };
        let Some(nodes) = self.resolve_string(s, placeholders, &mut issues) else {
            return Checked {
                nodes: Vec::new(),
                issues,
            };
        };
        if !allow_splices {
            for n in all_nodes(&nodes) {
                if let Node::Splice(t) = n {
                    issues.push(e(
                        "CHARACTER_INVALID",
                        t.start,
                        format!("curly braces \"{}\" are only allowed in sidecars", t.text),
                    ));
                }
            }
        }
        self.check_level(&nodes, 0, role, deferred, &mut issues);
        self.check_unique(&nodes, &mut issues);
        if matches!(role, Role::SidecarValue | Role::SidecarLevel) {
            let is_def = |n: &Node| match n {
                Node::Group(items, _) => items.iter().any(|i| i.special() == Special::Definition),
                _ => false,
            };
            if nodes.iter().any(is_def) && !nodes.iter().all(is_def) {
                issues.push(e(
                    "DEFINITION_INVALID",
                    0,
                    "a sidecar entry with definitions may hold nothing else",
                ));
            }
        }
        if matches!(role, Role::SidecarValue | Role::SidecarLevel) {
            let outside: Vec<Node> = nodes
                .iter()
                .filter(|n| match n {
                    Node::Group(items, _) => {
                        !items.iter().any(|i| i.special() == Special::Definition)
                    }
                    _ => true,
                })
                .cloned()
                .collect();
            let count = placeholder_count(&outside);
            if role == Role::SidecarValue && count != 1 {
                issues.push(e(
                    "PLACEHOLDER_INVALID",
                    0,
                    format!("a value column's annotation needs exactly one #, found {count}"),
                ));
            }
            if role == Role::SidecarLevel && count != 0 {
                issues.push(e(
                    "PLACEHOLDER_INVALID",
                    0,
                    "a categorical level's annotation may not contain #",
                ));
            }
        }
        Checked { nodes, issues }
    }

    fn check_unique(&self, nodes: &[Node], issues: &mut Vec<HedIssue>) {
        let mut seen: HashMap<usize, usize> = HashMap::default();
        for n in all_nodes(nodes) {
            if let Some(r) = n.resolved() {
                if r.unique {
                    let count = seen.entry(r.node).or_insert(0);
                    *count += 1;
                    if *count == 2 {
                        issues.push(e(
                            "TAG_NOT_UNIQUE",
                            r.token.start,
                            format!("tag \"{}\" may appear only once in an event", r.token.text),
                        ));
                    }
                }
            }
        }
    }

    /// Checks the items of the root (`depth` 0) or of a group at `depth`.
    fn check_level(
        &self,
        items: &[Node],
        depth: usize,
        role: Role,
        deferred: bool,
        issues: &mut Vec<HedIssue>,
    ) {
        let mut keys: HashMap<String, ()> = HashMap::default();
        for item in items {
            if keys.insert(item.key(), ()).is_some() {
                issues.push(e(
                    "TAG_EXPRESSION_REPEATED",
                    item.offset(),
                    format!(
                        "the expression at {} repeats one at the same level",
                        item.offset()
                    ),
                ));
            }
        }
        for item in items {
            if let Node::Tag(t, Some(r)) = item {
                if depth == 0 && !deferred && (r.top_level_group || r.tag_group) {
                    issues.push(e(
                        "TAG_GROUP_ERROR",
                        t.start,
                        format!("tag \"{}\" must be inside a tag group", t.text),
                    ));
                } else if depth > 1 && r.top_level_group {
                    issues.push(e(
                        "TAG_GROUP_ERROR",
                        t.start,
                        format!("tag \"{}\" must be in a top-level tag group", t.text),
                    ));
                }
                if r.special == Special::Def {
                    self.check_def(r, issues);
                }
            }
        }
        if depth > 0 {
            let tops = resolved_where(items, |r| r.top_level_group);
            let delays = tops.iter().filter(|r| r.special == Special::Delay).count();
            if tops.len() - delays > 1 || delays > 1 {
                issues.push(e(
                    "TAG_GROUP_ERROR",
                    tops[1].token.start,
                    "a tag group holds more than one top-level tag",
                ));
            }
        }
        let has = |s: Special| items.iter().any(|n| n.special() == s);
        if depth == 1 {
            if has(Special::Definition) {
                if role == Role::Event {
                    let at = items
                        .iter()
                        .find(|n| n.special() == Special::Definition)
                        .map_or(0, Node::offset);
                    issues.push(e(
                        "DEFINITION_INVALID",
                        at,
                        "definitions are only allowed in sidecars",
                    ));
                } else {
                    check_definition_group(items, issues);
                }
            } else if has(Special::Onset) || has(Special::Offset) || has(Special::Inset) {
                self.check_temporal(items, issues);
            } else if has(Special::Duration) || has(Special::Delay) {
                check_duration(items, issues);
            }
        }
        if has(Special::DefExpand) {
            self.check_def_expand(items, issues);
        }
        for item in items {
            if let Node::Group(inner, _) = item {
                self.check_level(inner, depth + 1, role, false, issues);
            }
        }
    }

    fn check_def(&self, r: &Resolved, issues: &mut Vec<HedIssue>) {
        let (name, value) = r.def_name();
        let at = r.token.start;
        let Some(def) = self.defs.get(&name) else {
            issues.push(e(
                "DEF_INVALID",
                at,
                format!("\"{}\" uses a definition that does not exist", r.token.text),
            ));
            return;
        };
        match (&value, def.placeholder.is_some()) {
            (None, true) => issues.push(e(
                "DEF_INVALID",
                at,
                format!(
                    "\"{}\" needs a value for the definition's placeholder",
                    r.token.text
                ),
            )),
            (Some(_), false) => issues.push(e(
                "DEF_INVALID",
                at,
                format!(
                    "\"{}\" gives a value to a definition without a placeholder",
                    r.token.text
                ),
            )),
            (Some(v), true) => {
                if v != "#" {
                    self.check_substitution(def, v, r, issues);
                }
            }
            (None, false) => {}
        }
    }

    /// Checks the definition's placeholder tag with `value` put in.
    fn check_substitution(
        &self,
        def: &crate::defs::Definition,
        value: &str,
        r: &Resolved,
        issues: &mut Vec<HedIssue>,
    ) {
        let Some(template) = &def.placeholder else {
            return;
        };
        let text = template.replacen('#', value, 1);
        let token = TagToken {
            text,
            start: r.token.start,
            end: r.token.end,
        };
        let mut sub = Vec::new();
        resolve(&token, self.schemas, Placeholders::Forbidden, &mut sub);
        for mut issue in sub.into_iter().filter(|i| !i.warning) {
            issue.message = format!("\"{}\": {}", r.token.text, issue.message);
            issues.push(issue);
        }
    }

    fn check_def_expand(&self, items: &[Node], issues: &mut Vec<HedIssue>) {
        let expands = resolved_where(items, |r| r.special == Special::DefExpand);
        let Some(r) = expands.first() else {
            return;
        };
        let at = r.token.start;
        let groups: Vec<&Node> = items.iter().filter(|n| n.is_group()).collect();
        if expands.len() > 1 || items.len() > 2 || groups.len() > 1 {
            issues.push(e(
                "DEF_EXPAND_INVALID",
                at,
                format!(
                    "the group of \"{}\" may hold only the tag and one group",
                    r.token.text
                ),
            ));
            return;
        }
        let (name, value) = r.def_name();
        let Some(def) = self.defs.get(&name) else {
            issues.push(e(
                "DEF_EXPAND_INVALID",
                at,
                format!(
                    "\"{}\" expands a definition that does not exist",
                    r.token.text
                ),
            ));
            return;
        };
        match (&value, def.placeholder.is_some()) {
            (None, true) | (Some(_), false) => {
                issues.push(e(
                    "DEF_EXPAND_INVALID",
                    at,
                    format!(
                        "\"{}\" does not match the definition's placeholder",
                        r.token.text
                    ),
                ));
                return;
            }
            (Some(v), true) if v != "#" => {
                let before = issues.len();
                self.check_substitution(def, v, r, issues);
                if issues.len() > before {
                    return;
                }
            }
            _ => {}
        }
        let Some(Node::Group(contents, _)) = groups.first() else {
            issues.push(e(
                "DEF_EXPAND_INVALID",
                at,
                format!("\"{}\" has no expanded contents", r.token.text),
            ));
            return;
        };
        let expected = match (&def.key, &value) {
            (Some(k), Some(v)) if def.placeholder.is_some() => {
                Some(k.replacen('#', &v.to_lowercase(), 1))
            }
            (k, _) => k.clone(),
        };
        let actual = Node::Group(contents.clone(), 0).key();
        if expected.as_deref() != Some(actual.as_str()) {
            issues.push(e(
                "DEF_EXPAND_INVALID",
                at,
                format!(
                    "the contents of \"{}\" differ from its definition",
                    r.token.text
                ),
            ));
        }
    }

    fn check_temporal(&self, items: &[Node], issues: &mut Vec<HedIssue>) {
        let temporal = resolved_where(items, |r| {
            matches!(r.special, Special::Onset | Special::Offset | Special::Inset)
        });
        let Some(t) = temporal.first() else {
            return;
        };
        let at = t.token.start;
        let name = t.token.text.clone();
        let mut anchors = 0;
        let mut others = 0;
        for item in items {
            match item {
                Node::Tag(_, Some(r)) => match r.special {
                    Special::Def => anchors += 1,
                    Special::Onset | Special::Offset | Special::Inset | Special::Delay => {}
                    _ => {
                        issues.push(e(
                            "TEMPORAL_TAG_ERROR",
                            r.token.start,
                            format!(
                                "tag \"{}\" may not sit beside \"{name}\"; put it in a group",
                                r.token.text
                            ),
                        ));
                    }
                },
                Node::Group(..) if item.def_expand().is_some() => anchors += 1,
                Node::Group(..) => others += 1,
                _ => {}
            }
        }
        if anchors != 1 {
            issues.push(e("TEMPORAL_TAG_ERROR", at, format!("the group of \"{name}\" needs exactly one Def tag or Def-expand group, found {anchors}")));
        }
        let allowed = if t.special == Special::Offset { 0 } else { 1 };
        if others > allowed {
            issues.push(e("TEMPORAL_TAG_ERROR", at, format!("the group of \"{name}\" has {others} content groups, at most {allowed} allowed")));
        }
    }
}

fn check_duration(items: &[Node], issues: &mut Vec<HedIssue>) {
    let Some(t) = items
        .iter()
        .filter_map(Node::resolved)
        .find(|r| matches!(r.special, Special::Duration | Special::Delay))
    else {
        return;
    };
    let mut groups = 0;
    for item in items {
        match item {
            Node::Tag(_, Some(r)) if matches!(r.special, Special::Duration | Special::Delay) => {}
            Node::Tag(tok, _) => {
                issues.push(e(
                    "TEMPORAL_TAG_ERROR",
                    tok.start,
                    format!(
                        "tag \"{}\" may not sit beside \"{}\"; put it in a group",
                        tok.text, t.token.text
                    ),
                ));
            }
            Node::Group(..) if item.def_expand().is_some() => {
                issues.push(e(
                    "TEMPORAL_TAG_ERROR",
                    item.offset(),
                    format!(
                        "\"{}\" needs a content group, not a Def-expand group",
                        t.token.text
                    ),
                ));
            }
            Node::Group(..) => groups += 1,
            Node::Splice(_) => groups += 1,
        }
    }
    if groups != 1 {
        issues.push(e(
            "TEMPORAL_TAG_ERROR",
            t.token.start,
            format!(
                "the group of \"{}\" needs exactly one content group, found {groups}",
                t.token.text
            ),
        ));
    }
}

/// The shape of a `(Definition/Name[/#], (contents))` group.
fn check_definition_group(items: &[Node], issues: &mut Vec<HedIssue>) {
    let defs = resolved_where(items, |r| r.special == Special::Definition);
    let Some(d) = defs.first() else {
        return;
    };
    let at = d.token.start;
    let text = &d.token.text;
    if defs.len() > 1 {
        issues.push(e(
            "DEFINITION_INVALID",
            at,
            format!("the group of \"{text}\" holds more than one Definition"),
        ));
        return;
    }
    let groups: Vec<&Node> = items.iter().filter(|n| n.is_group()).collect();
    if items.len() - groups.len() > 1 || groups.len() > 1 {
        issues.push(e(
            "DEFINITION_INVALID",
            at,
            format!("the group of \"{text}\" may hold only the Definition and one group"),
        ));
        return;
    }
    let (_, value) = d.def_name();
    let wants_placeholder = match value.as_deref() {
        None => false,
        Some("#") => true,
        Some(_) => {
            issues.push(e(
                "DEFINITION_INVALID",
                at,
                format!("\"{text}\": a definition name may only be followed by #"),
            ));
            return;
        }
    };
    let mut count = 0;
    if let Some(Node::Group(contents, _)) = groups.first() {
        for n in all_nodes(contents) {
            if let Some(r) = n.resolved() {
                if matches!(
                    r.special,
                    Special::Def | Special::DefExpand | Special::Definition
                ) || r.top_level_group
                {
                    issues.push(e(
                        "DEFINITION_INVALID",
                        r.token.start,
                        format!(
                            "\"{}\" may not appear inside the definition \"{text}\"",
                            r.token.text
                        ),
                    ));
                    return;
                }
            }
        }
        count = placeholder_count(contents);
    }
    if wants_placeholder && count != 1 || !wants_placeholder && count != 0 {
        issues.push(e(
            "DEFINITION_INVALID",
            at,
            format!(
                "\"{text}\" and its contents disagree on placeholders ({count} # in the contents)"
            ),
        ));
    }
}

/// Every node at every depth.
pub fn all_nodes(nodes: &[Node]) -> Vec<&Node> {
    let mut out = Vec::new();
    let mut stack: Vec<&Node> = nodes.iter().rev().collect();
    while let Some(n) = stack.pop() {
        out.push(n);
        if let Node::Group(items, _) = n {
            stack.extend(items.iter().rev());
        }
    }
    out
}

/// Number of `#` placeholders among the tags (`Def/X/#` counts).
pub fn placeholder_count(nodes: &[Node]) -> usize {
    all_nodes(nodes)
        .into_iter()
        .filter_map(|n| match n {
            Node::Tag(t, _) => Some(t.text.matches('#').count()),
            _ => None,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::tests::schemas_and_defs;

    /// Tags with a value are resolved anew each time, with the same result; tags without
    /// one (and tags that do not resolve) are remembered.
    #[test]
    fn tags_with_a_value_are_not_remembered() {
        let (schemas, defs) = schemas_and_defs();
        let checker = Checker::new(&schemas, &defs);
        let s = "Experimental-trial/12, Red, Frequency/550 Hz, Frequency/x Hz";
        let first = checker.check(s, Role::Event, false);
        let again = checker.check(s, Role::Event, false);
        assert_eq!(format!("{:?}", first.issues), format!("{:?}", again.issues));
        assert!(
            !first.issues.is_empty(),
            "a value of the wrong class gives an issue"
        );
        let remembered = |tag: &str| checker.resolved.borrow().keys().any(|(t, _)| t == tag);
        assert!(remembered("Red"));
        assert!(!remembered("Experimental-trial/12"));
        assert!(!remembered("Frequency/550 Hz"));
    }
}
