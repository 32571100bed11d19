//! Writing issues as compact JSON text directly into a byte buffer: the bytes
//! `serde_json::to_writer` gives for [`IssueView`], without serde's per-field machinery.
//! A report can hold hundreds of thousands of issues, so this is the report writer's
//! inner loop.

use crate::issue::{FastMap, Issue, Severity, Sym};

/// The JSON escape of a byte that needs one, as serde_json writes it: the short forms
/// for `"`, `\`, backspace, form feed, newline, carriage return and tab, `\u00xx` (lower
/// case hex) for the other control characters. Other bytes (including DEL and every
/// byte of a multi-byte character) are written as they are.
fn push_escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0xf)],
        ]),
    }
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The position of the first byte of `b` that needs an escape.
///
/// Eight bytes at a time: for a word `w`, `(w - 0x01…01 * n) & !w & 0x80…80` flags the
/// bytes below `n` (bytes with the high bit set never count; a byte above a flagged one
/// may be flagged too, where the subtraction borrowed), so the lowest flag of the three
/// tests (below 0x20, equal to `"`, equal to `\`) is a byte that needs an escape.
fn find_escape(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |w: u64, n: u64| w.wrapping_sub(ONES * n) & !w & HIGH;
    let mut chunks = b.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let flags = below(w, 0x20) | below(w ^ (ONES * 0x22), 1) | below(w ^ (ONES * 0x5c), 1);
        if flags != 0 {
            return Some(offset + (flags.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&c| needs_escape(c))
        .map(|p| offset + p)
}

/// Appends `s` as a JSON string (quotes included), escaped as serde_json escapes it: the
/// runs between escapes are copied whole.
pub(crate) fn push_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    push_escaped(out, b);
    out.push(b'"');
}

/// Appends the escaped bytes of `b` (no quotes). Returns the position in `b` just after its
/// last byte that needed an escape (0 when none did) and the length of `out` at that point:
/// from there on the escaped text is the raw text. Escaping is byte by byte, so the escape of
/// a text is the escapes of its parts put together, whatever the split.
fn push_escaped(out: &mut Vec<u8>, b: &[u8]) -> (usize, usize) {
    let mut start = 0;
    while let Some(k) = b.get(start..).and_then(find_escape) {
        let at = start + k;
        out.extend_from_slice(b.get(start..at).unwrap_or_default());
        if let Some(&c) = b.get(at) {
            push_escape(out, c);
        }
        start = at + 1;
    }
    let clean = (start, out.len());
    out.extend_from_slice(b.get(start..).unwrap_or_default());
    clean
}

/// The length of the common prefix of `a` and `b`, compared eight bytes at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let mut wx = [0u8; 8];
        let mut wy = [0u8; 8];
        wx.copy_from_slice(x);
        wy.copy_from_slice(y);
        let diff = u64::from_le_bytes(wx) ^ u64::from_le_bytes(wy);
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a
        .get(i..)
        .unwrap_or_default()
        .iter()
        .zip(b.get(i..).unwrap_or_default())
        .take_while(|(x, y)| x == y)
        .count()
}

/// The previous message written into the buffer, to write the next one from it when they
/// begin alike (issues of one kind come in runs whose messages differ only near their end,
/// e.g. in a line number): its text, where its escaped text starts in the buffer, the
/// position in the text just after its last escaped byte and where that is in the buffer.
pub(crate) struct LastMessage<'a> {
    text: &'a [u8],
    at: usize,
    clean: usize,
    clean_at: usize,
}

/// Shorter common prefixes are escaped again: comparing and copying would save little.
const MIN_SHARED_PREFIX: usize = 16;

impl<'a> LastMessage<'a> {
    /// Appends `s` as a JSON string like [`push_str`], and remembers it in `last`. When `s`
    /// shares with the previous message a prefix that reaches past that message's last
    /// escape, the escaped prefix is copied from the buffer (past the last escape, escaped
    /// and raw bytes are the same, so its end there is known) and only the rest is escaped.
    /// `last` must have been filled by writes into this same `out`.
    pub(crate) fn push(last: &mut Option<LastMessage<'a>>, out: &mut Vec<u8>, s: &'a str) {
        let b = s.as_bytes();
        out.reserve(b.len() + 2);
        out.push(b'"');
        let at = out.len();
        let mut clean = None;
        if let Some(prev) = last.as_ref() {
            let common = common_prefix(prev.text, b);
            if common >= prev.clean && common >= MIN_SHARED_PREFIX {
                let end = prev.clean_at + (common - prev.clean);
                if prev.at <= end && end <= out.len() {
                    out.extend_from_within(prev.at..end);
                    let (k, k_at) = push_escaped(out, b.get(common..).unwrap_or_default());
                    clean = Some(if k > 0 {
                        (common + k, k_at)
                    } else {
                        (prev.clean, at + (prev.clean_at - prev.at))
                    });
                }
            }
        }
        let (clean, clean_at) = match clean {
            Some(c) => c,
            None => push_escaped(out, b),
        };
        out.push(b'"');
        *last = Some(LastMessage {
            text: b,
            at,
            clean,
            clean_at,
        });
    }
}

/// Where a message's escaped text sits in the buffer (between its quotes), with what
/// [`LastMessage`] keeps of it, as offsets from that start.
#[derive(Clone, Copy)]
struct Written {
    at: usize,
    end: usize,
    clean: usize,
    clean_from_at: usize,
}

/// The fallback messages (one shared text per code and sub-code) a buffer holds, by the
/// address and length of the text: sorted issues of one kind alternate between a few
/// sub-codes, each with a message of a few hundred bytes holding line breaks and quotes,
/// so each is escaped once per buffer and then copied. While the texts are borrowed, an
/// address and length name one text.
#[derive(Default)]
pub(crate) struct SharedMessages(FastMap<(usize, usize), Written>);

impl SharedMessages {
    /// Appends the shared text `s` like [`LastMessage::push`], copying its escaped text
    /// from its first copy in `out` when there is one.
    fn push<'a>(&mut self, last: &mut Option<LastMessage<'a>>, out: &mut Vec<u8>, s: &'a str) {
        let key = (s.as_ptr() as usize, s.len());
        if let Some(w) = self.0.get(&key).copied() {
            if w.at <= w.end && w.end <= out.len() {
                out.push(b'"');
                let at = out.len();
                out.extend_from_within(w.at..w.end);
                out.push(b'"');
                *last = Some(LastMessage {
                    text: s.as_bytes(),
                    at,
                    clean: w.clean,
                    clean_at: at + w.clean_from_at,
                });
                return;
            }
        }
        LastMessage::push(last, out, s);
        if let Some(m) = last.as_ref() {
            let written = Written {
                at: m.at,
                end: out.len().saturating_sub(1),
                clean: m.clean,
                clean_from_at: m.clean_at.saturating_sub(m.at),
            };
            self.0.insert(key, written);
        }
    }
}

/// The JSON text of the shared texts (code, sub-code, location) the previous issue wrote,
/// as ranges of the buffer: sorted issues come in runs that share them, so a text equal to
/// the previous one (the same shared copy) is copied from the buffer instead of escaped
/// again. Likewise the previous message ([`LastMessage`]), when the next one begins alike.
#[derive(Default)]
pub(crate) struct Recent<'a> {
    last: [Option<(&'a Sym, std::ops::Range<usize>)>; 3],
    message: Option<LastMessage<'a>>,
    shared: SharedMessages,
    /// The previous issue and the text of its fields up to its location: the same for the
    /// next issue when it shares code, sub-code, severity and location (one copy then).
    head: Option<(&'a Issue, std::ops::Range<usize>)>,
}

impl<'a> Recent<'a> {
    fn push(&mut self, out: &mut Vec<u8>, slot: usize, s: &'a Sym) {
        if let Some(Some((prev, range))) = self.last.get(slot) {
            if prev.same(s) {
                let range = range.clone();
                let start = out.len();
                out.extend_from_within(range);
                self.last[slot] = Some((s, start..out.len()));
                return;
            }
        }
        let start = out.len();
        push_str(out, s);
        if let Some(entry) = self.last.get_mut(slot) {
            *entry = Some((s, start..out.len()));
        }
    }
}

/// The decimal digits of `n`, written into the end of `buf` (what `write!` gives, without
/// the formatter).
pub(crate) fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Appends `n` in decimal.
pub(crate) fn push_uint(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(decimal(n, &mut [0u8; 20]));
}

/// Appends the issue as one compact JSON object, the bytes of
/// `serde_json::to_writer(IssueView { issue, fallback_message })`.
#[cfg(test)]
pub(crate) fn push_issue(out: &mut Vec<u8>, issue: &Issue, fallback_message: Option<&str>) {
    push_issue_after(out, issue, fallback_message, &mut Recent::default());
}

/// [`push_issue`], reusing the text of the previous issue's shared texts and message from
/// `recent` (which must have been filled by writes into this same `out`).
pub(crate) fn push_issue_after<'a>(
    out: &mut Vec<u8>,
    issue: &'a Issue,
    fallback_message: Option<&'a str>,
    recent: &mut Recent<'a>,
) {
    let start = out.len();
    match &recent.head {
        Some((prev, range))
            if prev.code().same(issue.code())
                && prev.sub_code().same(issue.sub_code())
                && prev.location.same(&issue.location)
                && prev.severity == issue.severity =>
        {
            out.extend_from_within(range.clone());
        }
        _ => {
            out.extend_from_slice(b"{\"code\":");
            recent.push(out, 0, issue.code());
            out.extend_from_slice(b",\"subCode\":");
            recent.push(out, 1, issue.sub_code());
            out.extend_from_slice(match issue.severity {
                Severity::Error => b",\"severity\":\"error\",\"location\":",
                Severity::Warning => b",\"severity\":\"warning\",\"location\":",
                Severity::Ignore => b",\"severity\":\"ignore\",\"location\":",
            });
            recent.push(out, 2, &issue.location);
        }
    }
    recent.head = Some((issue, start..out.len()));
    match (issue.issue_message(), fallback_message) {
        (Some(m), _) => {
            out.extend_from_slice(b",\"issueMessage\":");
            LastMessage::push(&mut recent.message, out, m);
        }
        (None, Some(m)) => {
            out.extend_from_slice(b",\"issueMessage\":");
            recent.shared.push(&mut recent.message, out, m);
        }
        (None, None) => {}
    }
    if let Some(rule) = issue.rule_id() {
        out.extend_from_slice(b",\"rule\":");
        push_str(out, rule);
    }
    if let Some(line) = issue.line_number() {
        out.extend_from_slice(b",\"line\":");
        push_uint(out, line as u64);
    }
    let affects = issue.affects();
    if !affects.is_empty() {
        out.extend_from_slice(b",\"affects\":[");
        for (i, a) in affects.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_str(out, a);
        }
        out.push(b']');
    }
    if issue.fixable {
        out.extend_from_slice(b",\"fixable\":true");
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::issue::IssueView;

    fn serde_str(s: &str) -> Vec<u8> {
        serde_json::to_vec(s).unwrap()
    }

    fn ours(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        push_str(&mut out, s);
        out
    }

    /// Every ASCII character alone and at each position of a 20-byte text (both sides
    /// of the 8-byte words), and multi-byte characters beside escapes.
    #[test]
    fn strings_escape_as_serde_json() {
        let mut cases: Vec<String> = Vec::new();
        for c in (0u8..0x80).map(char::from) {
            cases.push(c.to_string());
            for at in 0..20 {
                let mut s: String = "abcdefghijklmnopqrst".into();
                s.insert(at, c);
                cases.push(s);
            }
        }
        cases.extend(
            [
                "",
                "é\"ü\\\u{1}€\n😀",
                "\u{7f}\u{80}\u{ff}",
                "[SIDECAR_KEY_MISSING] value \"11\" of column \"value\" (TSV line 934)",
                "\"\"\"\"\"\"\"\"\"",
                "\\\\\\\\\\\\\\\\x",
            ]
            .map(String::from),
        );
        for s in &cases {
            assert_eq!(ours(s), serde_str(s), "{s:?}");
        }
    }

    /// A run of issues sharing codes and locations (the same shared copies, and equal
    /// texts in other copies), written into one buffer: serde's bytes for each.
    #[test]
    fn shared_texts_are_copied_right() {
        let here = Sym::from("/sub-01/\"e\".tsv");
        let other = Sym::from("/sub-01/\"e\".tsv");
        let list = [
            Issue::new("A", Severity::Error, &here).sub("x\ty"),
            Issue::new("A", Severity::Error, &here).sub("x\ty").line(3),
            Issue::new("A", Severity::Warning, &other).sub("x\ty"),
            Issue::new("B", Severity::Warning, &other),
            Issue::new("B", Severity::Warning, &here).message("m"),
            Issue::new("A", Severity::Warning, &here).sub("z"),
        ];
        let mut got = Vec::new();
        let mut recent = Recent::default();
        let mut want = Vec::new();
        for (i, issue) in list.iter().enumerate() {
            if i > 0 {
                got.push(b',');
                want.push(b',');
            }
            push_issue_after(&mut got, issue, None, &mut recent);
            want.extend(serde_json::to_vec(issue).unwrap());
        }
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
    }

    /// Runs of messages written one after another, each from the previous one where they
    /// begin alike: common prefixes of every length (below, at and above the threshold,
    /// ending before, on and after escapes), escapes in the differing tail or none, texts
    /// that are prefixes of one another, multi-byte characters split by the prefix.
    #[test]
    fn message_runs_escape_as_serde_json() {
        let stems = [
            "[SIDECAR_KEY_MISSING] value \"10\" of column \"value\" has no HED annotation",
            "plain text without anything to escape, long enough to share",
            "tab\there and a quote \" then é€😀 and a long plain tail to share",
            "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"",
        ];
        let tails = [
            "",
            " (TSV line 2)",
            " (TSV line 10)",
            "\"x\"",
            "\n",
            "é",
            "\\ (line 3)",
        ];
        let mut texts: Vec<String> = Vec::new();
        for stem in stems {
            for cut in (0..=stem.len()).filter(|&c| stem.is_char_boundary(c)) {
                for tail in tails {
                    texts.push(format!("{}{tail}", &stem[..cut]));
                }
            }
        }
        let mut got = Vec::new();
        let mut want = Vec::new();
        let mut last = None;
        // Each text after every text of its neighbourhood (and the whole list in order).
        let mut order: Vec<usize> = (0..texts.len()).collect();
        for i in 0..texts.len() {
            order.push(i);
            order.push((i * 7 + 3) % texts.len());
        }
        for &i in &order {
            got.push(b',');
            want.push(b',');
            LastMessage::push(&mut last, &mut got, &texts[i]);
            want.extend(serde_str(&texts[i]));
        }
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
        assert_eq!(got, want);
    }

    /// Fallback messages of a few shared texts (escapes at either end, one the prefix of
    /// another, one equal in text to another but a copy of its own) in turn with own
    /// messages that begin like them: serde's bytes for each issue, in one buffer.
    #[test]
    fn shared_messages_escape_as_serde_json() {
        let shared = [
            "Field description: a \"key\"\nover two lines".to_string(),
            "Field description: a \"key\"\nover two lines, and more".to_string(),
            "\nstarts with a line break and ends with a quote\"".to_string(),
            "Field description: a \"key\"\nover two lines".to_string(),
            "no escape at all in this one, long enough to share".to_string(),
        ];
        let own = [
            "Field description: a \"key\"\nover two lines (own)",
            "no escape at all in this one, long enough to share\t",
            "x",
        ];
        let here = Sym::from("/sub-01/anat/sub-01_T1w.nii.gz");
        let mut list: Vec<(Issue, Option<&str>)> = Vec::new();
        for i in 0..60 {
            let issue = Issue::new("SIDECAR_KEY_RECOMMENDED", Severity::Warning, &here)
                .sub(format!("K{}", i % 4));
            list.push(match i % 7 {
                3 => (issue.message(own[i % own.len()]), None),
                5 => (issue, None),
                _ => (issue, Some(shared[(i * 3) % shared.len()].as_str())),
            });
        }
        let mut got = Vec::new();
        let mut want = Vec::new();
        let mut recent = Recent::default();
        for (i, (issue, fallback)) in list.iter().enumerate() {
            if i > 0 {
                got.push(b',');
                want.push(b',');
            }
            push_issue_after(&mut got, issue, *fallback, &mut recent);
            let view = IssueView {
                issue,
                fallback_message: *fallback,
            };
            want.extend(serde_json::to_vec(&view).unwrap());
        }
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
        // Each shared text was escaped once and then copied.
        assert_eq!(recent.shared.0.len(), shared.len());
    }

    #[test]
    fn common_prefixes() {
        let a = b"abcdefghijklmnopqrstuvwxyz";
        for n in 0..=a.len() {
            for m in 0..=a.len() {
                let mut b = a[..m].to_vec();
                if n < m {
                    b[n] = b'!';
                }
                assert_eq!(common_prefix(&a[..], &b), n.min(m), "{n} {m}");
            }
        }
    }

    #[test]
    fn numbers_are_decimal() {
        for n in [0u64, 7, 10, 99, 100, 12345, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            push_uint(&mut out, n);
            assert_eq!(out, n.to_string().into_bytes());
        }
    }

    /// Each optional part present and absent, every severity, with and without a
    /// fallback message.
    #[test]
    fn issues_write_as_serde_json() {
        for severity in [Severity::Error, Severity::Warning, Severity::Ignore] {
            for parts in 0..32u32 {
                let mut issue = Issue::new("CODE_\"X\"", severity, "/sub-01/a\tb.tsv");
                if parts & 1 != 0 {
                    issue = issue.sub("col\\1");
                }
                if parts & 2 != 0 {
                    issue = issue.message("line\none");
                }
                if parts & 4 != 0 {
                    issue = issue.rule("rules.x.Y");
                }
                if parts & 8 != 0 {
                    issue = issue.line(1234);
                }
                if parts & 16 != 0 {
                    issue.extra_mut().affects = vec!["/a".into(), "/b\"c".into()];
                    issue.fixable = true;
                }
                for fallback in [None, Some("Field description: \u{2}")] {
                    let mut got = Vec::new();
                    push_issue(&mut got, &issue, fallback);
                    let view = IssueView {
                        issue: &issue,
                        fallback_message: fallback,
                    };
                    let want = serde_json::to_vec(&view).unwrap();
                    assert_eq!(
                        String::from_utf8_lossy(&got),
                        String::from_utf8_lossy(&want)
                    );
                }
            }
        }
    }
}
