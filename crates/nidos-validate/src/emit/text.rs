//! The text report of `nidos validate`: issues grouped by code (errors first) with the
//! code's explanation once and a few locations, then the dataset summary.

use std::io::Write;

use nidos_schema::Schema;

use super::escape::control;
use super::{plural, Emit};
use crate::issue::{Issue, Severity};
use crate::report::Report;

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

const SHOWN_LOCATIONS: usize = 5;

/// The whole text report: the root dataset's issues, each derivative dataset's issues
/// and summary, then the root's summary last, where the eye lands.
pub(crate) fn write_report(out: &mut impl Write, e: &Emit<'_>) -> std::io::Result<()> {
    write_issues(out, e, e.report)?;
    for (name, r) in e.derivatives {
        let name = control(name);
        write!(out, "\nDerivative dataset derivatives/{name}\n\n")?;
        write_issues(out, e, r)?;
        write_summary(out, r, e.color)?;
    }
    if !e.derivatives.is_empty() {
        let dir = super::escape::path(e.root);
        write!(out, "\nDataset {dir}\n\n")?;
    }
    write_summary(out, e.report, e.color)
}

/// The issue groups of `report` (the root's or a derivative's) in the text report:
/// errors, then warnings; within each, the most frequent code first, a few locations
/// each and the code's message once. With the schema, a field's or column's group also
/// says what the rules expect of it.
fn write_issues(out: &mut impl Write, e: &Emit<'_>, report: &Report) -> std::io::Result<()> {
    let (schema, verbose, color) = (e.schema, e.verbose, e.color);
    let paint = Paint { on: color };
    for severity in [Severity::Error, Severity::Warning] {
        let mut groups: std::collections::BTreeMap<(&str, &str), Vec<&Issue>> =
            std::collections::BTreeMap::new();
        for i in report.issues.iter().filter(|i| i.severity == severity) {
            groups
                .entry((i.code().as_str(), i.sub_code().as_str()))
                .or_default()
                .push(i);
        }
        if groups.is_empty() {
            continue;
        }
        let (title, code) = match severity {
            Severity::Error => ("Errors", "1;31"),
            _ => ("Warnings", "1;33"),
        };
        out.write_all(
            paint
                .wrap(
                    code,
                    &format!(
                        "{title}: {}\n",
                        groups.values().map(Vec::len).sum::<usize>()
                    ),
                )
                .as_bytes(),
        )?;
        let mut groups: Vec<_> = groups.into_iter().collect();
        groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        for ((c, sub), issues) in &groups {
            let head = if sub.is_empty() {
                c.to_string()
            } else {
                format!("{c} [{sub}]")
            };
            writeln!(
                out,
                "\n  {} ({} {}){}",
                paint.wrap(code, &head),
                issues.len(),
                if issues.len() == 1 {
                    "location"
                } else {
                    "locations"
                },
                if issues.iter().any(|i| i.fixable) {
                    "  [fixable]"
                } else {
                    ""
                }
            )?;
            let msg = super::code_message(report, c);
            {
                for line in msg.lines().take(if verbose { usize::MAX } else { 3 }) {
                    writeln!(out, "    {}", paint.wrap("2", line))?;
                }
            }
            if let Some(schema) = schema {
                for line in expectation(schema, c, sub) {
                    writeln!(out, "    {line}")?;
                }
            }
            let limit = if verbose { usize::MAX } else { SHOWN_LOCATIONS };
            for i in issues.iter().take(limit) {
                // Names and messages come from the dataset: control characters in them
                // are shown escaped, never sent to the terminal.
                write!(out, "    {}", control(&i.location))?;
                if let Some(n) = i.line_number() {
                    write!(out, ":{n}")?;
                }
                if let Some(m) = i.issue_message().and_then(|m| occurrence_text(c, m)) {
                    write!(out, "  {}", control(m))?;
                }
                match i.affects() {
                    [] => {}
                    [one] if *c == "JSON_SCHEMA_VALIDATION_ERROR" => {
                        write!(out, "  (inherited by {})", control(one))?
                    }
                    [one] => write!(out, "  (also {})", control(one))?,
                    [first, rest @ ..] => {
                        write!(out, "  (also {} and {} more)", control(first), rest.len())?
                    }
                }
                out.write_all(b"\n")?;
            }
            if issues.len() > limit {
                writeln!(out, "    … and {} more", issues.len() - limit)?;
            }
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The occurrence's own message as one line; `None` for the messages that only repeat
/// a field's description (the group's header says it once).
pub(crate) fn occurrence_text<'m>(code: &str, message: &'m str) -> Option<&'m str> {
    if message.starts_with("Field description:") || code.ends_with("_KEY_RECOMMENDED") {
        return None;
    }
    message.lines().next().filter(|l| !l.is_empty())
}

/// What the rules say of the field (or, for a TSV_ code, the column) an issue group
/// names by its sub-code: its description's first sentence, then the expected type,
/// unit, allowed values, format and bounds. Empty when the sub-code names neither.
pub(crate) fn expectation(schema: &Schema, code: &str, sub: &str) -> Vec<String> {
    if sub.is_empty() {
        return Vec::new();
    }
    let (what, def) = if code.starts_with("TSV_") {
        ("column", schema.column_def(sub))
    } else {
        ("field", schema.metadata_def(sub))
    };
    let Some(def) = def else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    if let Some(d) = def.description() {
        lines.push(format!("{what} {}: {}", def.name, first_sentence(d)));
    }
    let expected = expected_value(&def.def);
    if !expected.is_empty() {
        lines.push(format!("expected: {expected}"));
    }
    lines
}

/// The first sentence (or line) of a description, without Markdown links' targets.
fn first_sentence(text: &str) -> String {
    // The first paragraph, its wrapped lines joined.
    let line: String = text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut end = line.find(". ").map_or(line.len(), |i| i + 1);
    if end > 240 {
        end = 240;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
    }
    let mut out = String::new();
    let mut rest = &line[..end];
    // `[text](target)` → `text`.
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|i| open + i) else {
            break;
        };
        let Some(paren) = rest[close..].find(')').map(|i| close + i) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        rest = &rest[paren + 1..];
    }
    out.push_str(rest);
    out
}

/// A short description of what a JSON-schema-like definition accepts (or, for a
/// column, what its `definition`, in the form of a sidecar's column description, says).
fn expected_value(def: &serde_json::Value) -> String {
    if let Some(column) = def.get("definition").filter(|d| d.is_object()) {
        return expected_column(column);
    }
    let mut parts: Vec<String> = Vec::new();
    let alternatives: Vec<&serde_json::Value> = match def.get("anyOf").and_then(|v| v.as_array()) {
        Some(any) => any.iter().collect(),
        None => vec![def],
    };
    let mut kinds: Vec<String> = Vec::new();
    for alt in &alternatives {
        let mut kind = match alt.get("type").and_then(|t| t.as_str()) {
            Some("array") => match alt
                .get("items")
                .and_then(|i| i.get("type"))
                .and_then(|t| t.as_str())
            {
                Some(t) => format!("array of {t}"),
                None => "array".to_string(),
            },
            Some(t) => t.to_string(),
            None => String::new(),
        };
        if let Some(values) = alt.get("enum").and_then(|v| v.as_array()) {
            let shown: Vec<String> = values.iter().take(12).map(short_json).collect();
            let more = if values.len() > 12 { ", …" } else { "" };
            kind = format!("one of {}{more}", shown.join(", "));
        }
        if let Some(format) = alt.get("format").and_then(|v| v.as_str()) {
            kind = format!(
                "{} in format {format}",
                if kind.is_empty() { "a value" } else { &kind }
            );
        }
        if let Some(p) = alt.get("pattern").and_then(|v| v.as_str()) {
            kind = format!(
                "{} matching {p}",
                if kind.is_empty() { "a string" } else { &kind }
            );
        }
        for (key, op) in [
            ("minimum", ">="),
            ("exclusiveMinimum", ">"),
            ("maximum", "<="),
            ("exclusiveMaximum", "<"),
        ] {
            if let Some(v) = alt.get(key) {
                kind = format!("{kind} {op} {v}");
            }
        }
        if !kind.is_empty() && !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    if !kinds.is_empty() {
        parts.push(kinds.join(" or "));
    }
    if let Some(unit) = def.get("unit").and_then(|v| v.as_str()) {
        parts.push(format!("unit {unit}"));
    }
    if let Some(levels) = def.get("levels").and_then(|v| v.as_object()) {
        let shown: Vec<&str> = levels.keys().take(12).map(String::as_str).collect();
        let more = if levels.len() > 12 { ", …" } else { "" };
        parts.push(format!("levels {}{more}", shown.join(", ")));
    }
    parts.join(", ")
}

/// A column definition (`Format`, `Units`, `Levels`, `Minimum`, `Maximum`,
/// `Pattern`) as a short description.
fn expected_column(def: &serde_json::Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(f) = def.get("Format").and_then(|v| v.as_str()) {
        parts.push(f.to_string());
    }
    if let Some(levels) = def.get("Levels").and_then(|v| v.as_object()) {
        let shown: Vec<&str> = levels.keys().take(12).map(String::as_str).collect();
        let more = if levels.len() > 12 { ", …" } else { "" };
        parts.push(format!("one of {}{more}", shown.join(", ")));
    }
    if let Some(p) = def.get("Pattern").and_then(|v| v.as_str()) {
        parts.push(format!("matching {p}"));
    }
    for (key, op) in [("Minimum", ">="), ("Maximum", "<=")] {
        if let Some(v) = def.get(key) {
            parts.push(format!("{op} {v}"));
        }
    }
    if let Some(u) = def.get("Units").and_then(|v| v.as_str()) {
        parts.push(format!("unit {u}"));
    }
    parts.join(", ")
}

fn short_json(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The summary block of the text report, ending with the verdict.
pub(crate) fn write_summary(
    out: &mut impl Write,
    report: &Report,
    color: bool,
) -> std::io::Result<()> {
    let paint = Paint { on: color };
    let s = &report.summary;
    let errors = report.count(Severity::Error);
    let warnings = report.count(Severity::Warning);
    out.write_all(paint.wrap("1", "Summary\n").as_bytes())?;
    writeln!(
        out,
        "  {}, {}; {}, {}",
        plural(s.total_files, "file"),
        human_size(s.size),
        plural(s.subjects.len(), "subject"),
        plural(s.sessions.len(), "session")
    )?;
    if !s.tasks.is_empty() {
        writeln!(out, "  tasks: {}", control(&s.tasks.join(", ")))?;
    }
    if !s.modalities.is_empty() {
        writeln!(out, "  modalities: {}", control(&s.modalities.join(", ")))?;
    }
    if !s.data_types.is_empty() {
        writeln!(out, "  datatypes: {}", control(&s.data_types.join(", ")))?;
    }
    writeln!(
        out,
        "  {} {}, rules of version {} (schema {})",
        s.version_key,
        match s.dataset_version.as_deref() {
            None => "(not declared)".to_owned(),
            Some(v) if v.trim().is_empty() => format!("{v:?}"),
            Some(v) => control(v).into_owned(),
        },
        s.standard_version,
        s.schema_version
    )?;
    if let Some(newest) = s.newest_rules.as_ref().filter(|n| n.more > 0) {
        writeln!(
            out,
            "  the rules of version {} report {}: see them with --std-version {}",
            newest.version,
            plural(newest.more, "more issue"),
            newest.version
        )?;
    }
    if let Some(rules) = &s.rules_source {
        // As the user gave it (`--schema`, NIDOS_SCHEMA_DIR), control characters shown.
        writeln!(
            out,
            "  rules read from {} (not the bundled ones)",
            control(rules)
        )?;
    }
    let fixable = report.issues.iter().filter(|i| i.fixable).count();
    if fixable > 0 {
        writeln!(
            out,
            "  {} can be repaired automatically: see `nidos fix`",
            plural(fixable, "issue")
        )?;
    }
    let verdict = if errors == 0 {
        paint.wrap(
            "1;32",
            &format!("valid: 0 errors, {}", plural(warnings, "warning")),
        )
    } else {
        paint.wrap(
            "1;31",
            &format!(
                "{}, {}",
                plural(errors, "error"),
                plural(warnings, "warning")
            ),
        )
    };
    writeln!(out, "  {verdict}")?;
    if report.hidden_warnings > 0 {
        writeln!(
            out,
            "  ({} hidden by --ignore-warnings)",
            plural(report.hidden_warnings, "warning")
        )?;
    }
    Ok(())
}

fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_read_field_and_column_definitions() {
        let field = serde_json::json!({"type": "number", "exclusiveMinimum": 0, "unit": "s"});
        assert_eq!(expected_value(&field), "number > 0, unit s");
        let choice = serde_json::json!({"anyOf": [{"type": "string", "enum": ["1D", "2D"]}, {"type": "null"}]});
        assert_eq!(expected_value(&choice), "one of 1D, 2D or null");
        let column =
            serde_json::json!({"definition": {"Format": "number", "Units": "year", "Maximum": 89}});
        assert_eq!(expected_value(&column), "number, <= 89, unit year");
    }

    #[test]
    fn descriptions_give_their_first_sentence() {
        let text = "\nThe time in seconds between\nvolumes (see [TR](https://x.org/tr)). More text.\n\nOther.";
        assert_eq!(
            first_sentence(text),
            "The time in seconds between volumes (see TR)."
        );
    }
}
