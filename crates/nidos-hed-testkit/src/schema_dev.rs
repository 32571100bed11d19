//! The checks a schema must pass before it is used (the HED specification's schema validation
//! errors): header and library rules, sections, characters of terms and descriptions, duplicate
//! terms, attributes (known, allowed on the element, valid values) and deprecation.
//! Runs on a schema read from MediaWiki text ([`crate::wiki`]).

use std::sync::Arc;

use foldhash::{HashMap, HashSet};

use crate::wiki::{Entry, WikiSchema};
use nidos_hed::issue::HedIssue;
use nidos_hed::schema::HedSchema;
use nidos_hed::versions::SchemaSource;

/// Kinds of schema elements, as bits so that an attribute's domain is a set.
const TAG: u8 = 1;
const UNIT_CLASS: u8 = 2;
const UNIT: u8 = 4;
const MODIFIER: u8 = 8;
const VALUE_CLASS: u8 = 16;
const ALL: u8 = TAG | UNIT_CLASS | UNIT | MODIFIER | VALUE_CLASS;

/// What an attribute's value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    /// A flag: no value.
    Flag,
    /// A tag of this schema or its partner.
    TagRef,
    /// A top-level tag of the partnered standard schema.
    Rooted,
    UnitClassRef,
    ValueClassRef,
    /// A unit of the element's own unit class.
    DefaultUnit,
    /// A positive number.
    Number,
    /// A character or a named character group.
    AllowedChar,
    /// An earlier released version of this schema.
    Version,
    HedId,
    Library,
    /// Free text (annotations).
    Text,
    /// An attribute the schema defines itself: anything goes.
    Any,
}

/// The attributes the HED specification defines: name, domain, value.
const BUILT_IN: &[(&str, u8, ValueKind)] = &[
    ("extensionAllowed", TAG, ValueKind::Flag),
    ("recommended", TAG, ValueKind::Flag),
    ("requireChild", TAG, ValueKind::Flag),
    ("required", TAG, ValueKind::Flag),
    ("reserved", TAG, ValueKind::Flag),
    ("tagGroup", TAG, ValueKind::Flag),
    ("takesValue", TAG, ValueKind::Flag),
    ("topLevelTagGroup", TAG, ValueKind::Flag),
    ("unique", TAG, ValueKind::Flag),
    ("relatedTag", TAG, ValueKind::TagRef),
    ("suggestedTag", TAG, ValueKind::TagRef),
    ("rooted", TAG, ValueKind::Rooted),
    ("unitClass", TAG, ValueKind::UnitClassRef),
    ("valueClass", TAG, ValueKind::ValueClassRef),
    ("annotation", ALL, ValueKind::Text),
    ("deprecatedFrom", ALL, ValueKind::Version),
    ("hedId", ALL, ValueKind::HedId),
    ("inLibrary", ALL, ValueKind::Library),
    ("defaultUnits", UNIT_CLASS, ValueKind::DefaultUnit),
    ("SIUnit", UNIT, ValueKind::Flag),
    ("unitSymbol", UNIT, ValueKind::Flag),
    ("unitPrefix", UNIT, ValueKind::Flag),
    ("conversionFactor", UNIT | MODIFIER, ValueKind::Number),
    (
        "allowedCharacter",
        UNIT | VALUE_CLASS,
        ValueKind::AllowedChar,
    ),
    ("SIUnitModifier", MODIFIER, ValueKind::Flag),
    ("SIUnitSymbolModifier", MODIFIER, ValueKind::Flag),
];

/// Properties that give a schema-defined attribute its domain (older and newer names).
const DOMAIN_PROPERTIES: &[(&str, u8)] = &[
    ("elementProperty", ALL),
    ("elementDomain", ALL),
    ("tagDomain", TAG),
    ("nodeProperty", TAG),
    ("unitProperty", UNIT),
    ("unitDomain", UNIT),
    ("unitClassProperty", UNIT_CLASS),
    ("unitClassDomain", UNIT_CLASS),
    ("unitModifierProperty", MODIFIER),
    ("unitModifierDomain", MODIFIER),
    ("valueClassProperty", VALUE_CLASS),
    ("valueClassDomain", VALUE_CLASS),
];

/// Named character groups and the single characters named by a word.
const CHARACTER_NAMES: &[(&str, Option<char>)] = &[
    ("letters", None),
    ("digits", None),
    ("alphanumeric", None),
    ("text", None),
    ("nonascii", None),
    ("blank", Some(' ')),
    ("caret", Some('^')),
    ("dollar", Some('$')),
    ("hyphen", Some('-')),
    ("period", Some('.')),
    ("underscore", Some('_')),
    ("comma", Some(',')),
    ("colon", Some(':')),
    ("semicolon", Some(';')),
    ("slash", Some('/')),
    ("exclamation", Some('!')),
    ("percent", Some('%')),
    ("plus", Some('+')),
];

/// Released versions of the schemas whose history is known (for `deprecatedFrom`).
const RELEASED: &[(&str, &[&str])] = &[
    ("", &["8.0.0", "8.1.0", "8.2.0", "8.3.0", "8.4.0"]),
    ("score", &["1.0.0", "1.1.0", "1.2.0", "2.0.0", "2.1.0"]),
    ("lang", &["1.0.0", "1.1.0"]),
];

/// The hedId numbers the standard schema owns.
const STANDARD_ID_RANGE: std::ops::RangeInclusive<u32> = 10000..=39999;

#[derive(Debug, Clone)]
struct AttrDef {
    domain: u8,
    kind: ValueKind,
    deprecated: bool,
}

/// One element to check: its kind and entry, and whether it is deprecated.
struct Element<'a> {
    kind: u8,
    entry: &'a Entry,
    deprecated: bool,
    /// Index of the unit class a unit belongs to (in `unit_classes`).
    class: Option<usize>,
}

fn semver(v: &str) -> Option<(u32, u32, u32)> {
    let mut parts = v.split('.');
    let a = parts.next()?.parse().ok()?;
    let b = parts.next()?.parse().ok()?;
    let c = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((a, b, c))
}

fn is_term_char(c: char) -> bool {
    c.is_alphanumeric() || c == '-' || c == '_'
}

fn bad_description(text: &str) -> bool {
    text.chars()
        .any(|c| c == '{' || c == '}' || (c.is_control() && c != '\n'))
}

struct Checker<'a> {
    schema: &'a WikiSchema,
    partner: Option<Arc<HedSchema>>,
    /// The released schema of the same name and version, if available.
    released: Option<Arc<HedSchema>>,
    attrs: HashMap<String, AttrDef>,
    issues: Vec<HedIssue>,
}

impl Checker<'_> {
    fn push(&mut self, code: &'static str, entry: Option<&Entry>, msg: String) {
        let msg = match entry {
            Some(e) => format!("line {} ({}): {msg}", e.line, e.name),
            None => msg,
        };
        self.issues.push(HedIssue::error(code, msg));
    }
}

/// Checks a schema read from MediaWiki text; `source` gives the partnered standard schema and
/// released versions. An empty result means the schema may be used.
pub fn check_wiki(schema: &WikiSchema, source: &SchemaSource) -> Vec<HedIssue> {
    let mut c = Checker {
        schema,
        partner: None,
        released: None,
        attrs: HashMap::default(),
        issues: schema.problems.clone(),
    };
    check_header(&mut c, source);
    if semver(schema.version()).is_some() {
        let stem = match schema.library() {
            "" => format!("HED{}", schema.version()),
            lib => format!("HED_{lib}_{}", schema.version()),
        };
        c.released = source.load(&stem).ok();
    }
    c.attrs = attribute_table(schema);
    let elements = elements(schema);
    check_prose(&mut c);
    check_terms(&mut c, &elements);
    check_duplicates(&mut c, &elements);
    check_attribute_entries(&mut c);
    for el in &elements {
        check_element_attributes(&mut c, el, &elements);
    }
    check_deprecated_children(&mut c, &elements);
    c.issues
}

fn check_header(c: &mut Checker<'_>, source: &SchemaSource) {
    let s = c.schema;
    if s.header_value("version").is_some() && semver(s.version()).is_none() {
        c.push(
            "SCHEMA_HEADER_INVALID",
            None,
            format!("version \"{}\" is not major.minor.patch", s.version()),
        );
    }
    let library = s.header_value("library");
    if let Some(lib) = library {
        if lib.is_empty() || !lib.chars().all(|ch| ch.is_ascii_lowercase()) {
            c.push(
                "SCHEMA_LIBRARY_INVALID",
                None,
                format!("library name \"{lib}\" must be lower-case letters only"),
            );
        }
    }
    if let Some(ws) = s.header_value("withStandard") {
        if library.is_none() {
            c.push(
                "SCHEMA_LIBRARY_INVALID",
                None,
                "withStandard is given without a library".into(),
            );
        }
        match source.load(&format!("HED{ws}")) {
            Ok(p) if semver(ws).is_some() => c.partner = Some(p),
            _ => c.push(
                "SCHEMA_LIBRARY_INVALID",
                None,
                format!("withStandard names standard version \"{ws}\", which is not known"),
            ),
        }
    } else if s.unmerged() {
        c.push(
            "SCHEMA_LIBRARY_INVALID",
            None,
            "unmerged is given without withStandard".into(),
        );
    }
}

/// Attribute definitions: the specification's, overridden or extended by the schema's own.
fn attribute_table(schema: &WikiSchema) -> HashMap<String, AttrDef> {
    let mut table: HashMap<String, AttrDef> = BUILT_IN
        .iter()
        .map(|(n, d, k)| {
            (
                n.to_string(),
                AttrDef {
                    domain: *d,
                    kind: *k,
                    deprecated: false,
                },
            )
        })
        .collect();
    for e in &schema.attributes {
        let domain = e
            .attrs
            .iter()
            .filter_map(|(n, _)| DOMAIN_PROPERTIES.iter().find(|(p, _)| p == n))
            .fold(0u8, |acc, (_, d)| acc | d);
        let built_in = table.get(&e.name).cloned();
        let def = AttrDef {
            domain: match (domain, &built_in) {
                (0, Some(b)) => b.domain,
                (0, None) => TAG,
                (d, _) => d,
            },
            kind: built_in.map_or(ValueKind::Any, |b| b.kind),
            deprecated: e.has("deprecatedFrom"),
        };
        table.insert(e.name.clone(), def);
    }
    table
}

fn elements(schema: &WikiSchema) -> Vec<Element<'_>> {
    let mut out = Vec::new();
    for e in &schema.tags {
        out.push(Element {
            kind: TAG,
            entry: e,
            deprecated: e.has("deprecatedFrom"),
            class: None,
        });
    }
    let mut class = None;
    for (i, e) in schema.unit_classes.iter().enumerate() {
        let is_unit = e.depth >= 2;
        if !is_unit {
            class = Some(i);
        }
        out.push(Element {
            kind: if is_unit { UNIT } else { UNIT_CLASS },
            entry: e,
            deprecated: e.has("deprecatedFrom"),
            class: if is_unit { class } else { None },
        });
    }
    for (list, kind) in [
        (&schema.unit_modifiers, MODIFIER),
        (&schema.value_classes, VALUE_CLASS),
    ] {
        for e in list {
            out.push(Element {
                kind,
                entry: e,
                deprecated: e.has("deprecatedFrom"),
                class: None,
            });
        }
    }
    out
}

fn check_prose(c: &mut Checker<'_>) {
    for (what, text) in [
        ("prologue", &c.schema.prologue),
        ("epilogue", &c.schema.epilogue),
    ] {
        if text.chars().any(|ch| ch.is_control() && ch != '\n') {
            let msg = format!("the {what} contains a control character");
            c.push("SCHEMA_CHARACTER_INVALID", None, msg);
        }
    }
}

fn check_terms(c: &mut Checker<'_>, elements: &[Element<'_>]) {
    let s = c.schema;
    let others = s.attributes.iter().chain(&s.properties);
    let mut bad: Vec<(&Entry, String)> = Vec::new();
    for el in elements {
        let e = el.entry;
        let extra: Vec<char> = if el.kind == UNIT {
            e.values("allowedCharacter")
                .filter_map(|v| {
                    let mut chars = v.chars();
                    match (chars.next(), chars.next()) {
                        (Some(ch), None) => Some(ch),
                        _ => CHARACTER_NAMES
                            .iter()
                            .find(|(n, _)| *n == v)
                            .and_then(|(_, ch)| *ch),
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        let placeholder = el.kind == TAG && e.name == "#" && e.depth > 0;
        let ok = placeholder
            || (!e.name.is_empty()
                && e.name
                    .chars()
                    .all(|ch| is_term_char(ch) || extra.contains(&ch)));
        if !ok {
            bad.push((e, format!("term \"{}\" has an invalid character", e.name)));
        }
    }
    for e in others {
        if e.name.is_empty() || !e.name.chars().all(is_term_char) {
            bad.push((e, format!("term \"{}\" has an invalid character", e.name)));
        }
    }
    let all = s
        .tags
        .iter()
        .chain(&s.unit_classes)
        .chain(&s.unit_modifiers)
        .chain(&s.value_classes)
        .chain(&s.attributes)
        .chain(&s.properties);
    for e in all {
        if e.description.as_deref().is_some_and(bad_description) {
            bad.push((e, "the description has an invalid character".into()));
        }
    }
    for (e, msg) in bad {
        c.push("SCHEMA_CHARACTER_INVALID", Some(e), msg);
    }
}

fn check_duplicates(c: &mut Checker<'_>, elements: &[Element<'_>]) {
    let mut seen: HashSet<(u8, String)> = HashSet::default();
    let mut dups: Vec<&Entry> = Vec::new();
    for el in elements {
        let e = el.entry;
        if el.kind == TAG && e.name == "#" {
            continue;
        }
        // Symbols and unit modifiers are case-sensitive (`m` and `M`), other terms are not.
        let exact = el.kind == MODIFIER || (el.kind == UNIT && e.has("unitSymbol"));
        let key = if exact {
            e.name.clone()
        } else {
            e.name.to_lowercase()
        };
        if !seen.insert((el.kind, key)) {
            dups.push(e);
        }
    }
    for (list, kind) in [(&c.schema.attributes, 32u8), (&c.schema.properties, 64u8)] {
        for e in list {
            if !seen.insert((kind, e.name.clone())) {
                dups.push(e);
            }
        }
    }
    for e in dups {
        c.push(
            "SCHEMA_DUPLICATE_NODE",
            Some(e),
            "the term appears more than once".into(),
        );
    }
    // An unmerged library adds to its standard: its tags and units must be new.
    if let Some(partner) = c.partner.clone().filter(|_| c.schema.unmerged()) {
        let mut clashes = Vec::new();
        for el in elements {
            let e = el.entry;
            let clash = match el.kind {
                TAG => e.name != "#" && partner.lookup(&e.name).is_some(),
                UNIT => partner
                    .unit_classes
                    .values()
                    .flat_map(|uc| &uc.units)
                    .any(|u| {
                        if u.symbol || e.has("unitSymbol") {
                            u.name == e.name
                        } else {
                            u.name.eq_ignore_ascii_case(&e.name)
                        }
                    }),
                _ => false,
            };
            if clash {
                clashes.push(e);
            }
        }
        for e in clashes {
            c.push(
                "SCHEMA_LIBRARY_INVALID",
                Some(e),
                "the term is already in the partnered standard schema".into(),
            );
        }
    }
}

/// Attribute definitions themselves: a deprecated property needs a deprecated attribute.
fn check_attribute_entries(c: &mut Checker<'_>) {
    let deprecated_props: HashSet<&str> = c
        .schema
        .properties
        .iter()
        .filter(|p| p.has("deprecatedFrom"))
        .map(|p| p.name.as_str())
        .collect();
    let mut found = Vec::new();
    for e in &c.schema.attributes {
        if e.has("deprecatedFrom") {
            continue;
        }
        for (n, _) in &e.attrs {
            if deprecated_props.contains(n.as_str()) {
                found.push((e, n.clone()));
            }
        }
    }
    for (e, n) in found {
        c.push(
            "SCHEMA_DEPRECATION_ERROR",
            Some(e),
            format!("uses deprecated property {n} but is not deprecated itself"),
        );
    }
    let versions: Vec<(&Entry, String)> = c
        .schema
        .attributes
        .iter()
        .chain(&c.schema.properties)
        .filter_map(|e| e.value("deprecatedFrom").map(|v| (e, v.to_string())))
        .collect();
    for (e, v) in versions {
        check_deprecated_from(c, e, &v);
    }
}

fn check_deprecated_from(c: &mut Checker<'_>, e: &Entry, value: &str) {
    let own = semver(c.schema.version());
    let ok = match (semver(value), own) {
        (Some(v), Some(own)) => {
            let released = RELEASED
                .iter()
                .find(|(lib, _)| *lib == c.schema.library())
                .is_none_or(|(_, list)| list.contains(&value));
            v < own && released
        }
        _ => false,
    };
    if !ok {
        c.push(
            "SCHEMA_DEPRECATION_ERROR",
            Some(e),
            format!("deprecatedFrom={value} is not an earlier released version"),
        );
    }
}

fn check_element_attributes(c: &mut Checker<'_>, el: &Element<'_>, elements: &[Element<'_>]) {
    let e = el.entry;
    for (name, value) in &e.attrs {
        let Some(def) = c.attrs.get(name).cloned() else {
            c.push(
                "SCHEMA_ATTRIBUTE_INVALID",
                Some(e),
                format!("unknown attribute {name}"),
            );
            continue;
        };
        if def.domain & el.kind == 0 {
            c.push(
                "SCHEMA_ATTRIBUTE_INVALID",
                Some(e),
                format!("attribute {name} does not apply to this kind of element"),
            );
            continue;
        }
        if def.deprecated && !el.deprecated {
            c.push(
                "SCHEMA_DEPRECATION_ERROR",
                Some(e),
                format!("uses deprecated attribute {name} but is not deprecated itself"),
            );
        }
        if name == "takesValue" && e.name != "#" {
            c.push(
                "SCHEMA_ATTRIBUTE_VALUE_INVALID",
                Some(e),
                "takesValue is only for # placeholders".into(),
            );
        }
        if matches!(def.kind, ValueKind::Flag | ValueKind::Any) {
            continue;
        }
        let Some(value) = value.as_deref() else {
            c.push(
                "SCHEMA_ATTRIBUTE_VALUE_INVALID",
                Some(e),
                format!("attribute {name} needs a value"),
            );
            continue;
        };
        check_value(c, el, def.kind, name, value, elements);
    }
}

/// Finds a tag by name in the schema or its partner: (found, deprecated).
fn find_tag(c: &Checker<'_>, name: &str) -> Option<bool> {
    if let Some(t) = c
        .schema
        .tags
        .iter()
        .find(|t| t.name.eq_ignore_ascii_case(name))
    {
        return Some(t.has("deprecatedFrom"));
    }
    let partner = c.partner.as_ref()?;
    let i = partner.lookup(name)?;
    Some(partner.tags[i].deprecated_from.is_some())
}

fn check_value(
    c: &mut Checker<'_>,
    el: &Element<'_>,
    kind: ValueKind,
    name: &str,
    value: &str,
    elements: &[Element<'_>],
) {
    let e = el.entry;
    let invalid = |msg: String| ("SCHEMA_ATTRIBUTE_VALUE_INVALID", msg);
    let deprecation = |what: &str| {
        (
            "SCHEMA_DEPRECATION_ERROR",
            format!("{name} names deprecated {what} \"{value}\" but is not deprecated itself"),
        )
    };
    let find_own = |kind: u8| {
        elements
            .iter()
            .find(|x| x.kind == kind && x.entry.name.eq_ignore_ascii_case(value))
    };
    let problem: Option<(&'static str, String)> = match kind {
        ValueKind::TagRef => match find_tag(c, value) {
            None => Some(invalid(format!("{name} names unknown tag \"{value}\""))),
            Some(true) if !el.deprecated => Some(deprecation("tag")),
            Some(_) => None,
        },
        ValueKind::Rooted => check_rooted(c, e, value),
        ValueKind::UnitClassRef | ValueKind::ValueClassRef => {
            let (own_kind, what) = if kind == ValueKind::UnitClassRef {
                (UNIT_CLASS, "unit class")
            } else {
                (VALUE_CLASS, "value class")
            };
            let own = find_own(own_kind);
            let in_partner = c.partner.as_ref().is_some_and(|p| {
                if own_kind == UNIT_CLASS {
                    p.unit_classes.contains_key(value)
                } else {
                    p.value_classes.contains_key(value)
                }
            });
            if e.name != "#" {
                Some(invalid(format!("{name} is only for # placeholders")))
            } else if own.is_none() && !in_partner {
                Some(invalid(format!("{name} names unknown {what} \"{value}\"")))
            } else if own.is_some_and(|o| o.deprecated) && !el.deprecated {
                Some(deprecation(what))
            } else {
                None
            }
        }
        ValueKind::DefaultUnit => {
            let unit = elements.iter().find(|x| {
                x.kind == UNIT
                    && x.class.is_some()
                    && x.class == class_index(c.schema, e)
                    && x.entry.name == value
            });
            match unit {
                None => Some(invalid(format!(
                    "defaultUnits \"{value}\" is not a unit of this class"
                ))),
                Some(u) if u.deprecated && !el.deprecated => Some(deprecation("unit")),
                Some(_) => None,
            }
        }
        ValueKind::Number => match value.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => None,
            _ => Some(invalid(format!(
                "{name} \"{value}\" is not a positive number"
            ))),
        },
        ValueKind::AllowedChar => {
            let single = value.chars().count() == 1;
            (!single && !CHARACTER_NAMES.iter().any(|(n, _)| *n == value)).then(|| {
                invalid(format!(
                    "allowedCharacter \"{value}\" is neither a character nor a character group"
                ))
            })
        }
        ValueKind::Version => {
            check_deprecated_from(c, e, value);
            None
        }
        ValueKind::HedId => check_hed_id(c, value)
            .or_else(|| {
                (el.kind == TAG)
                    .then(|| changed_hed_id(c, e, value))
                    .flatten()
            })
            .map(invalid),
        ValueKind::Library => {
            if c.schema.unmerged() {
                Some((
                    "SCHEMA_LIBRARY_INVALID",
                    "inLibrary does not belong in an unmerged library schema".into(),
                ))
            } else if value != c.schema.library() {
                Some(invalid(format!(
                    "inLibrary \"{value}\" is not this schema's library"
                )))
            } else {
                None
            }
        }
        ValueKind::Text | ValueKind::Flag | ValueKind::Any => None,
    };
    if let Some((code, msg)) = problem {
        c.push(code, Some(e), msg);
    }
}

/// Index (in `unit_classes`) of a unit class entry.
fn class_index(schema: &WikiSchema, e: &Entry) -> Option<usize> {
    schema.unit_classes.iter().position(|x| std::ptr::eq(x, e))
}

fn check_rooted(c: &Checker<'_>, e: &Entry, value: &str) -> Option<(&'static str, String)> {
    let lib = |msg: &str| Some(("SCHEMA_LIBRARY_INVALID", msg.to_string()));
    let s = c.schema;
    if s.library().is_empty() || !s.unmerged() {
        return lib("rooted belongs only in an unmerged library schema");
    }
    if e.depth != 0 {
        return lib("only a top-level tag can be rooted");
    }
    let Some(partner) = &c.partner else {
        return lib("rooted needs a partnered standard schema");
    };
    if partner.lookup(value).is_none() {
        return lib("rooted names a tag the partnered standard schema does not have");
    }
    None
}

fn check_hed_id(c: &Checker<'_>, value: &str) -> Option<String> {
    let digits = value.strip_prefix("HED_")?;
    let Some(n) = (digits.len() == 7 && digits.chars().all(|ch| ch.is_ascii_digit()))
        .then(|| digits.parse::<u32>().ok())
        .flatten()
    else {
        return Some(format!("hedId \"{value}\" is not HED_ and seven digits"));
    };
    if c.schema.library().is_empty() && !STANDARD_ID_RANGE.contains(&n) {
        return Some(format!(
            "hedId \"{value}\" is outside the standard schema's range"
        ));
    }
    None
}

/// A tag of a released schema keeps its `hedId`: compared with the released file of the same
/// version, when that file is available with its identifiers.
fn changed_hed_id(c: &Checker<'_>, e: &Entry, value: &str) -> Option<String> {
    let released = c.released.as_ref()?;
    let i = released.lookup(&e.name)?;
    let id = released.tags[i].hed_id.as_deref()?;
    (id != value).then(|| {
        format!("hedId {value} differs from {id}, the tag's identifier in the released schema")
    })
}

/// Children of deprecated tags and units of deprecated unit classes must be deprecated too.
fn check_deprecated_children(c: &mut Checker<'_>, elements: &[Element<'_>]) {
    let mut found = Vec::new();
    // Deprecation of each open depth of the tag tree.
    let mut open: Vec<bool> = Vec::new();
    for el in elements.iter().filter(|x| x.kind == TAG) {
        let d = el.entry.depth;
        let parent_deprecated = d > 0 && open.get(d - 1).or(open.last()).copied() == Some(true);
        if parent_deprecated && !el.deprecated {
            found.push(el.entry);
        }
        open.truncate(d);
        open.push(el.deprecated);
    }
    for el in elements.iter().filter(|x| x.kind == UNIT) {
        let class_deprecated = el
            .class
            .and_then(|i| c.schema.unit_classes.get(i))
            .is_some_and(|k| k.has("deprecatedFrom"));
        if class_deprecated && !el.deprecated {
            found.push(el.entry);
        }
    }
    for e in found {
        c.push(
            "SCHEMA_DEPRECATION_ERROR",
            Some(e),
            "its parent is deprecated but it is not".into(),
        );
    }
}
