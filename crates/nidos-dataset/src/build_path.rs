//! Building the canonical dataset-relative path of a file from its entities, suffix,
//! extension and datatype, as the schema's file rules and entity order say.

use indexmap::IndexMap;
use nidos_schema::{FileRule, Level, Schema};

/// Why a path could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("unknown entity {0:?} (not in the schema's entities, by long or short name)")]
    UnknownEntity(String),
    #[error("entity {entity} given twice (as {first:?} and {second:?})")]
    Duplicate {
        entity: String,
        first: String,
        second: String,
    },
    #[error("bad label {value:?} for entity {entity}: {reason}")]
    BadLabel {
        entity: String,
        value: String,
        reason: String,
    },
    #[error("no file rule of the schema has suffix {suffix:?} with extension {extension:?}")]
    NoRule { suffix: String, extension: String },
    #[error("datatype {datatype:?} is not allowed for suffix {suffix:?} (rules allow: {allowed})")]
    DatatypeNotAllowed {
        datatype: String,
        suffix: String,
        allowed: String,
    },
    #[error("entity {entity} is not allowed by rule {rule} (it allows: {allowed})")]
    EntityNotAllowed {
        entity: String,
        rule: String,
        allowed: String,
    },
    #[error("rule {rule} requires entities missing here: {missing}")]
    MissingRequired { rule: String, missing: String },
    #[error("entity {entity} of rule {rule} must be one of {allowed}, not {value:?}")]
    NotInRuleEnum {
        entity: String,
        rule: String,
        value: String,
        allowed: String,
    },
    #[error("suffix {suffix:?} with extension {extension:?} fits several datatypes ({candidates}); choose one with a datatype")]
    AmbiguousDatatype {
        suffix: String,
        extension: String,
        candidates: String,
    },
}

/// Builds the canonical dataset-relative path (no leading `/`) of a file from its
/// entities (long or short names, any order), suffix, extension and, when the suffix's
/// rules allow several, its datatype.
///
/// Entities are written in the schema's canonical order; the file sits in
/// `sub-<label>/[ses-<label>/][<datatype>/]` (`tpl-`/`cohort-` for templates). A file
/// without a subject (nor template) is an inheritable file at the dataset root: the
/// rule's required entities are not demanded of it, as the validator does not demand
/// them at the root.
pub fn build_path(
    schema: &Schema,
    entities: &IndexMap<String, String>,
    suffix: &str,
    extension: &str,
    datatype: Option<&str>,
) -> Result<String, PathError> {
    let extension = if extension.is_empty() || extension.starts_with('.') {
        extension.to_string()
    } else {
        format!(".{extension}")
    };
    // Resolve names, check labels against the entity's format and enum.
    let mut given: Vec<(&nidos_schema::Entity, &str)> = Vec::new();
    for (name, value) in entities {
        let e = schema
            .entity(name)
            .or_else(|| schema.entity_by_key(name))
            .ok_or_else(|| PathError::UnknownEntity(name.clone()))?;
        if let Some((_, first)) = given.iter().find(|(g, _)| g.name == e.name) {
            return Err(PathError::Duplicate {
                entity: e.name.clone(),
                first: first.to_string(),
                second: value.clone(),
            });
        }
        if value.is_empty() {
            return Err(PathError::BadLabel {
                entity: e.name.clone(),
                value: value.clone(),
                reason: "a label cannot be empty".into(),
            });
        }
        if value.contains(['_', '-', '/', '.']) && e.format == "label" {
            // Caught by the format below too; say why plainly.
            return Err(PathError::BadLabel {
                entity: e.name.clone(),
                value: value.clone(),
                reason: "labels are alphanumeric (no '_', '-', '/', '.')".into(),
            });
        }
        if let Some(f) = schema.format(&e.format) {
            if !f.is_match(value) {
                return Err(PathError::BadLabel {
                    entity: e.name.clone(),
                    value: value.clone(),
                    reason: format!("does not match the {} format /{}/", e.format, f.pattern),
                });
            }
        }
        if let Some(allowed) = &e.r#enum {
            if !allowed.iter().any(|a| a == value) {
                return Err(PathError::BadLabel {
                    entity: e.name.clone(),
                    value: value.clone(),
                    reason: format!("must be one of {}", allowed.join(", ")),
                });
            }
        }
        given.push((e, value.as_str()));
    }
    given.sort_by_key(|(e, _)| e.order);
    let has = |key: &str| given.iter().any(|(e, _)| e.key == key);
    let at_root = !has("sub") && !has("tpl");

    // Rules naming the suffix and extension; raw rules first.
    let mut candidates: Vec<&FileRule> = schema
        .file_rules
        .iter()
        .filter(|r| r.suffixes.iter().any(|s| s == suffix))
        .filter(|r| r.extensions.is_empty() || r.extensions.contains(&extension))
        .collect();
    candidates.sort_by_key(|r| r.category == "deriv");
    if candidates.is_empty() {
        return Err(PathError::NoRule {
            suffix: suffix.to_string(),
            extension,
        });
    }
    if let Some(dt) = datatype {
        let with_dt: Vec<&FileRule> = candidates
            .iter()
            .copied()
            .filter(|r| r.datatypes.iter().any(|d| d == dt))
            .collect();
        if with_dt.is_empty() {
            let allowed = datatypes_of(&candidates);
            return Err(PathError::DatatypeNotAllowed {
                datatype: dt.to_string(),
                suffix: suffix.to_string(),
                allowed: if allowed.is_empty() {
                    "none".into()
                } else {
                    allowed.join(", ")
                },
            });
        }
        candidates = with_dt;
    }
    // The rules whose entity lists fit what was given.
    let mut first_error: Option<PathError> = None;
    let mut fitting: Vec<&FileRule> = Vec::new();
    for rule in &candidates {
        match fit(schema, rule, &given, at_root) {
            Ok(()) => fitting.push(rule),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if fitting.is_empty() {
        return Err(first_error.unwrap_or(PathError::NoRule {
            suffix: suffix.to_string(),
            extension,
        }));
    }
    // Prefer raw rules when both raw and derivative rules fit.
    if fitting.iter().any(|r| r.category != "deriv") {
        fitting.retain(|r| r.category != "deriv");
    }
    let dir_datatype: Option<String> = match datatype {
        Some(dt) => Some(dt.to_string()),
        // A root-level file has no datatype directory.
        None if at_root => None,
        None => {
            let dts = datatypes_of(&fitting);
            match dts.as_slice() {
                [] => None,
                [one] => Some(one.to_string()),
                many => {
                    return Err(PathError::AmbiguousDatatype {
                        suffix: suffix.to_string(),
                        extension,
                        candidates: many.join(", "),
                    })
                }
            }
        }
    };

    let mut path = String::new();
    let label = |key: &str| given.iter().find(|(e, _)| e.key == key).map(|(_, v)| *v);
    let (top, second) = if has("sub") {
        ("sub", "ses")
    } else {
        ("tpl", "cohort")
    };
    if let Some(t) = label(top) {
        path.push_str(&format!("{top}-{t}/"));
        if let Some(s) = label(second) {
            path.push_str(&format!("{second}-{s}/"));
        }
        if let Some(dt) = &dir_datatype {
            path.push_str(dt);
            path.push('/');
        }
    }
    let parts: Vec<String> = given
        .iter()
        .map(|(e, v)| format!("{}-{v}", e.key))
        .chain(std::iter::once(suffix.to_string()))
        .filter(|s| !s.is_empty())
        .collect();
    path.push_str(&parts.join("_"));
    path.push_str(&extension);
    Ok(path)
}

/// Whether `given` fits a rule's entities: each allowed, each required one present
/// (except at the root), each in the rule's enum.
fn fit(
    schema: &Schema,
    rule: &FileRule,
    given: &[(&nidos_schema::Entity, &str)],
    at_root: bool,
) -> Result<(), PathError> {
    let key_of = |long: &str| {
        schema
            .entity(long)
            .map(|e| e.key.clone())
            .unwrap_or_else(|| long.to_string())
    };
    for (e, v) in given {
        match rule.entities.get(&e.name) {
            None => {
                return Err(PathError::EntityNotAllowed {
                    entity: e.name.clone(),
                    rule: rule.id.clone(),
                    allowed: if rule.entities.is_empty() {
                        "no entities".into()
                    } else {
                        rule.entities
                            .keys()
                            .map(|k| key_of(k))
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                })
            }
            Some(req) => {
                if let Some(allowed) = &req.r#enum {
                    if !allowed.iter().any(|a| a == v) {
                        return Err(PathError::NotInRuleEnum {
                            entity: e.name.clone(),
                            rule: rule.id.clone(),
                            value: v.to_string(),
                            allowed: allowed.join(", "),
                        });
                    }
                }
            }
        }
    }
    if !at_root {
        let missing: Vec<String> = rule
            .entities
            .iter()
            .filter(|(_, r)| r.level == Level::Required)
            .filter(|(long, _)| !given.iter().any(|(e, _)| &e.name == *long))
            .map(|(long, _)| format!("{long} ({})", key_of(long)))
            .collect();
        if !missing.is_empty() {
            return Err(PathError::MissingRequired {
                rule: rule.id.clone(),
                missing: missing.join(", "),
            });
        }
    }
    Ok(())
}

/// The datatypes the rules allow, sorted, each once.
fn datatypes_of<'s>(rules: &[&'s FileRule]) -> Vec<&'s str> {
    let mut dts: Vec<&str> = rules
        .iter()
        .flat_map(|r| r.datatypes.iter().map(String::as_str))
        .collect();
    dts.sort_unstable();
    dts.dedup();
    dts
}
