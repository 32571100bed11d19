//! The gzip member header (RFC 1952): modification time, original file name, comment.
//! Produces the `gzip` context field from a prefix of the compressed file; nothing is inflated.

use nidos_expr::{Object, Value};

use super::LoadIssue;

/// The file does not start with the gzip magic bytes.
pub const GZ_NOT_GZIPPED: &str = "GZ_NOT_GZIPPED";
/// The header is malformed or does not fit in the prefix given.
pub const INVALID_GZIP: &str = "INVALID_GZIP";

const FTEXT: u8 = 0x01;
const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;

/// The fields of a gzip header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GzipHeader {
    /// `MTIME`: seconds since the Unix epoch, 0 when not recorded.
    pub mtime: u32,
    /// `FNAME`, when present.
    pub filename: Option<String>,
    /// `FCOMMENT`, when present.
    pub comment: Option<String>,
    /// `FTEXT` flag.
    pub text: bool,
    /// `XFL` (compression level hint).
    pub extra_flags: u8,
    /// `OS` byte.
    pub os: u8,
    /// Length of the header in bytes (where the deflate data starts).
    pub header_len: usize,
}

/// Parses the header at the start of `prefix`. A few hundred bytes suffice unless the name or
/// comment is long; a header that runs past the prefix is reported as `INVALID_GZIP`.
pub fn read_gzip_header(prefix: &[u8]) -> Result<GzipHeader, LoadIssue> {
    let invalid = |why: &str| LoadIssue::error(INVALID_GZIP, why.to_string());
    match prefix {
        [0x1F, 0x8B, ..] => {}
        _ => {
            return Err(LoadIssue::error(
                GZ_NOT_GZIPPED,
                "the file is not gzip-compressed (no gzip magic bytes)",
            ))
        }
    }
    let fixed = prefix
        .get(..10)
        .ok_or_else(|| invalid("the gzip header is truncated"))?;
    let mut b = [0u8; 10];
    b.copy_from_slice(fixed);
    if b[2] != 8 {
        return Err(invalid(&format!(
            "unknown gzip compression method {} (only deflate, 8, exists)",
            b[2]
        )));
    }
    let flags = b[3];
    if flags & 0xE0 != 0 {
        return Err(invalid("reserved gzip header flags are set"));
    }
    let mtime = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    let mut at = 10usize;
    if flags & FEXTRA != 0 {
        let len = prefix
            .get(at..at + 2)
            .map(|s| usize::from(u16::from_le_bytes([s[0], s[1]])))
            .ok_or_else(|| invalid("the gzip extra field is truncated"))?;
        at = at
            .checked_add(2 + len)
            .filter(|&end| end <= prefix.len())
            .ok_or_else(|| invalid("the gzip extra field is truncated"))?;
    }
    let mut zstring = |what: &str| -> Result<String, LoadIssue> {
        let rest = prefix.get(at..).unwrap_or(&[]);
        let end = memchr::memchr(0, rest)
            .ok_or_else(|| invalid(&format!("the gzip {what} is unterminated or truncated")))?;
        let raw = rest.get(..end).unwrap_or(&[]);
        at += end + 1;
        Ok(decode_text(raw))
    };
    let filename = if flags & FNAME != 0 {
        Some(zstring("file name")?)
    } else {
        None
    };
    let comment = if flags & FCOMMENT != 0 {
        Some(zstring("comment")?)
    } else {
        None
    };
    if flags & FHCRC != 0 {
        at += 2;
        if at > prefix.len() {
            return Err(invalid("the gzip header CRC is truncated"));
        }
    }
    Ok(GzipHeader {
        mtime,
        filename,
        comment,
        text: flags & FTEXT != 0,
        extra_flags: b[8],
        os: b[9],
        header_len: at,
    })
}

/// RFC 1952 says ISO 8859-1, but tools write the platform's bytes (UTF-8 today): take UTF-8
/// when it is valid, Latin-1 otherwise.
fn decode_text(raw: &[u8]) -> String {
    match std::str::from_utf8(raw) {
        Ok(s) => s.to_owned(),
        Err(_) => raw.iter().map(|&c| char::from(c)).collect(),
    }
}

impl GzipHeader {
    /// The `gzip` context value: `timestamp`, and `filename` / `comment` when present.
    pub fn to_value(&self) -> Value {
        let mut o = Object::default();
        o.insert("timestamp".into(), Value::Number(f64::from(self.mtime)));
        if let Some(f) = &self.filename {
            o.insert("filename".into(), Value::str(f.as_str()));
        }
        if let Some(c) = &self.comment {
            o.insert("comment".into(), Value::str(c.as_str()));
        }
        Value::object(o)
    }
}
