//! Positions in a document: byte offsets (what the parsers give) and the protocol's
//! line/character pairs (characters counted in UTF-16 code units, the protocol's
//! default encoding).

use lsp_types::{Position, Range};

/// Where each line of a text starts, for converting between offsets and positions.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    /// The position of byte `offset` (clamped to the text; an offset inside a
    /// multi-byte character counts from that character's start).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let upto = floor_char_boundary(text, offset);
        let character = text
            .get(start..upto.max(start))
            .map(|s| s.encode_utf16().count())
            .unwrap_or(0);
        Position::new(line as u32, character as u32)
    }

    /// The range of bytes `start..end`.
    pub fn range(&self, text: &str, start: usize, end: usize) -> Range {
        Range::new(self.position(text, start), self.position(text, end))
    }

    /// The byte offset of `pos` (clamped to its line's end and to the text).
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .copied()
            .unwrap_or(text.len());
        let line = text.get(start..end).unwrap_or("");
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= pos.character || c == '\n' || c == '\r' {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }

    /// The bytes of line `n` without its line end (`None` past the last line).
    pub fn line<'t>(&self, text: &'t str, n: usize) -> Option<(usize, &'t str)> {
        let start = *self.starts.get(n)?;
        let end = self.starts.get(n + 1).copied().unwrap_or(text.len());
        let line = text.get(start..end)?;
        Some((start, line.trim_end_matches(['\n', '\r'])))
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_multibyte_text() {
        let text = "{\n  \"Name\": \"µ𝄞x\"\r\n}";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap();
        let pos = idx.position(text, x);
        // µ is one UTF-16 unit, 𝄞 two.
        assert_eq!(pos, Position::new(1, 14));
        assert_eq!(idx.offset(text, pos), x);
        assert_eq!(idx.line(text, 1).unwrap().1, "  \"Name\": \"µ𝄞x\"");
        assert_eq!(idx.offset(text, Position::new(9, 0)), text.len());
        assert_eq!(idx.offset(text, Position::new(0, 99)), 1);
    }
}
