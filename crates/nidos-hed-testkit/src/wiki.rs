//! Reader of the HED MediaWiki schema format: a line-oriented text with a `HED …` header line,
//! a `'''Prologue'''`, the tag tree between `!# start schema` and `!# end schema` (top-level
//! tags as `'''Name'''`, deeper ones with one `*` per level), the sections `'''Unit classes'''`,
//! `'''Unit modifiers'''`, `'''Value classes'''`, `'''Schema attributes'''`, `'''Properties'''`
//! and `'''Epilogue'''`, and a closing `!# end hed`. Each entry may carry `{attr, attr=value}`
//! and a `[description]`; `<nowiki>` markers are ignored.
//!
//! Reading never fails: what is wrong with the text's shape is kept in [`WikiSchema::problems`]
//! (header, delimiters, missing sections, characters outside descriptions' rules), and
//! [`WikiSchema::to_data`] gives the compact form the validator uses.

use nidos_hed::data::{
    SchemaData, TagData, UnitClassData, UnitData, UnitModifierData, ValueClassData,
};
use nidos_hed::issue::HedIssue;

/// The parts of a schema file, in the order the format requires them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    Header,
    Prologue,
    StartSchema,
    EndSchema,
    UnitClasses,
    UnitModifiers,
    ValueClasses,
    Attributes,
    Properties,
    Epilogue,
    EndHed,
}

impl Section {
    pub const ALL: [Section; 11] = [
        Section::Header,
        Section::Prologue,
        Section::StartSchema,
        Section::EndSchema,
        Section::UnitClasses,
        Section::UnitModifiers,
        Section::ValueClasses,
        Section::Attributes,
        Section::Properties,
        Section::Epilogue,
        Section::EndHed,
    ];

    /// How the section's marker line is written.
    pub fn marker(self) -> &'static str {
        match self {
            Section::Header => "HED",
            Section::Prologue => "'''Prologue'''",
            Section::StartSchema => "!# start schema",
            Section::EndSchema => "!# end schema",
            Section::UnitClasses => "'''Unit classes'''",
            Section::UnitModifiers => "'''Unit modifiers'''",
            Section::ValueClasses => "'''Value classes'''",
            Section::Attributes => "'''Schema attributes'''",
            Section::Properties => "'''Properties'''",
            Section::Epilogue => "'''Epilogue'''",
            Section::EndHed => "!# end hed",
        }
    }

    fn from_line(line: &str) -> Option<Section> {
        let t = line.trim();
        Section::ALL[1..].iter().copied().find(|s| {
            let m = s.marker();
            if m.starts_with('!') {
                t == m
            } else {
                t.starts_with(m)
            }
        })
    }
}

/// One entry: a tag, unit class, unit, unit modifier, value class, attribute or property.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    pub name: String,
    /// 0 for a top-level tag (`'''Name'''`), else the number of `*`.
    pub depth: usize,
    /// Attributes in the order written; `None` for a flag without `=`.
    pub attrs: Vec<(String, Option<String>)>,
    pub description: Option<String>,
    /// 1-based line number in the text.
    pub line: usize,
}

impl Entry {
    pub fn has(&self, name: &str) -> bool {
        self.attrs.iter().any(|(n, _)| n == name)
    }
    /// Values of every `name=value` of this attribute.
    pub fn values<'a, 'b>(&'a self, name: &'b str) -> impl Iterator<Item = &'a str> + use<'a, 'b> {
        self.attrs
            .iter()
            .filter(move |(n, _)| n == name)
            .filter_map(|(_, v)| v.as_deref())
    }
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values(name).next()
    }
}

/// A schema read from MediaWiki text.
#[derive(Debug, Clone, Default)]
pub struct WikiSchema {
    /// Header attributes (`version`, `library`, `withStandard`, `unmerged`).
    pub header: Vec<(String, String)>,
    pub prologue: String,
    pub epilogue: String,
    /// Tag entries in document order (depth 0 = top level).
    pub tags: Vec<Entry>,
    /// Unit classes (depth 1) each followed by its units (depth 2).
    pub unit_classes: Vec<Entry>,
    pub unit_modifiers: Vec<Entry>,
    pub value_classes: Vec<Entry>,
    pub attributes: Vec<Entry>,
    pub properties: Vec<Entry>,
    /// Problems with the text's shape found while reading.
    pub problems: Vec<HedIssue>,
}

impl WikiSchema {
    pub fn header_value(&self, key: &str) -> Option<&str> {
        self.header
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    pub fn version(&self) -> &str {
        self.header_value("version").unwrap_or_default()
    }
    pub fn library(&self) -> &str {
        self.header_value("library").unwrap_or_default()
    }
    pub fn with_standard(&self) -> &str {
        self.header_value("withStandard").unwrap_or_default()
    }
    pub fn unmerged(&self) -> bool {
        self.header_value("unmerged")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// The compact data form: names, structure and the attributes the validator uses.
    pub fn to_data(&self) -> SchemaData {
        let mut data = SchemaData {
            version: self.version().to_string(),
            library: self.library().to_string(),
            with_standard: self.with_standard().to_string(),
            unmerged: self.unmerged(),
            ..SchemaData::default()
        };
        // `open[d]` is the index of the last tag seen at depth `d`.
        let mut open: Vec<u32> = Vec::new();
        for e in &self.tags {
            let parent = match e.depth {
                0 => None,
                d => open.get(d - 1).or(open.last()).copied(),
            };
            let mut tag = TagData {
                n: e.name.clone(),
                p: parent,
                ..TagData::default()
            };
            for (name, value) in &e.attrs {
                match (name.as_str(), value) {
                    ("valueClass", Some(v)) => tag.vc.push(v.clone()),
                    ("unitClass", Some(v)) => tag.uc.push(v.clone()),
                    ("deprecatedFrom", Some(v)) => tag.dep = Some(v.clone()),
                    ("inLibrary", Some(v)) => tag.lib = Some(v.clone()),
                    ("hedId", Some(v)) => tag.id = Some(v.clone()),
                    (flag, None) if nidos_hed::xml::NODE_FLAGS.contains(&flag) => {
                        tag.f.push(flag.to_string())
                    }
                    _ => {}
                }
            }
            let index = u32::try_from(data.tags.len()).unwrap_or(u32::MAX);
            data.tags.push(tag);
            open.truncate(e.depth);
            open.push(index);
        }
        for e in &self.unit_classes {
            if e.depth <= 1 {
                data.unit_classes.push(UnitClassData {
                    name: e.name.clone(),
                    default: e.value("defaultUnits").map(String::from),
                    units: Vec::new(),
                });
            } else if let Some(class) = data.unit_classes.last_mut() {
                class.units.push(UnitData {
                    name: e.name.clone(),
                    si: e.has("SIUnit"),
                    symbol: e.has("unitSymbol"),
                    prefix: e.has("unitPrefix"),
                });
            }
        }
        for e in &self.unit_modifiers {
            data.unit_modifiers.push(UnitModifierData {
                name: e.name.clone(),
                symbol: e.has("SIUnitSymbolModifier"),
            });
        }
        for e in &self.value_classes {
            data.value_classes.push(ValueClassData {
                name: e.name.clone(),
                chars: e.values("allowedCharacter").map(String::from).collect(),
            });
        }
        data
    }
}

/// Header attributes the format knows.
const HEADER_KEYS: &[&str] = &["version", "library", "withStandard", "unmerged"];

/// Reads MediaWiki schema text. Never fails; see [`WikiSchema::problems`].
pub fn read_wiki(text: &str) -> WikiSchema {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.ends_with('\n') {
        lines.pop();
    }
    read_wiki_lines(&lines)
}

/// Reads a schema given as its lines (as the HED test suite writes them).
pub fn read_wiki_lines<S: AsRef<str>>(lines: &[S]) -> WikiSchema {
    let mut schema = WikiSchema::default();
    let mut seen: Vec<Section> = Vec::new();
    let mut current = Section::Header;
    let mut header_done = false;
    for (i, raw) in lines.iter().enumerate() {
        let raw = raw.as_ref();
        let line_no = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if !header_done {
            if line.trim().is_empty() {
                continue;
            }
            header_done = true;
            seen.push(Section::Header);
            read_header(line, &mut schema);
            continue;
        }
        // Inside the tag tree, `'''Name'''` lines are tags, not section markers; only the
        // end marker leaves it.
        let marker = if current == Section::StartSchema {
            (line.trim() == Section::EndSchema.marker()).then_some(Section::EndSchema)
        } else {
            Section::from_line(line)
        };
        if let Some(section) = marker {
            if seen.contains(&section) {
                schema.problems.push(HedIssue::error(
                    "SCHEMA_SECTION_MISSING",
                    format!("line {line_no}: section {} appears twice", section.marker()),
                ));
            }
            seen.push(section);
            current = section;
            continue;
        }
        match current {
            Section::Prologue | Section::Epilogue => {
                let target = if current == Section::Prologue {
                    &mut schema.prologue
                } else {
                    &mut schema.epilogue
                };
                if !target.is_empty() {
                    target.push('\n');
                }
                target.push_str(line);
                continue;
            }
            _ => {}
        }
        if line.trim().is_empty() {
            continue;
        }
        let list = match current {
            Section::StartSchema => &mut schema.tags,
            Section::UnitClasses => &mut schema.unit_classes,
            Section::UnitModifiers => &mut schema.unit_modifiers,
            Section::ValueClasses => &mut schema.value_classes,
            Section::Attributes => &mut schema.attributes,
            Section::Properties => &mut schema.properties,
            _ => {
                schema.problems.push(HedIssue::error(
                    "WIKI_LINE_INVALID",
                    format!("line {line_no}: text outside any section"),
                ));
                continue;
            }
        };
        match read_entry(line, line_no, current == Section::StartSchema) {
            Ok(entry) => list.push(entry),
            Err(issue) => schema.problems.push(issue),
        }
    }
    if !header_done {
        schema.problems.push(HedIssue::error(
            "SCHEMA_HEADER_INVALID",
            "the schema has no HED header line",
        ));
    }
    // Every section must be present, in the format's order.
    let mut last = None;
    for s in Section::ALL {
        match seen.iter().position(|x| *x == s) {
            None => schema.problems.push(HedIssue::error(
                "SCHEMA_SECTION_MISSING",
                format!("the schema has no {} section", s.marker()),
            )),
            Some(p) => {
                if last.is_some_and(|l| p < l) {
                    schema.problems.push(HedIssue::error(
                        "SCHEMA_SECTION_MISSING",
                        format!("section {} is out of order", s.marker()),
                    ));
                }
                last = Some(p);
            }
        }
    }
    schema
}

fn read_header(line: &str, schema: &mut WikiSchema) {
    let bad = |msg: String| HedIssue::error("SCHEMA_HEADER_INVALID", msg);
    let Some(rest) = line.trim().strip_prefix("HED") else {
        schema
            .problems
            .push(bad("the first line is not a HED header".into()));
        return;
    };
    let mut rest = rest.trim_start();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            schema
                .problems
                .push(bad(format!("header text \"{rest}\" is not key=\"value\"")));
            return;
        };
        let key = key.trim();
        let Some(after) = after.strip_prefix('"') else {
            schema.problems.push(bad(format!(
                "header attribute {key} has a value without quotes"
            )));
            return;
        };
        let Some((value, tail)) = after.split_once('"') else {
            schema
                .problems
                .push(bad(format!("header attribute {key} has an unclosed value")));
            return;
        };
        if !HEADER_KEYS.contains(&key) {
            schema
                .problems
                .push(bad(format!("unknown header attribute {key}")));
        } else if schema.header.iter().any(|(k, _)| k == key) {
            schema
                .problems
                .push(bad(format!("header attribute {key} appears twice")));
        }
        schema.header.push((key.to_string(), value.to_string()));
        rest = tail.trim_start();
    }
    if schema.header_value("version").is_none() {
        schema
            .problems
            .push(bad("the header has no version".into()));
    }
}

/// Reads one entry line: `'''Name''' {…} […]` in the tag tree, `*… name {…} […]` anywhere.
fn read_entry(line: &str, line_no: usize, in_tags: bool) -> Result<Entry, HedIssue> {
    let delimiters =
        |msg: &str| HedIssue::error("WIKI_DELIMITERS_INVALID", format!("line {line_no}: {msg}"));
    let cleaned = line.replace("<nowiki>", "").replace("</nowiki>", "");
    let text = cleaned.trim();
    let (name, depth, rest) = if let Some(after) = text.strip_prefix("'''") {
        if !in_tags {
            return Err(HedIssue::error(
                "WIKI_LINE_INVALID",
                format!("line {line_no}: a '''term''' line outside the tag section"),
            ));
        }
        let (name, rest) = after
            .split_once("'''")
            .ok_or_else(|| delimiters("unclosed '''"))?;
        (name.to_string(), 0, rest)
    } else if text.starts_with('*') {
        let depth = text.chars().take_while(|c| *c == '*').count();
        let after = &text[depth..];
        let end = after.find(['{', '[']).unwrap_or(after.len());
        (after[..end].trim().to_string(), depth, &after[end..])
    } else {
        return Err(HedIssue::error(
            "WIKI_LINE_INVALID",
            format!("line {line_no}: an entry must start with * or '''"),
        ));
    };
    let mut entry = Entry {
        name: name.trim().to_string(),
        depth,
        line: line_no,
        ..Entry::default()
    };
    let mut rest = rest.trim();
    if let Some(after) = rest.strip_prefix('{') {
        let (inner, tail) = after
            .split_once('}')
            .ok_or_else(|| delimiters("unclosed {"))?;
        for part in inner.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(delimiters("an empty attribute"));
            }
            match part.split_once('=') {
                Some((k, v)) => {
                    let v = v.trim();
                    if v.is_empty() {
                        return Err(delimiters(&format!(
                            "attribute {} has an empty value",
                            k.trim()
                        )));
                    }
                    entry
                        .attrs
                        .push((k.trim().to_string(), Some(v.to_string())));
                }
                None => entry.attrs.push((part.to_string(), None)),
            }
        }
        rest = tail.trim();
    }
    if let Some(after) = rest.strip_prefix('[') {
        let end = after.rfind(']').ok_or_else(|| delimiters("unclosed ["))?;
        entry.description = Some(after[..end].to_string());
        rest = after[end + 1..].trim();
    }
    if !rest.is_empty() {
        return Err(delimiters(&format!("unexpected text \"{rest}\"")));
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str =
        "HED version=\"1.0.0\" library=\"demo\" withStandard=\"8.2.0\" unmerged=\"True\"
'''Prologue'''
A small schema.
!# start schema
'''Top''' {rooted=Event} [A top tag.]
* Child
** # {takesValue, valueClass=numericClass}
* Other <nowiki>{suggestedTag=Child}</nowiki>
!# end schema
'''Unit classes'''
* demoUnits {defaultUnits=du}
** du {SIUnit}
'''Unit modifiers'''
'''Value classes'''
'''Schema attributes'''
'''Properties'''
'''Epilogue'''
!# end hed
";

    #[test]
    fn reads_sections_tree_and_attributes() {
        let w = read_wiki(SMALL);
        assert!(w.problems.is_empty(), "{:?}", w.problems);
        assert_eq!(w.library(), "demo");
        assert!(w.unmerged());
        assert_eq!(w.prologue, "A small schema.");
        let names: Vec<(&str, usize)> = w.tags.iter().map(|t| (t.name.as_str(), t.depth)).collect();
        assert_eq!(names, [("Top", 0), ("Child", 1), ("#", 2), ("Other", 1)]);
        assert_eq!(w.tags[0].description.as_deref(), Some("A top tag."));
        assert_eq!(w.tags[3].value("suggestedTag"), Some("Child"));
        let data = w.to_data();
        let parents: Vec<Option<u32>> = data.tags.iter().map(|t| t.p).collect();
        assert_eq!(parents, [None, Some(0), Some(1), Some(0)]);
        assert_eq!(data.tags[2].f, ["takesValue"]);
        assert_eq!(data.unit_classes[0].default.as_deref(), Some("du"));
        assert!(data.unit_classes[0].units[0].si);
    }

    #[test]
    fn reports_missing_sections_and_bad_header() {
        let w = read_wiki_lines(&["HED version=1.0.0", "'''Prologue'''", "!# start schema"]);
        let codes: Vec<&str> = w.problems.iter().map(|p| p.code).collect();
        assert!(codes.contains(&"SCHEMA_HEADER_INVALID"));
        assert!(codes.contains(&"SCHEMA_SECTION_MISSING"));
    }
}
