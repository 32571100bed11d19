//! `--format html`: one self-contained page (inline style and script, no network
//! resources; `report_page.css` and `report_page.js` are inlined): the summary, an
//! overview chart of the issues by code and by datatype, filters, then the issues by
//! severity and code, each code a collapsed `<details>` group with its count, its
//! explanation once, and (when the code has sub-codes: fields, columns) a nested group per
//! sub-code with what the rules expect of that field, then its locations.
//!
//! The filters can be preset from the URL fragment, e.g.
//! `report.html#severity=error&code=EMPTY_FILE&subject=01&datatype=func`; a change of
//! filter rewrites the fragment. Filtered-out locations and groups get the `hidden`
//! attribute and every count says how many of its locations are shown. Names are escaped
//! everywhere; the script sets only text and attributes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;

use nidos_schema::Schema;

use super::text::{expectation, occurrence_text};
use super::{code_message, plural};
use crate::issue::{Issue, Severity};
use crate::report::Report;

/// At most this many locations are listed per group; the rest are counted by subject and
/// datatype (so the counts still follow the filters).
const MAX_LOCATIONS: usize = 2000;

/// At most this many codes get a bar in the overview chart.
const CHART_CODES: usize = 20;

const STYLE: &str = include_str!("report_page.css");
const SCRIPT: &str = include_str!("report_page.js");

const SEVERITIES: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Ignore];

/// One location of an issue, with the attributes the filters use: borrowed from the
/// issue (its location, `prefix` the derivative dataset's folder before it), so a
/// report of a million issues costs no text of its own here.
struct Row<'a> {
    issue: &'a Issue,
    prefix: &'a str,
    subject: &'a str,
    datatype: &'a str,
}

/// The locations of one (severity, code, sub-code), and the report they come from.
type Unit<'a> = (Vec<Row<'a>>, &'a Report);

/// Issue counts by severity (error, warning, ignore).
type Tally = [usize; 3];

fn slot(s: Severity) -> usize {
    match s {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Ignore => 2,
    }
}

/// Writes the page for the root report and any derivative reports; with the rule set,
/// field and column groups also say what the rules expect.
pub fn write_html(
    out: &mut impl Write,
    report: &Report,
    derivatives: &[(String, Report)],
    schema: Option<&Schema>,
) -> std::io::Result<()> {
    let mut all: Vec<(String, &Report)> = vec![(String::new(), report)];
    all.extend(
        derivatives
            .iter()
            .map(|(n, r)| (format!("/derivatives/{n}"), r)),
    );
    // Rows by (severity, code), then sub-code.
    let mut groups: BTreeMap<(Severity, &str), BTreeMap<&str, Unit<'_>>> = BTreeMap::new();
    let mut by_code: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut by_datatype: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut subjects: BTreeSet<&str> = BTreeSet::new();
    let mut total = 0usize;
    for (prefix, r) in &all {
        for i in &r.issues {
            let (subject, datatype) = subject_and_datatype(&i.location);
            let code = i.code().as_str();
            by_code.entry(code).or_default()[slot(i.severity)] += 1;
            by_datatype.entry(datatype).or_default()[slot(i.severity)] += 1;
            if !subject.is_empty() {
                subjects.insert(subject);
            }
            total += 1;
            groups
                .entry((i.severity, code))
                .or_default()
                .entry(i.sub_code().as_str())
                .or_insert_with(|| (Vec::new(), *r))
                .0
                .push(Row {
                    issue: i,
                    prefix,
                    subject,
                    datatype,
                });
        }
    }

    let mut page = String::with_capacity(1 << 14);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    page.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width\">");
    page.push_str("<title>nidos report</title><style>\n");
    page.push_str(STYLE);
    page.push_str("</style></head><body>\n<h1>nidos validation report</h1>\n");
    for (prefix, r) in &all {
        summary(&mut page, prefix, r);
    }
    if total > 0 {
        overview(&mut page, &by_code, &by_datatype);
    }
    page.push_str("<form class=\"filters\" id=\"filters\">");
    select(
        &mut page,
        "severity",
        "Severity",
        ["error", "warning", "ignore"].into_iter(),
    );
    select(&mut page, "code", "Code", by_code.keys().copied());
    select(&mut page, "subject", "Subject", subjects.iter().copied());
    select(
        &mut page,
        "datatype",
        "Datatype",
        by_datatype.keys().filter(|d| !d.is_empty()).copied(),
    );
    page.push_str("<button type=\"button\" id=\"clear-filters\">Clear filters</button>");
    page.push_str("<button type=\"button\" id=\"expand-all\">Expand all</button>");
    page.push_str("<button type=\"button\" id=\"collapse-all\">Collapse all</button>");
    page.push_str("</form>\n");
    let _ = writeln!(
        page,
        "<p id=\"shown\" data-total=\"{total}\">Showing all {total} issues.</p><p id=\"fragment-note\" hidden></p>"
    );
    out.write_all(page.as_bytes())?;

    for severity in SEVERITIES {
        let mut in_severity: Vec<(&str, &BTreeMap<&str, Unit<'_>>, usize)> = groups
            .iter()
            .filter(|((s, _), _)| *s == severity)
            .map(|((_, code), units)| (*code, units, units.values().map(|u| u.0.len()).sum()))
            .collect();
        if in_severity.is_empty() {
            continue;
        }
        let name = Severity::as_str(severity);
        let count: usize = in_severity.iter().map(|g| g.2).sum();
        let mut page = String::new();
        let _ = writeln!(
            page,
            "<section class=\"severity\" data-severity=\"{name}\"><h2>{} <span class=\"count\" data-total=\"{count}\">({count})</span></h2>",
            match severity {
                Severity::Error => "Errors",
                Severity::Warning => "Warnings",
                Severity::Ignore => "Ignored",
            }
        );
        out.write_all(page.as_bytes())?;
        // Most frequent first, then by code.
        in_severity.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
        for (code, units, _) in in_severity {
            let mut page = String::new();
            group(&mut page, name, code, units, schema);
            out.write_all(page.as_bytes())?;
        }
        out.write_all(b"</section>\n")?;
    }
    let mut page = String::new();
    if groups.is_empty() {
        page.push_str("<p id=\"no-issues\">No issues.</p>\n");
    }
    page.push_str("<script>\n");
    page.push_str(SCRIPT);
    page.push_str("</script></body></html>\n");
    out.write_all(page.as_bytes())
}

fn summary(page: &mut String, prefix: &str, r: &Report) {
    let s = &r.summary;
    let title = if prefix.is_empty() {
        "Dataset".to_string()
    } else {
        format!("Derivative dataset {}", &prefix[1..])
    };
    let errors = r.count(Severity::Error);
    let warnings = r.count(Severity::Warning);
    let _ = write!(
        page,
        "<section class=\"summary\"><h2>{}</h2><dl class=\"summary\">",
        esc(&title)
    );
    let mut item = |k: &str, v: &str, title: Option<String>| {
        if v.is_empty() {
            return;
        }
        let _ = match title {
            Some(t) => write!(
                page,
                "<dt>{}</dt><dd title=\"{}\">{}</dd>",
                esc(k),
                esc(&t),
                esc(v)
            ),
            None => write!(page, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v)),
        };
    };
    item("Files", &s.total_files.to_string(), None);
    item(
        "Size",
        &readable_size(s.size),
        Some(format!("{} bytes", s.size)),
    );
    item("Subjects", &s.subjects.len().to_string(), None);
    item("Sessions", &s.sessions.len().to_string(), None);
    item("Tasks", &s.tasks.join(", "), None);
    item("Modalities", &s.modalities.join(", "), None);
    item("Datatypes", &s.data_types.join(", "), None);
    item(
        &s.version_key,
        s.dataset_version.as_deref().unwrap_or("(not declared)"),
        None,
    );
    item("Rules of version", &s.standard_version, None);
    item("Schema version", &s.schema_version, None);
    page.push_str("</dl>");
    let fixable = r.issues.iter().filter(|i| i.fixable).count();
    if fixable > 0 {
        let _ = write!(
            page,
            "<p class=\"repairable\">{} can be repaired automatically: see <code>nidos fix</code>.</p>",
            plural(fixable, "issue")
        );
    }
    if r.hidden_warnings > 0 {
        let _ = write!(
            page,
            "<p class=\"hidden-warnings\">{} hidden by <code>--ignore-warnings</code>.</p>",
            plural(r.hidden_warnings, "warning")
        );
    }
    let _ = writeln!(
        page,
        "<p class=\"{}\">{}, {}</p></section>",
        if errors == 0 {
            "verdict-ok"
        } else {
            "verdict-bad"
        },
        plural(errors, "error"),
        plural(warnings, "warning")
    );
}

/// The overview: bars of the issue counts by code (the most frequent ones) and by
/// datatype, each split by severity; a click on a bar sets that filter.
fn overview(
    page: &mut String,
    by_code: &BTreeMap<&str, Tally>,
    by_datatype: &BTreeMap<&str, Tally>,
) {
    page.push_str("<section class=\"overview\"><h2>Overview</h2>");
    page.push_str("<p class=\"legend\">All issues of the report; a bar sets the filter.<span class=\"e\"></span>errors<span class=\"w\"></span>warnings<span class=\"i\"></span>ignored</p><div class=\"charts\">");
    let mut codes: Vec<(&str, &Tally)> = by_code.iter().map(|(c, t)| (*c, t)).collect();
    codes.sort_by(|a, b| sum(b.1).cmp(&sum(a.1)).then(a.0.cmp(b.0)));
    let more = codes.len().saturating_sub(CHART_CODES);
    codes.truncate(CHART_CODES);
    chart(page, "code", "Issues by code", &codes);
    if more > 0 {
        // Inside the figure would be tidier; after it keeps `chart` one job.
        let _ = write!(
            page,
            "<p class=\"count\">… and {} more</p>",
            plural(more, "code")
        );
    }
    let mut types: Vec<(&str, &Tally)> = by_datatype.iter().map(|(d, t)| (*d, t)).collect();
    types.sort_by(|a, b| sum(b.1).cmp(&sum(a.1)).then(a.0.cmp(b.0)));
    chart(page, "datatype", "Issues by datatype", &types);
    page.push_str("</div></section>\n");
}

fn sum(t: &Tally) -> usize {
    t.iter().sum()
}

fn chart(page: &mut String, key: &str, caption: &str, bars: &[(&str, &Tally)]) {
    let max = bars.iter().map(|(_, t)| sum(t)).max().unwrap_or(0).max(1);
    let _ = write!(
        page,
        "<figure class=\"chart\" id=\"chart-{key}\"><figcaption>{}</figcaption>",
        esc(caption)
    );
    for &(value, tally) in bars {
        let n = sum(tally);
        let title = format!(
            "{}: {}, {}, {} ignored",
            if value.is_empty() {
                "outside a datatype folder"
            } else {
                value
            },
            plural(tally[0], "error"),
            plural(tally[1], "warning"),
            tally[2]
        );
        // A dataset-level file has no datatype, and no filter value selects it.
        if value.is_empty() {
            let _ = write!(page, "<div class=\"bar\" title=\"{}\">", esc(&title));
        } else {
            let _ = write!(
                page,
                "<button type=\"button\" class=\"bar\" data-set=\"{key}\" data-value=\"{}\" title=\"{}\">",
                esc(value),
                esc(&title)
            );
        }
        let label = if value.is_empty() {
            "(none)".to_string()
        } else {
            esc(value)
        };
        let _ = write!(
            page,
            "<span class=\"label\">{label}</span><span class=\"track\">"
        );
        for (k, class) in ["e", "w", "i"].iter().enumerate() {
            if tally[k] > 0 {
                let _ = write!(
                    page,
                    "<span class=\"{class}\" style=\"width:{:.1}%\"></span>",
                    tally[k] as f64 * 100.0 / max as f64
                );
            }
        }
        let _ = write!(
            page,
            "</span><span class=\"n\">{n}</span>{}",
            if value.is_empty() {
                "</div>"
            } else {
                "</button>"
            }
        );
    }
    page.push_str("</figure>");
}

fn select<'a>(page: &mut String, key: &str, label: &str, values: impl Iterator<Item = &'a str>) {
    let _ = write!(
        page,
        "<label>{label} <select id=\"filter-{key}\"><option value=\"\">all</option>"
    );
    for v in values {
        let v = esc(v);
        let _ = write!(page, "<option value=\"{v}\">{v}</option>");
    }
    page.push_str("</select></label>");
}

/// `(9 locations)`, with the total the script counts against.
fn count_span(n: usize) -> String {
    format!(
        "<span class=\"count\" data-total=\"{n}\" data-unit=\"location\">({})</span>",
        plural(n, "location")
    )
}

const FIXABLE: &str = "<span class=\"fixable\" title=\"nidos fix can repair these\">fixable</span>";

/// One code's group: collapsed, with its count and explanation; a code with several
/// sub-codes has a nested group per sub-code, most frequent first.
fn group(
    page: &mut String,
    severity: &str,
    code: &str,
    units: &BTreeMap<&str, Unit<'_>>,
    schema: Option<&Schema>,
) {
    let count: usize = units.values().map(|u| u.0.len()).sum();
    let fixable = units.values().any(|u| u.0.iter().any(|r| r.issue.fixable));
    let Some((first_sub, (_, report))) = units.iter().next() else {
        return;
    };
    let single = units.len() == 1;
    let head = if single && !first_sub.is_empty() {
        format!("{} [{}]", esc(code), esc(first_sub))
    } else {
        esc(code)
    };
    let _ = write!(
        page,
        "<details class=\"group\" data-severity=\"{severity}\" data-code=\"{}\"",
        esc(code)
    );
    if single {
        rest_attribute(page, &units[first_sub].0);
    }
    let _ = write!(
        page,
        "><summary>{head} {}{}{}</summary><p class=\"explain\">{}</p>",
        count_span(count),
        if single {
            String::new()
        } else {
            format!(" <span class=\"count\">in {} sub-codes</span>", units.len())
        },
        if fixable { FIXABLE } else { "" },
        esc(&code_message(report, code))
    );
    if single {
        expectations(page, schema, code, first_sub);
        locations(page, code, &units[first_sub].0);
    } else {
        let mut ordered: Vec<(&&str, &Unit<'_>)> = units.iter().collect();
        ordered.sort_by(|a, b| b.1 .0.len().cmp(&a.1 .0.len()).then(a.0.cmp(b.0)));
        for (sub, (rows, _)) in ordered {
            let _ = write!(page, "<details class=\"sub\" data-sub=\"{}\"", esc(sub));
            rest_attribute(page, rows);
            let _ = write!(
                page,
                "><summary>{} {}{}</summary>",
                if sub.is_empty() {
                    "(no sub-code)".to_string()
                } else {
                    format!("[{}]", esc(sub))
                },
                count_span(rows.len()),
                if rows.iter().any(|r| r.issue.fixable) {
                    FIXABLE
                } else {
                    ""
                }
            );
            expectations(page, schema, code, sub);
            locations(page, code, rows);
            page.push_str("</details>");
        }
    }
    page.push_str("</details>\n");
}

/// What the rules expect of the field or column a sub-code names.
fn expectations(page: &mut String, schema: Option<&Schema>, code: &str, sub: &str) {
    let Some(schema) = schema else {
        return;
    };
    let lines = expectation(schema, code, sub);
    if lines.is_empty() {
        return;
    }
    page.push_str("<ul class=\"expect\">");
    for line in lines {
        let _ = write!(page, "<li>{}</li>", esc(&line));
    }
    page.push_str("</ul>");
}

/// ` data-rest="[[subject, datatype, count], …]"`: the locations past the listed ones,
/// counted by what the filters look at. Nothing when all are listed.
fn rest_attribute(page: &mut String, rows: &[Row<'_>]) {
    if rows.len() <= MAX_LOCATIONS {
        return;
    }
    let mut rest: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for r in &rows[MAX_LOCATIONS..] {
        *rest.entry((r.subject, r.datatype)).or_default() += 1;
    }
    let triples: Vec<(&str, &str, usize)> = rest.into_iter().map(|((s, d), n)| (s, d, n)).collect();
    let json = serde_json::to_string(&triples).unwrap_or_else(|_| "[]".into());
    let _ = write!(page, " data-rest=\"{}\"", esc(&json));
}

fn locations(page: &mut String, code: &str, rows: &[Row<'_>]) {
    let all_fixable = rows.iter().all(|r| r.issue.fixable);
    page.push_str("<ul class=\"locations\">");
    for row in rows.iter().take(MAX_LOCATIONS) {
        page.push_str("<li class=\"loc\"");
        if !row.subject.is_empty() {
            let _ = write!(page, " data-subject=\"{}\"", esc(row.subject));
        }
        if !row.datatype.is_empty() {
            let _ = write!(page, " data-datatype=\"{}\"", esc(row.datatype));
        }
        let _ = write!(page, ">{}{}", esc(row.prefix), esc(&row.issue.location));
        let i = row.issue;
        if let Some(n) = i.line_number() {
            let _ = write!(page, ":{n}");
        }
        if let Some(m) = i.issue_message().and_then(|m| occurrence_text(code, m)) {
            let _ = write!(page, " <span class=\"msg\">{}</span>", esc(m));
        }
        let also = match i.affects() {
            [] => String::new(),
            [one] if code == "JSON_SCHEMA_VALIDATION_ERROR" => format!("(inherited by {one})"),
            [one] => format!("(also {one})"),
            [first, rest @ ..] => format!("(also {first} and {} more)", rest.len()),
        };
        if !also.is_empty() {
            let _ = write!(page, " <span class=\"also\">{}</span>", esc(&also));
        }
        if i.fixable && !all_fixable {
            page.push_str(FIXABLE);
        }
        page.push_str("</li>");
    }
    if rows.len() > MAX_LOCATIONS {
        let _ = write!(
            page,
            "<li class=\"more\">… and {} more</li>",
            rows.len() - MAX_LOCATIONS
        );
    }
    page.push_str("</ul>");
}

/// The subject label and datatype directory of a dataset path (empty when none).
fn subject_and_datatype(location: &str) -> (&str, &str) {
    let parts: Vec<&str> = location.split('/').filter(|p| !p.is_empty()).collect();
    let Some(at) = parts.iter().position(|p| p.starts_with("sub-")) else {
        return ("", "");
    };
    let subject = parts[at].trim_start_matches("sub-");
    // Directories below the subject (the last part is the file itself).
    let dirs = parts
        .get(at + 1..parts.len().saturating_sub(1))
        .unwrap_or(&[]);
    let datatype = dirs
        .iter()
        .find(|d| !d.starts_with("ses-"))
        .copied()
        .unwrap_or_default();
    (subject, datatype)
}

/// A size in binary units with one decimal: `5.1 MiB`; under 1 KiB in bytes.
fn readable_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return plural(bytes as usize, "byte");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Escapes text for HTML content and double-quoted attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_and_datatypes_come_from_the_path() {
        let cases = [
            ("/sub-01/func/sub-01_bold.nii", ("01", "func")),
            ("/sub-01/ses-a/anat/x.nii", ("01", "anat")),
            ("/sub-02/sub-02_scans.tsv", ("02", "")),
            ("/participants.tsv", ("", "")),
            ("/derivatives/p/sub-03/eeg/x.edf", ("03", "eeg")),
        ];
        for (path, (s, d)) in cases {
            assert_eq!(subject_and_datatype(path), (s, d), "{path}");
        }
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(readable_size(0), "0 bytes");
        assert_eq!(readable_size(1), "1 byte");
        assert_eq!(readable_size(1023), "1023 bytes");
        assert_eq!(readable_size(1024), "1.0 KiB");
        assert_eq!(readable_size(5_353_460), "5.1 MiB");
        assert_eq!(readable_size(3 << 30), "3.0 GiB");
    }
}
