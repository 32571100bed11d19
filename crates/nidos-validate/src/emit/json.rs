//! The JSON report (the reference validator's shape, `docs/report.schema.json`): a
//! serializable view of a [`Report`] and its fast compact writer (issues rendered on the
//! worker threads, [`super::json_text`]).

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value as Json;

use crate::issue::{Issue, IssueView};
use crate::report::{fallback, FieldMessages, Report, Summary};

impl Report {
    /// The JSON report: `{"issues": {"issues": [...], "codeMessages": {...}}, "summary": {...}}`.
    pub fn to_json(&self) -> Json {
        serde_json::to_value(self.json()).unwrap_or(Json::Null)
    }

    /// The JSON report as a serializable view (stream it with `serde_json::to_writer`
    /// instead of building a [`Json`] tree); add derivative datasets with
    /// [`ReportJson::derivative`].
    pub fn json(&self) -> ReportJson<'_> {
        ReportJson {
            issues: IssuesJson {
                issues: &self.issues,
                code_messages: &self.code_messages,
                field_messages: &self.field_messages,
            },
            summary: &self.summary,
            derivatives_summary: IndexMap::new(),
        }
    }
}

/// The serializable shape of a report (docs/report.schema.json).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportJson<'a> {
    issues: IssuesJson<'a>,
    summary: &'a Summary,
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    derivatives_summary: IndexMap<String, ReportJson<'a>>,
}

impl<'a> ReportJson<'a> {
    /// Adds the report of `derivatives/<name>` under `derivativesSummary`.
    pub fn derivative(mut self, name: &str, report: &'a Report) -> ReportJson<'a> {
        self.derivatives_summary
            .insert(name.to_string(), report.json());
        self
    }

    /// Writes the compact JSON text, the same bytes as `serde_json::to_writer` of this
    /// view, with the issues rendered on the worker threads (a large dataset's report
    /// holds hundreds of thousands). A window of chunks is rendered at a time, so little
    /// of the text is held in memory.
    pub fn write_compact(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        use rayon::prelude::*;
        // Issues rendered per chunk: a chunk's text is about 300 KB.
        const CHUNK: usize = 1024;
        // Two chunks per worker at a time, each into a buffer of its own that the next
        // window reuses: the text waiting to be written stays small, and its memory is
        // touched once (fresh buffers for each chunk would have the allocator map, and
        // the kernel zero, new pages for every megabyte of the report). With one chunk
        // per worker the workers waited for each other at every window: on the 32k
        // benchmark's 374,000 issues the writing took 28 ms, with two 24 ms (four: no
        // faster, 5 MB more).
        let workers = rayon::current_num_threads().max(1);
        let window = CHUNK * workers * 2;
        let mut buffers: Vec<Vec<u8>> = Vec::new();
        out.write_all(br#"{"issues":{"issues":["#)?;
        for (w, window) in self.issues.issues.chunks(window).enumerate() {
            let chunks = window.len().div_ceil(CHUNK);
            if buffers.len() < chunks {
                buffers.resize_with(chunks, Vec::new);
            }
            buffers
                .par_iter_mut()
                .zip(window.par_chunks(CHUNK))
                .for_each(|(buf, chunk)| self.render(chunk, buf));
            for (i, part) in buffers.iter().take(chunks).enumerate() {
                if w > 0 || i > 0 {
                    out.write_all(b",")?;
                }
                out.write_all(part)?;
            }
        }
        out.write_all(br#"],"codeMessages":"#)?;
        serde_json::to_writer(&mut *out, self.issues.code_messages)?;
        out.write_all(br#"},"summary":"#)?;
        serde_json::to_writer(&mut *out, self.summary)?;
        if !self.derivatives_summary.is_empty() {
            out.write_all(br#","derivativesSummary":{"#)?;
            for (i, (name, report)) in self.derivatives_summary.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, name)?;
                out.write_all(b":")?;
                report.write_compact(out)?;
            }
            out.write_all(b"}")?;
        }
        out.write_all(b"}")
    }

    /// Writes the issues of `chunk` into `buf` (emptied first), separated by commas.
    fn render(&self, chunk: &[Issue], buf: &mut Vec<u8>) {
        let messages = self.issues.field_messages;
        buf.clear();
        // Room for the whole chunk, so the buffer is not copied as it grows: each issue's
        // texts and its fixed parts (a few escapes may still overflow it).
        let room: usize = chunk
            .iter()
            .map(|i| {
                160 + i.code().len()
                    + i.sub_code().len()
                    + i.location.len()
                    + i.issue_message().map_or(0, str::len)
                    + i.rule_id().map_or(0, |r| r.len())
                    + i.affects().iter().map(|a| a.len() + 3).sum::<usize>()
            })
            .sum::<usize>()
            .max(chunk.len() * 192);
        buf.reserve(room);
        let mut recent = super::json_text::Recent::default();
        // The fallback messages by the issues' shared (code, sub-code, rule) triple: a
        // chunk has few, and sorted issues of one code alternate between their sub-codes,
        // so most issues find theirs by an address instead of hashing two texts.
        let mut known: crate::issue::FastMap<usize, Option<&str>> = Default::default();
        for (i, issue) in chunk.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            let fallback = if messages.is_empty() || issue.issue_message().is_some() {
                None
            } else {
                *known
                    .entry(issue.kind_id())
                    .or_insert_with(|| fallback(messages, issue))
            };
            super::json_text::push_issue_after(buf, issue, fallback, &mut recent);
        }
    }
}

struct IssuesJson<'a> {
    issues: &'a [Issue],
    code_messages: &'a IndexMap<String, String>,
    field_messages: &'a FieldMessages,
}

impl Serialize for IssuesJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("IssuesJson", 2)?;
        st.serialize_field(
            "issues",
            &IssueList {
                issues: self.issues,
                messages: self.field_messages,
            },
        )?;
        st.serialize_field("codeMessages", self.code_messages)?;
        st.end()
    }
}

struct IssueList<'a> {
    issues: &'a [Issue],
    messages: &'a FieldMessages,
}

impl Serialize for IssueList<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.issues.iter().map(|issue| IssueView {
            issue,
            fallback_message: fallback(self.messages, issue),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::issue::Severity;

    fn report(n: usize, tag: &str) -> Report {
        let issues = (0..n)
            .map(|i| {
                let issue = Issue::new(
                    "SIDECAR_KEY_RECOMMENDED",
                    Severity::Warning,
                    format!("/f{i}"),
                )
                .sub(tag);
                match i % 3 {
                    0 => issue.message(format!("line \"{i}\"\n")),
                    1 => issue.line(i).rule("rules.x"),
                    _ => issue,
                }
            })
            .collect();
        Report {
            issues,
            code_messages: [(
                "SIDECAR_KEY_RECOMMENDED".to_string(),
                "a \"key\"".to_string(),
            )]
            .into_iter()
            .collect(),
            summary: Summary {
                subjects: vec!["01".into()],
                ..Summary::default()
            },
            dataset_type: "raw".into(),
            hidden_warnings: 0,
            field_messages: [(
                ("SIDECAR_KEY_RECOMMENDED".to_string(), tag.to_string()),
                "Field description: a \"tag\"\n".to_string(),
            )]
            .into_iter()
            .collect(),
        }
    }

    /// The parallel writer gives serde's bytes: no issue, one, at and across chunk and
    /// window edges, with and without derivative datasets.
    #[test]
    fn compact_json_is_serde_json() {
        let derivative = report(5000, "d");
        let empty = Report::default();
        for n in [0, 1, 4095, 4096, 4097, 40_000] {
            let main = report(n, "m");
            for with_derivatives in [false, true] {
                let mut view = main.json();
                if with_derivatives {
                    view = view
                        .derivative("fmriprep", &derivative)
                        .derivative("empty \"one\"", &empty);
                }
                let mut ours = Vec::new();
                view.write_compact(&mut ours).unwrap();
                let theirs = serde_json::to_vec(&view).unwrap();
                // The fallback message is found (the look-up by borrowed key hashes as
                // the owned key).
                if n > 2 {
                    let text = String::from_utf8_lossy(&ours);
                    assert!(text.contains(r#""issueMessage":"Field description: a \"tag\"\n""#));
                }
                assert!(
                    ours == theirs,
                    "{n} issues, derivatives: {with_derivatives}"
                );
            }
        }
    }
}
