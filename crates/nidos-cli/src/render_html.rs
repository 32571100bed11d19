//! `--format html`: one self-contained page (inline style and script, no network
//! resources): the summary, then the issues grouped by severity and code, each group a
//! collapsible list of its locations under the code's explanation, with filters by
//! severity, code, subject and datatype.
//!
//! The filters can be preset from the URL fragment, e.g.
//! `report.html#severity=error&code=EMPTY_FILE&subject=01&datatype=func`: filtered-out
//! locations and groups get the `hidden` attribute.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;

use nidos_validate::{Issue, Report, Severity};

use crate::render_sarif::code_message;

/// At most this many locations are listed per group; the rest are counted.
const MAX_LOCATIONS: usize = 2000;

const STYLE: &str = r#"
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.5em}
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}
dl.summary dt{font-weight:600}
.filters{display:flex;gap:1em;flex-wrap:wrap;padding:.6em;background:#f4f4f4;border-radius:4px}
details.group{border-left:4px solid #999;margin:.5em 0;padding:.2em .6em}
details.group[data-severity=error]{border-color:#c62828}
details.group[data-severity=warning]{border-color:#ef8f00}
summary{cursor:pointer;font-weight:600}
.count{font-weight:400;color:#555}
.explain{color:#444;margin:.3em 0}
ul.locations{margin:.2em 0;padding-left:1.2em;font-family:ui-monospace,monospace;font-size:13px}
.msg{color:#555;font-family:system-ui,sans-serif}
.verdict-ok{color:#2e7d32}.verdict-bad{color:#c62828}
"#;

const SCRIPT: &str = r#"
(function(){
  var keys=['severity','code','subject','datatype'];
  function current(){var f={};keys.forEach(function(k){f[k]=document.getElementById('filter-'+k).value;});return f;}
  function apply(){
    var f=current();
    document.querySelectorAll('li.loc').forEach(function(li){
      var show=keys.every(function(k){return !f[k]||li.getAttribute('data-'+k)===f[k];});
      if(show){li.removeAttribute('hidden');}else{li.setAttribute('hidden','');}
    });
    document.querySelectorAll('details.group').forEach(function(g){
      var any=g.querySelector('li.loc:not([hidden])')!==null;
      if(any){g.removeAttribute('hidden');}else{g.setAttribute('hidden','');}
    });
    document.querySelectorAll('section.severity').forEach(function(s){
      var any=s.querySelector('details.group:not([hidden])')!==null;
      if(any){s.removeAttribute('hidden');}else{s.setAttribute('hidden','');}
    });
  }
  function fromHash(){
    var h=location.hash.replace(/^#/,'');
    h.split('&').forEach(function(p){
      var kv=p.split('=');if(kv.length!==2)return;
      var el=document.getElementById('filter-'+decodeURIComponent(kv[0]));
      if(el){el.value=decodeURIComponent(kv[1]);}
    });
  }
  keys.forEach(function(k){document.getElementById('filter-'+k).addEventListener('change',apply);});
  fromHash();apply();
})();
"#;

/// One location of an issue, with the attributes the filters use.
struct Row<'a> {
    issue: &'a Issue,
    location: String,
    subject: String,
    datatype: String,
}

/// Writes the page for the root report and any derivative reports.
pub fn write_html(
    out: &mut impl Write,
    report: &Report,
    derivatives: &[(String, Report)],
) -> std::io::Result<()> {
    let mut all: Vec<(String, &Report)> = vec![(String::new(), report)];
    all.extend(
        derivatives
            .iter()
            .map(|(n, r)| (format!("/derivatives/{n}"), r)),
    );
    // Rows grouped by (severity, code, sub-code).
    let mut groups: BTreeMap<(Severity, &str, &str), (Vec<Row<'_>>, &Report)> = BTreeMap::new();
    for (prefix, r) in &all {
        for i in &r.issues {
            let location = format!("{prefix}{}", i.location);
            let (subject, datatype) = subject_and_datatype(&location);
            groups
                .entry((i.severity, i.code().as_str(), i.sub_code().as_str()))
                .or_insert_with(|| (Vec::new(), r))
                .0
                .push(Row {
                    issue: i,
                    location,
                    subject,
                    datatype,
                });
        }
    }
    let mut codes = BTreeSet::new();
    let mut subjects = BTreeSet::new();
    let mut datatypes = BTreeSet::new();
    for ((_, code, _), (rows, _)) in &groups {
        codes.insert(code.to_string());
        for row in rows {
            if !row.subject.is_empty() {
                subjects.insert(row.subject.clone());
            }
            if !row.datatype.is_empty() {
                datatypes.insert(row.datatype.clone());
            }
        }
    }

    let mut page = String::with_capacity(1 << 16);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    page.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">");
    page.push_str("<title>nidos report</title><style>");
    page.push_str(STYLE);
    page.push_str("</style></head><body>\n<h1>nidos validation report</h1>\n");
    for (prefix, r) in &all {
        summary(&mut page, prefix, r);
    }
    page.push_str("<form class=\"filters\" id=\"filters\">");
    select(
        &mut page,
        "severity",
        "Severity",
        ["error", "warning", "ignore"].map(String::from).iter(),
    );
    select(&mut page, "code", "Code", codes.iter());
    select(&mut page, "subject", "Subject", subjects.iter());
    select(&mut page, "datatype", "Datatype", datatypes.iter());
    page.push_str("</form>\n");
    for severity in [Severity::Error, Severity::Warning, Severity::Ignore] {
        let in_severity: Vec<_> = groups
            .iter()
            .filter(|((s, _, _), _)| *s == severity)
            .collect();
        if in_severity.is_empty() {
            continue;
        }
        let name = severity_name(severity);
        let total: usize = in_severity.iter().map(|(_, (rows, _))| rows.len()).sum();
        let _ = writeln!(
            page,
            "<section class=\"severity\" data-severity=\"{name}\"><h2>{} ({total})</h2>",
            match severity {
                Severity::Error => "Errors",
                Severity::Warning => "Warnings",
                Severity::Ignore => "Ignored",
            }
        );
        // Most frequent first, then by code.
        let mut ordered = in_severity;
        ordered.sort_by(|a, b| b.1 .0.len().cmp(&a.1 .0.len()).then(a.0.cmp(b.0)));
        for ((_, code, sub), (rows, r)) in ordered {
            group(&mut page, name, code, sub, rows, r);
        }
        page.push_str("</section>\n");
    }
    if groups.is_empty() {
        page.push_str("<p id=\"no-issues\">No issues.</p>\n");
    }
    page.push_str("<script>");
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
    let mut item = |k: &str, v: String| {
        let _ = write!(page, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(&v));
    };
    item("Files", s.total_files.to_string());
    item("Size", format!("{} bytes", s.size));
    item("Subjects", s.subjects.len().to_string());
    item("Sessions", s.sessions.len().to_string());
    item("Tasks", s.tasks.join(", "));
    item("Modalities", s.modalities.join(", "));
    item("Datatypes", s.data_types.join(", "));
    item(
        &s.version_key,
        s.dataset_version.clone().unwrap_or("(not declared)".into()),
    );
    item("Rules of version", s.standard_version.clone());
    item("Schema version", s.schema_version.clone());
    let _ = writeln!(
        page,
        "</dl><p class=\"{}\">{errors} errors, {warnings} warnings</p></section>",
        if errors == 0 {
            "verdict-ok"
        } else {
            "verdict-bad"
        }
    );
}

fn select<'a>(page: &mut String, key: &str, label: &str, values: impl Iterator<Item = &'a String>) {
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

fn group(page: &mut String, severity: &str, code: &str, sub: &str, rows: &[Row<'_>], r: &Report) {
    let head = if sub.is_empty() {
        esc(code)
    } else {
        format!("{} [{}]", esc(code), esc(sub))
    };
    let _ = write!(
        page,
        "<details class=\"group\" data-severity=\"{severity}\" data-code=\"{}\"{}><summary>{head} <span class=\"count\">({} {})</span></summary>",
        esc(code),
        if severity == "error" { " open" } else { "" },
        rows.len(),
        if rows.len() == 1 { "location" } else { "locations" }
    );
    let _ = write!(
        page,
        "<p class=\"explain\">{}</p><ul class=\"locations\">",
        esc(&code_message(r, code))
    );
    for row in rows.iter().take(MAX_LOCATIONS) {
        let _ = write!(
            page,
            "<li class=\"loc\" data-severity=\"{severity}\" data-code=\"{}\" data-subject=\"{}\" data-datatype=\"{}\">{}",
            esc(code),
            esc(&row.subject),
            esc(&row.datatype),
            esc(&row.location)
        );
        if let Some(n) = row.issue.line_number() {
            let _ = write!(page, ":{n}");
        }
        if let Some(m) = row.issue.issue_message() {
            let _ = write!(page, " <span class=\"msg\">{}</span>", esc(m));
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
    page.push_str("</ul></details>\n");
}

/// The subject label and datatype directory of a dataset path (empty when none).
fn subject_and_datatype(location: &str) -> (String, String) {
    let parts: Vec<&str> = location.split('/').filter(|p| !p.is_empty()).collect();
    let Some(at) = parts.iter().position(|p| p.starts_with("sub-")) else {
        return (String::new(), String::new());
    };
    let subject = parts[at].trim_start_matches("sub-").to_string();
    // Directories below the subject (the last part is the file itself).
    let dirs = parts
        .get(at + 1..parts.len().saturating_sub(1))
        .unwrap_or(&[]);
    let datatype = dirs
        .iter()
        .find(|d| !d.starts_with("ses-"))
        .map(|d| d.to_string())
        .unwrap_or_default();
    (subject, datatype)
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Ignore => "ignore",
    }
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
            assert_eq!(
                subject_and_datatype(path),
                (s.to_string(), d.to_string()),
                "{path}"
            );
        }
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
