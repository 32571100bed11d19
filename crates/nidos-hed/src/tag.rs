//! Resolution of one written tag against the schemas: namespace prefix, the schema node it
//! names (short, long or partial long form), an extension or a value, and the checks that
//! belong to a single tag (characters, slashes, value class, units, required child).

use crate::issue::HedIssue;
use crate::parse::TagToken;
use crate::schema::HedSchema;
use crate::values::{value_matches, ValueCheck};
use crate::versions::HedSchemas;

/// Tags with a role in the specification, recognised by their schema node name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    None,
    Definition,
    Def,
    DefExpand,
    Onset,
    Offset,
    Inset,
    Duration,
    Delay,
}

/// A tag resolved against its schema.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub token: TagToken,
    pub prefix: String,
    /// Index of the deepest schema node the tag names.
    pub node: usize,
    /// The value after a value-taking node (`#` for a placeholder).
    pub value: Option<String>,
    /// Extension words below `node`.
    pub extension: Vec<String>,
    pub special: Special,
    pub unique: bool,
    pub top_level_group: bool,
    pub tag_group: bool,
    /// Lower-cased long form with value, for comparisons.
    pub canonical: String,
}

impl Resolved {
    /// `Def/Name/Value` → (`name`, `Some("Value")`), for the definition family.
    pub fn def_name(&self) -> (String, Option<String>) {
        let v = self.value.clone().unwrap_or_default();
        match v.split_once('/') {
            Some((n, rest)) => (n.to_lowercase(), Some(rest.to_string())),
            None => (v.to_lowercase(), None),
        }
    }
}

fn special_of(name: &str) -> Special {
    match name {
        "Definition" => Special::Definition,
        "Def" => Special::Def,
        "Def-expand" => Special::DefExpand,
        "Onset" => Special::Onset,
        "Offset" => Special::Offset,
        "Inset" => Special::Inset,
        "Duration" => Special::Duration,
        "Delay" => Special::Delay,
        _ => Special::None,
    }
}

/// How placeholders (`#`) may appear where the tag is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholders {
    Forbidden,
    Allowed,
}

fn err(code: &'static str, token: &TagToken, msg: String) -> HedIssue {
    HedIssue::error(code, msg).at(token.start)
}

/// Resolves `token`; issues are pushed to `issues`. `None` when the tag cannot be resolved.
pub fn resolve(
    token: &TagToken,
    schemas: &HedSchemas,
    placeholders: Placeholders,
    issues: &mut Vec<HedIssue>,
) -> Option<Resolved> {
    let text = token.text.as_str();
    let first_slash = text.find('/').unwrap_or(text.len());
    let (prefix, body) = match text[..first_slash].find(':') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => ("", text),
    };
    let Some(schema) = schemas.get(prefix) else {
        let msg = if prefix.is_empty() {
            format!(
                "tag \"{text}\" has no namespace prefix, but every schema in HEDVersion has one"
            )
        } else {
            format!("tag \"{text}\" uses the namespace prefix \"{prefix}:\", which HEDVersion does not declare")
        };
        issues.push(err("TAG_NAMESPACE_PREFIX_INVALID", token, msg));
        return None;
    };
    if body.starts_with('/') || body.ends_with('/') || body.contains("//") {
        issues.push(err(
            "TAG_INVALID",
            token,
            format!("tag \"{text}\" has an empty level (leading, trailing or doubled slash)"),
        ));
        return None;
    }
    let parts: Vec<&str> = body.split('/').collect();
    let Some(mut node) = schema.lookup(parts[0]) else {
        issues.push(err(
            "TAG_INVALID",
            token,
            format!("tag \"{text}\": \"{}\" is not in the HED schema", parts[0]),
        ));
        return None;
    };
    let mut value: Option<String> = None;
    let mut extension: Vec<String> = Vec::new();
    let mut i = 1;
    while i < parts.len() {
        let part = parts[i];
        let tag = schema.tag(node);
        if let Some(v) = tag.value_child() {
            // Everything after a value-taking node is its value.
            let _ = v;
            value = Some(parts[i..].join("/"));
            break;
        }
        if part.trim() != part {
            issues.push(err(
                "TAG_INVALID",
                token,
                format!("tag \"{text}\" has whitespace next to a slash"),
            ));
            return None;
        }
        if let Some(&child) = tag.children.get(&part.to_lowercase()) {
            node = child;
            i += 1;
            continue;
        }
        extension = parts[i..].iter().map(|s| s.to_string()).collect();
        break;
    }
    for part in &parts[..i.min(parts.len())] {
        if part.trim() != *part {
            issues.push(err(
                "TAG_INVALID",
                token,
                format!("tag \"{text}\" has whitespace next to a slash"),
            ));
            return None;
        }
    }
    let tag = schema.tag(node);
    let special = special_of(&tag.name);
    let mut ok = true;

    if !extension.is_empty() {
        ok &= check_extension(schema, node, &extension, token, issues);
    }
    if let Some(v) = &value {
        ok &= check_value(schema, node, special, v, placeholders, token, issues);
    } else if extension.is_empty() && tag.require_child {
        issues.push(err(
            "TAG_REQUIRES_CHILD",
            token,
            format!("tag \"{text}\" needs a child or a value"),
        ));
        ok = false;
    }
    if let Some(from) = &tag.deprecated_from {
        issues.push(
            HedIssue::warning(
                "ELEMENT_DEPRECATED",
                format!("tag \"{text}\" is deprecated since HED {from}"),
            )
            .at(token.start),
        );
    }
    if !ok {
        return None;
    }
    let mut canonical = format!("{}{}", prefix.to_lowercase(), tag.long_name.to_lowercase());
    for e in &extension {
        canonical.push('/');
        canonical.push_str(&e.to_lowercase());
    }
    if let Some(v) = &value {
        canonical.push('/');
        canonical.push_str(&v.to_lowercase());
    }
    Some(Resolved {
        token: token.clone(),
        prefix: prefix.to_string(),
        node,
        value,
        extension,
        special,
        unique: tag.unique,
        top_level_group: tag.top_level_tag_group,
        tag_group: tag.tag_group,
        canonical,
    })
}

fn check_extension(
    schema: &HedSchema,
    node: usize,
    extension: &[String],
    token: &TagToken,
    issues: &mut Vec<HedIssue>,
) -> bool {
    let text = &token.text;
    for word in extension {
        if word.trim() != word {
            issues.push(err(
                "TAG_INVALID",
                token,
                format!("tag \"{text}\" has whitespace next to a slash"),
            ));
            return false;
        }
        if schema.lookup(word).is_some() {
            issues.push(err(
                "TAG_EXTENSION_INVALID",
                token,
                format!("tag \"{text}\" extends its parent with \"{word}\", which is already a schema term elsewhere"),
            ));
            return false;
        }
        if word.contains('#') {
            issues.push(err(
                "PLACEHOLDER_INVALID",
                token,
                format!(
                    "tag \"{text}\": \"{}\" takes no value, so # cannot follow it",
                    schema.tag(node).name
                ),
            ));
            return false;
        }
        if !word
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            issues.push(err(
                "CHARACTER_INVALID",
                token,
                format!("extension \"{word}\" in tag \"{text}\" has invalid characters"),
            ));
            return false;
        }
    }
    let tag = schema.tag(node);
    if !tag.extension_allowed {
        issues.push(err(
            "TAG_EXTENSION_INVALID",
            token,
            format!("tag \"{text}\": \"{}\" may not be extended", tag.name),
        ));
        return false;
    }
    issues.push(
        HedIssue::warning(
            "TAG_EXTENDED",
            format!("tag \"{text}\" extends the schema term \"{}\"", tag.name),
        )
        .at(token.start),
    );
    true
}

fn check_value(
    schema: &HedSchema,
    node: usize,
    special: Special,
    value: &str,
    placeholders: Placeholders,
    token: &TagToken,
    issues: &mut Vec<HedIssue>,
) -> bool {
    let text = &token.text;
    let Some(vnode) = schema.tag(node).value_child() else {
        return true;
    };
    if matches!(
        special,
        Special::Def | Special::DefExpand | Special::Definition
    ) {
        // `Name` or `Name/value`: the name is a name, the value is checked against the definition.
        let (name, rest) = match value.split_once('/') {
            Some((n, r)) => (n, Some(r)),
            None => (value, None),
        };
        if !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
            || name.is_empty()
        {
            issues.push(err(
                "VALUE_INVALID",
                token,
                format!("\"{name}\" in tag \"{text}\" is not a valid definition name"),
            ));
            return false;
        }
        if let Some(r) = rest {
            if r == "#" && placeholders == Placeholders::Forbidden && special != Special::Definition
            {
                issues.push(err(
                    "PLACEHOLDER_INVALID",
                    token,
                    format!("tag \"{text}\" has a placeholder where none is allowed"),
                ));
                return false;
            }
        }
        return true;
    }
    let vt = schema.tag(vnode);
    if value.contains('#') {
        // `#` alone or `# unit`: a placeholder for a value given elsewhere.
        let unit = value.strip_prefix('#').map(str::trim_start);
        let well_formed =
            value == "#" || (value.starts_with("# ") && value.matches('#').count() == 1);
        if !well_formed {
            issues.push(err(
                "PLACEHOLDER_INVALID",
                token,
                format!("tag \"{text}\": a placeholder must be the whole value"),
            ));
            return false;
        }
        if placeholders == Placeholders::Forbidden {
            issues.push(err(
                "PLACEHOLDER_INVALID",
                token,
                format!("tag \"{text}\" has a placeholder where none is allowed"),
            ));
            return false;
        }
        if let Some(u) = unit.filter(|u| !u.is_empty()) {
            if !vt.unit_classes.iter().any(|c| schema.unit_matches(c, u)) {
                issues.push(err(
                    "UNITS_INVALID",
                    token,
                    format!("tag \"{text}\": \"{u}\" is not a valid unit here"),
                ));
                return false;
            }
        }
        return true;
    }
    match value_matches(schema, &vt.value_classes, &vt.unit_classes, value) {
        ValueCheck::Ok => true,
        ValueCheck::BadValue => {
            issues.push(err(
                "VALUE_INVALID",
                token,
                format!("tag \"{text}\": \"{value}\" is not a valid value here"),
            ));
            false
        }
        ValueCheck::BadUnits(u) => {
            issues.push(err(
                "UNITS_INVALID",
                token,
                format!("tag \"{text}\": \"{u}\" is not a valid unit here"),
            ));
            false
        }
    }
}
