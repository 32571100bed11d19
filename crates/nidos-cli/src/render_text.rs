//! The text report of `nidos validate`: issues grouped by code (errors first) with the
//! code's explanation once and a few locations, then the dataset summary.

use std::io::Write;

use nidos_validate::{Issue, Report, Severity};

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

/// The human report: issues grouped by code (errors first), a few locations each, the
/// code's message once, then a summary. Written line by line.
pub(crate) fn write_text(
    out: &mut impl Write,
    report: &Report,
    verbose: bool,
    color: bool,
) -> std::io::Result<()> {
    write_issues(out, report, verbose, color)?;
    write_summary(out, report, color)
}

/// The issue groups of the text report: errors, then warnings; within each, the most
/// frequent code first.
pub(crate) fn write_issues(
    out: &mut impl Write,
    report: &Report,
    verbose: bool,
    color: bool,
) -> std::io::Result<()> {
    let paint = Paint { on: color };
    for severity in [Severity::Error, Severity::Warning] {
        let mut groups: std::collections::BTreeMap<(&str, &str), Vec<&Issue>> =
            std::collections::BTreeMap::new();
        for i in report.issues.iter().filter(|i| i.severity == severity) {
            groups
                .entry((i.code.as_str(), i.sub_code.as_str()))
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
            let msg = crate::render_sarif::code_message(report, c);
            {
                for line in msg.lines().take(if verbose { usize::MAX } else { 3 }) {
                    writeln!(out, "    {}", paint.wrap("2", line))?;
                }
            }
            let limit = if verbose { usize::MAX } else { SHOWN_LOCATIONS };
            for i in issues.iter().take(limit) {
                write!(out, "    {}", i.location)?;
                if let Some(n) = i.line_number() {
                    write!(out, ":{n}")?;
                }
                if let Some(m) = i.issue_message() {
                    write!(out, "  {}", m.lines().next().unwrap_or(""))?;
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
        writeln!(out, "  tasks: {}", s.tasks.join(", "))?;
    }
    if !s.modalities.is_empty() {
        writeln!(out, "  modalities: {}", s.modalities.join(", "))?;
    }
    if !s.data_types.is_empty() {
        writeln!(out, "  datatypes: {}", s.data_types.join(", "))?;
    }
    writeln!(
        out,
        "  {} {}, schema version {}",
        s.version_key,
        s.dataset_version.as_deref().unwrap_or("(not declared)"),
        s.schema_version
    )?;
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

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
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
