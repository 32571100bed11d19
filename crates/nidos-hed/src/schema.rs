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
    /// Builds the lookups; fails on a tree that refers to missing parents.
    pub fn from_data(data: &SchemaData) -> Result<Self, String> {
        let mut schema = HedSchema {
            version: data.version.clone(),
            library: data.library.clone(),
            with_standard: data.with_standard.clone(),
            ..Default::default()
        };
        for (i, t) in data.tags.iter().enumerate() {
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
            let has = |f: &str| t.f.iter().any(|x| x == f);
            let (long_name, inherited_ext) = match parent {
                Some(p) => {
                    let pt = &schema.tags[p];
                    (format!("{}/{}", pt.long_name, t.n), pt.extension_allowed)
                }
                None => (t.n.clone(), false),
            };
            let tag = Tag {
                name: t.n.clone(),
                long_name,
                parent,
                children: HashMap::default(),
                require_child: has("requireChild"),
                takes_value: has("takesValue"),
                unique: has("unique"),
                required: has("required"),
                tag_group: has("tagGroup"),
                top_level_tag_group: has("topLevelTagGroup"),
                extension_allowed: inherited_ext || has("extensionAllowed"),
                reserved: has("reserved"),
                value_classes: t.vc.clone(),
                unit_classes: t.uc.clone(),
                deprecated_from: t.dep.clone(),
                hed_id: t.id.clone(),
            };
            let key = t.n.to_lowercase();
            if let Some(p) = parent {
                schema.tags[p].children.insert(key.clone(), i);
            }
            if t.n != "#" {
                schema.by_name.entry(key).or_insert(i);
            }
            schema.tags.push(tag);
        }
        for uc in &data.unit_classes {
            let units = uc
                .units
                .iter()
                .map(|u| Unit {
                    name: u.name.clone(),
                    si: u.si,
                    symbol: u.symbol,
                    prefix: u.prefix,
                })
                .collect();
            schema
                .unit_classes
                .insert(uc.name.clone(), UnitClass { units });
        }
        schema.unit_modifiers = data
            .unit_modifiers
            .iter()
            .map(|m| (m.name.clone(), m.symbol))
            .collect();
        for vc in &data.value_classes {
            schema
                .value_classes
                .insert(vc.name.clone(), vc.chars.clone());
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
