//! The in-memory HED schema: the tag tree with lookups by short name and by path, unit classes
//! with their prefixes, value classes. Built from [`SchemaData`].

use foldhash::HashMap;

use crate::data::SchemaData;

/// One tag node with its attributes resolved.
#[derive(Debug, Clone, Default)]
pub struct Tag {
    /// The node's own name, as the schema spells it.
    pub name: String,
    /// The full path from the root (`Event/Sensory-event`).
    pub long_name: String,
    pub parent: Option<usize>,
    /// Children by lower-cased name (a value placeholder is under `#`).
    pub children: HashMap<String, usize>,
    pub require_child: bool,
    pub takes_value: bool,
    pub unique: bool,
    pub required: bool,
    pub tag_group: bool,
    pub top_level_tag_group: bool,
    /// The node or one of its ancestors allows extension.
    pub extension_allowed: bool,
    pub reserved: bool,
    pub value_classes: Vec<String>,
    pub unit_classes: Vec<String>,
    pub deprecated_from: Option<String>,
    /// The node's `hedId`, when the schema data has it.
    pub hed_id: Option<String>,
}

impl Tag {
    /// The placeholder child (`#`) of a value-taking tag.
    pub fn value_child(&self) -> Option<usize> {
        self.children.get("#").copied()
    }
}

#[derive(Debug, Clone, Default)]
pub struct Unit {
    pub name: String,
    pub si: bool,
    pub symbol: bool,
    pub prefix: bool,
}

#[derive(Debug, Clone, Default)]
pub struct UnitClass {
    pub units: Vec<Unit>,
}

/// One loaded schema (a standard version, or a library, possibly merged with its standard).
#[derive(Debug, Clone, Default)]
pub struct HedSchema {
    pub version: String,
    pub library: String,
    pub with_standard: String,
    pub tags: Vec<Tag>,
    /// Tag index by lower-cased short name (placeholders excluded).
    pub by_name: HashMap<String, usize>,
    pub unit_classes: HashMap<String, UnitClass>,
    /// (modifier, is a symbol modifier)
    pub unit_modifiers: Vec<(String, bool)>,
    pub value_classes: HashMap<String, Vec<String>>,
}

impl HedSchema {
    /// Builds the lookups; fails on a tree that refers to missing parents. The data's texts
    /// are moved into the schema, not copied.
    pub fn from_data(data: SchemaData) -> Result<Self, String> {
        let SchemaData {
            version,
            library,
            with_standard,
            tags,
            unit_classes,
            unit_modifiers,
            value_classes,
            ..
        } = data;
        // Each node's number of children, so that its map is made once at its size.
        let mut child_counts = vec![0usize; tags.len()];
        for t in &tags {
            if let Some(c) = t.p.and_then(|p| child_counts.get_mut(p as usize)) {
                *c += 1;
            }
        }
        let mut by_name = HashMap::default();
        by_name.reserve(tags.len());
        let mut schema = HedSchema {
            version,
            library,
            with_standard,
            tags: Vec::with_capacity(tags.len()),
            by_name,
            ..Default::default()
        };
        for (i, t) in tags.into_iter().enumerate() {
            let parent = match t.p {
                Some(p) => {
                    let p = p as usize;
                    if p >= i {
                        return Err(format!(
                            "tag {:?} names a parent that does not precede it",
                            t.n
                        ));
                    }
                    Some(p)
                }
                None => None,
            };
            let (long_name, inherited_ext) = match parent.and_then(|p| schema.tags.get(p)) {
                Some(pt) => {
                    let mut long = String::with_capacity(pt.long_name.len() + 1 + t.n.len());
                    long.push_str(&pt.long_name);
                    long.push('/');
                    long.push_str(&t.n);
                    (long, pt.extension_allowed)
                }
                None => (t.n.clone(), false),
            };
            let key = lower(&t.n);
            let mut tag = Tag {
                long_name,
                parent,
                children: HashMap::default(),
                extension_allowed: inherited_ext,
                value_classes: t.vc,
                unit_classes: t.uc,
                deprecated_from: t.dep,
                hed_id: t.id,
                ..Default::default()
            };
            if let Some(&n) = child_counts.get(i).filter(|&&n| n > 0) {
                tag.children.reserve(n);
            }
            for f in &t.f {
                match f.as_str() {
                    "requireChild" => tag.require_child = true,
                    "takesValue" => tag.takes_value = true,
                    "unique" => tag.unique = true,
                    "required" => tag.required = true,
                    "tagGroup" => tag.tag_group = true,
                    "topLevelTagGroup" => tag.top_level_tag_group = true,
                    "extensionAllowed" => tag.extension_allowed = true,
                    "reserved" => tag.reserved = true,
                    _ => {}
                }
            }
            if let Some(pt) = parent.and_then(|p| schema.tags.get_mut(p)) {
                pt.children.insert(key.clone(), i);
            }
            if t.n != "#" {
                schema.by_name.entry(key).or_insert(i);
            }
            tag.name = t.n;
            schema.tags.push(tag);
        }
        for uc in unit_classes {
            let units = uc
                .units
                .into_iter()
                .map(|u| Unit {
                    name: u.name,
                    si: u.si,
                    symbol: u.symbol,
                    prefix: u.prefix,
                })
                .collect();
            schema.unit_classes.insert(uc.name, UnitClass { units });
        }
        schema.unit_modifiers = unit_modifiers
            .into_iter()
            .map(|m| (m.name, m.symbol))
            .collect();
        for vc in value_classes {
            schema.value_classes.insert(vc.name, vc.chars);
        }
        Ok(schema)
    }

    /// The tag whose short name is `name` (case-insensitive).
    pub fn lookup(&self, name: &str) -> Option<usize> {
        self.by_name.get(&name.to_lowercase()).copied()
    }

    /// Index of the tag named exactly by its reserved role (`Definition`, `Onset`…).
    pub fn tag(&self, i: usize) -> &Tag {
        &self.tags[i]
    }

    /// Is `unit` (the text after the value) a valid unit of class `class`?
    pub fn unit_matches(&self, class: &str, unit: &str) -> bool {
        let Some(uc) = self.unit_classes.get(class) else {
            return false;
        };
        let lower = unit.to_lowercase();
        uc.units
            .iter()
            .any(|u| self.unit_form_matches(u, unit, &lower))
    }

    fn unit_form_matches(&self, u: &Unit, written: &str, lower: &str) -> bool {
        let name_lower = u.name.to_lowercase();
        if u.symbol {
            if written == u.name {
                return true;
            }
        } else if lower == name_lower || plural_of(lower, &name_lower) {
            return true;
        }
        if !u.si {
            return false;
        }
        self.unit_modifiers.iter().any(|(m, is_symbol)| {
            if u.symbol && *is_symbol {
                written.strip_prefix(m.as_str()) == Some(u.name.as_str())
            } else if !u.symbol && !*is_symbol {
                lower
                    .strip_prefix(m.to_lowercase().as_str())
                    .is_some_and(|rest| rest == name_lower || plural_of(rest, &name_lower))
            } else {
                false
            }
        })
    }
}

/// `written` is the English plural of `unit` (`metres` of `metre`, `inches` of `inch`).
fn plural_of(written: &str, unit: &str) -> bool {
    let w = written.to_lowercase();
    let u = unit.to_lowercase();
    w == format!("{u}s")
        || w == format!("{u}es")
        || (u.ends_with('y') && w == format!("{}ies", &u[..u.len() - 1]))
}

/// `s` in lower case (`str::to_lowercase`, without its per-character work for ASCII text).
fn lower(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        s.to_lowercase()
    }
}
