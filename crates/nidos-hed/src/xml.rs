//! Import of a published HED schema XML file into [`SchemaData`]: names, structure and
//! attributes only. Descriptions and other prose are skipped on purpose.

use quick_xml::events::Event;

use crate::data::{SchemaData, TagData, UnitClassData, UnitData, UnitModifierData, ValueClassData};

/// Boolean node attributes the validator uses; other attributes are dropped.
pub const NODE_FLAGS: &[&str] = &[
    "requireChild",
    "takesValue",
    "unique",
    "required",
    "tagGroup",
    "topLevelTagGroup",
    "extensionAllowed",
    "recommended",
    "reserved",
];

/// A minimal element tree: enough to walk the schema sections.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    text: String,
    children: Vec<Element>,
}

impl Element {
    fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }
    fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }
    fn child_text(&self, name: &str) -> String {
        self.child(name)
            .map(|c| c.text.trim().to_string())
            .unwrap_or_default()
    }
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    /// The `<attribute>` entries: (name, values).
    fn hed_attributes(&self) -> Vec<(String, Vec<String>)> {
        self.children_named("attribute")
            .map(|a| {
                let values = a
                    .children_named("value")
                    .map(|v| v.text.trim().to_string())
                    .collect();
                (a.child_text("name"), values)
            })
            .collect()
    }
}

fn parse_tree(xml: &str) -> Result<Element, String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut stack: Vec<Element> = vec![Element::default()];
    loop {
        let pos = reader.buffer_position();
        let event = reader
            .read_event()
            .map_err(|e| format!("XML error at byte {pos}: {e}"))?;
        match event {
            Event::Start(e) => {
                stack.push(open_element(&e)?);
            }
            Event::Empty(e) => {
                let el = open_element(&e)?;
                if let Some(top) = stack.last_mut() {
                    top.children.push(el);
                }
            }
            Event::End(_) => {
                let el = stack.pop().ok_or("unbalanced XML")?;
                match stack.last_mut() {
                    Some(top) => top.children.push(el),
                    None => return Err("unbalanced XML end tag".into()),
                }
            }
            Event::Text(t) => {
                let text = t
                    .unescape()
                    .map_err(|e| format!("XML text error at byte {pos}: {e}"))?;
                if let Some(top) = stack.last_mut() {
                    // Only short texts matter (names, values); long prose is not kept.
                    if top.name != "description" && top.name != "prologue" && top.name != "epilogue"
                    {
                        top.text.push_str(&text);
                    }
                }
            }
            Event::CData(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&String::from_utf8_lossy(&t));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let mut doc = stack.pop().ok_or("empty XML")?;
    if !stack.is_empty() {
        return Err("unclosed XML element".into());
    }
    let found = doc.children.drain(..).find(|c| c.name == "HED");
    found.ok_or_else(|| "no <HED> root element".to_string())
}

fn open_element(e: &quick_xml::events::BytesStart<'_>) -> Result<Element, String> {
    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let mut attrs = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|err| format!("bad XML attribute in <{name}>: {err}"))?;
        let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
        let value = a
            .unescape_value()
            .map_err(|err| format!("bad XML attribute value in <{name}>: {err}"))?
            .into_owned();
        attrs.push((key, value));
    }
    Ok(Element {
        name,
        attrs,
        ..Element::default()
    })
}

/// Reads a HED schema XML document into the compact data form.
pub fn import_xml(xml: &str) -> Result<SchemaData, String> {
    let root = parse_tree(xml)?;
    let version = root
        .attr("version")
        .ok_or("the <HED> element has no version")?
        .to_string();
    let mut data = SchemaData {
        version,
        library: root.attr("library").unwrap_or_default().to_string(),
        with_standard: root.attr("withStandard").unwrap_or_default().to_string(),
        unmerged: root
            .attr("unmerged")
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        ..SchemaData::default()
    };
    let schema = root
        .child("schema")
        .ok_or("the schema has no <schema> section")?;
    for node in schema.children_named("node") {
        add_node(&mut data.tags, node, None);
    }
    if let Some(section) = root.child("unitClassDefinitions") {
        for uc in section.children_named("unitClassDefinition") {
            let mut class = UnitClassData {
                name: uc.child_text("name"),
                ..Default::default()
            };
            for (name, values) in uc.hed_attributes() {
                if name == "defaultUnits" {
                    class.default = values.into_iter().next();
                }
            }
            for unit in uc.children_named("unit") {
                let mut u = UnitData {
                    name: unit.child_text("name"),
                    ..Default::default()
                };
                for (name, _) in unit.hed_attributes() {
                    match name.as_str() {
                        "SIUnit" => u.si = true,
                        "unitSymbol" => u.symbol = true,
                        "unitPrefix" => u.prefix = true,
                        _ => {}
                    }
                }
                class.units.push(u);
            }
            data.unit_classes.push(class);
        }
    }
    if let Some(section) = root.child("unitModifierDefinitions") {
        for m in section.children_named("unitModifierDefinition") {
            let attrs = m.hed_attributes();
            data.unit_modifiers.push(UnitModifierData {
                name: m.child_text("name"),
                symbol: attrs.iter().any(|(n, _)| n == "SIUnitSymbolModifier"),
            });
        }
    }
    if let Some(section) = root.child("valueClassDefinitions") {
        for v in section.children_named("valueClassDefinition") {
            let chars = v
                .hed_attributes()
                .into_iter()
                .filter(|(n, _)| n == "allowedCharacter")
                .flat_map(|(_, values)| values)
                .collect();
            data.value_classes.push(ValueClassData {
                name: v.child_text("name"),
                chars,
            });
        }
    }
    Ok(data)
}

fn add_node(tags: &mut Vec<TagData>, node: &Element, parent: Option<u32>) {
    let mut tag = TagData {
        n: node.child_text("name"),
        p: parent,
        ..Default::default()
    };
    for (name, values) in node.hed_attributes() {
        if NODE_FLAGS.contains(&name.as_str()) {
            tag.f.push(name);
            continue;
        }
        match name.as_str() {
            "valueClass" => tag.vc.extend(values),
            "unitClass" => tag.uc.extend(values),
            "deprecatedFrom" => tag.dep = values.into_iter().next(),
            "inLibrary" => tag.lib = values.into_iter().next(),
            "hedId" => tag.id = values.into_iter().next(),
            _ => {}
        }
    }
    let index = u32::try_from(tags.len()).unwrap_or(u32::MAX);
    tags.push(tag);
    for child in node.children_named("node") {
        add_node(tags, child, Some(index));
    }
}
