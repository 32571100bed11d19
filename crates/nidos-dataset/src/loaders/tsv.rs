//! Tab-separated tables (`.tsv`, `.tsv.gz`): no quoting, every cell a string (`n/a` included),
//! LF or CRLF line ends, an optional UTF-8 byte-order mark (dropped, as the reference does).
//!
//! Reading is streamed: memory is bounded by [`TsvOptions::max_rows`] kept rows plus one line
//! (itself capped at [`MAX_LINE_BYTES`]). Rows past the limit are still read, counted into
//! [`Table::n_rows`], and checked (encoding, column count, empty lines), but not kept.
//! Kept rows are held compactly (see [`Table`]): their cells' text once, plus four bytes a
//! cell, so a table takes about its file's size (docs/reliability.md).

use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;

use super::text::{line_col, UTF8_BOM};
use super::{LoadIssue, Loaded};

/// The text is not UTF-8.
pub const INVALID_FILE_ENCODING: &str = "INVALID_FILE_ENCODING";
/// An empty line before the end of the file (one trailing empty line is allowed).
pub const TSV_EMPTY_LINE: &str = "TSV_EMPTY_LINE";
/// A row whose number of cells differs from the number of columns.
pub const TSV_EQUAL_ROWS: &str = "TSV_EQUAL_ROWS";
/// Two header cells are equal.
pub const TSV_COLUMN_HEADER_DUPLICATE: &str = "TSV_COLUMN_HEADER_DUPLICATE";
/// A generic table problem (a line longer than [`MAX_LINE_BYTES`]).
pub const TSV_ERROR: &str = "TSV_ERROR";
/// A `.gz` file that does not start with the gzip magic bytes.
pub const GZ_NOT_GZIPPED: &str = "GZ_NOT_GZIPPED";
/// A gzip stream that fails to inflate.
pub const INVALID_GZIP: &str = "INVALID_GZIP";
/// The reader failed.
pub const FILE_READ: &str = "FILE_READ";

/// Longest line accepted; longer lines are reported rather than buffered.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How to read a table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TsvOptions {
    /// Keep at most this many data rows (all rows are still checked and counted).
    pub max_rows: Option<usize>,
}

impl TsvOptions {
    /// Keep every row.
    pub fn all() -> Self {
        TsvOptions { max_rows: None }
    }

    /// Keep at most `n` rows.
    pub fn max_rows(n: usize) -> Self {
        TsvOptions { max_rows: Some(n) }
    }
}

/// A table, held compactly: the kept cells' text once, concatenated row by row, and where
/// each cell ends in it (four bytes a cell). Cells are handed out as `&str`; a column is
/// made into a context value ([`Table::column_value`]) only when something asks for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// Column names in file order (unique, except in a headerless table whose sidecar
    /// names a column twice).
    pub headers: Vec<String>,
    /// The kept cells' text, row after row, without separators.
    text: String,
    /// Where each kept cell ends in `text`, row by row (a cell starts where the one
    /// before it ends).
    ends: Vec<u32>,
    /// Number of data rows in the file (kept or not).
    pub n_rows: usize,
    /// True when rows beyond `max_rows` (or past what a table may hold, 4 GiB of
    /// text) were dropped.
    pub truncated: bool,
}

/// One column of a [`Table`]: its cells, top to bottom.
#[derive(Clone, Copy, Debug)]
pub struct Column<'a> {
    table: &'a Table,
    index: usize,
}

impl<'a> Column<'a> {
    /// Number of kept cells.
    pub fn len(&self) -> usize {
        self.table.kept_rows()
    }

    /// True when no row is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cell of row `row` (0 is the first data row).
    pub fn get(&self, row: usize) -> Option<&'a str> {
        self.table.cell(row, self.index)
    }

    /// The cells, top to bottom.
    pub fn iter(&self) -> impl Iterator<Item = &'a str> + 'a {
        let (table, index) = (self.table, self.index);
        (0..table.kept_rows()).map(move |r| table.cell(r, index).unwrap_or_default())
    }
}

impl Table {
    /// A table of the given rows (each as long as `headers`; shorter rows are padded
    /// with empty cells, longer ones cut). For tests and hand-made tables.
    pub fn from_rows<R, C>(headers: Vec<String>, rows: R) -> Table
    where
        R: IntoIterator<Item = Vec<C>>,
        C: AsRef<str>,
    {
        let mut t = Table {
            headers,
            ..Table::default()
        };
        for row in rows {
            let cells = (0..t.headers.len()).map(|i| row.get(i).map_or("", |c| c.as_ref()));
            if !t.push_row(cells) {
                t.truncated = true;
            }
            t.n_rows += 1;
        }
        t
    }

    /// Appends one kept row; false (and nothing kept) when the text would pass what
    /// four-byte offsets reach.
    fn push_row<'c>(&mut self, cells: impl Iterator<Item = &'c str> + Clone) -> bool {
        let len: usize = cells.clone().map(str::len).sum();
        if u32::try_from(self.text.len() + len).is_err() {
            return false;
        }
        for cell in cells {
            self.text.push_str(cell);
            self.ends
                .push(u32::try_from(self.text.len()).unwrap_or(u32::MAX));
        }
        true
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.headers.len()
    }

    /// Number of rows kept.
    pub fn kept_rows(&self) -> usize {
        self.ends.len().checked_div(self.n_cols()).unwrap_or(0)
    }

    /// The cell at `row`, `col`.
    pub fn cell(&self, row: usize, col: usize) -> Option<&str> {
        if col >= self.n_cols() {
            return None;
        }
        let at = row.checked_mul(self.n_cols())?.checked_add(col)?;
        let end = *self.ends.get(at)? as usize;
        let start = match at.checked_sub(1) {
            Some(before) => self.ends.get(before).map_or(0, |e| *e as usize),
            None => 0,
        };
        // Cells end on character boundaries (each was a whole `&str`).
        self.text.get(start..end)
    }

    /// The column at position `index`.
    pub fn column_at(&self, index: usize) -> Option<Column<'_>> {
        (index < self.n_cols()).then_some(Column { table: self, index })
    }

    /// The first column named `name`.
    pub fn column(&self, name: &str) -> Option<Column<'_>> {
        let i = self.headers.iter().position(|h| h == name)?;
        self.column_at(i)
    }

    /// The column the `columns` object holds under `name` (the last of that name, as
    /// when the object is built header by header).
    pub fn object_column(&self, name: &str) -> Option<Column<'_>> {
        let i = self.headers.iter().rposition(|h| h == name)?;
        self.column_at(i)
    }

    /// Estimated heap size: the text, four bytes a cell, the headers.
    pub fn approx_bytes(&self) -> usize {
        let headers: usize = self.headers.iter().map(|h| h.len() + 32).sum();
        self.text.capacity() + 4 * self.ends.capacity() + headers
    }

    /// A column as a context value: an array of its cells (strings). Equal cells share
    /// one text where that is cheap to find (a column of few distinct texts, or a cell
    /// equal to the one above).
    pub fn column_value(&self, col: Column<'_>) -> nidos_expr::Value {
        use nidos_expr::Value;
        let mut dict = Dict::default();
        let mut above: Option<Arc<str>> = None;
        let cells = col
            .iter()
            .enumerate()
            .map(|(r, cell)| {
                let text = dict.share(cell, r + 1, above.as_ref());
                above = Some(text.clone());
                Value::String(text)
            })
            .collect();
        Value::array(cells)
    }

    /// The `columns` context field whole: an object from header to the array of its
    /// cells (strings). Rules reading one column get it alone (see [`Table::column_value`]).
    pub fn to_value(&self) -> nidos_expr::Value {
        use nidos_expr::Value;
        let mut obj =
            nidos_expr::Object::with_capacity_and_hasher(self.headers.len(), Default::default());
        for (i, h) in self.headers.iter().enumerate() {
            if let Some(col) = self.column_at(i) {
                obj.insert(h.clone(), self.column_value(col));
            }
        }
        Value::object(obj)
    }

    /// Per column, when it holds few distinct cells (levels, `n/a`): each kept row's code,
    /// the rank of its text among the column's distinct texts in order of first appearance
    /// (0 for the first row's, then 1 for the next new text…). `None` for a column whose
    /// cells keep differing (onsets, counters). Computed for each call.
    pub fn codes(&self) -> Vec<Option<Vec<u32>>> {
        (0..self.n_cols())
            .filter_map(|i| self.column_at(i))
            .map(|col| {
                let mut dict = Dict::default();
                for (r, cell) in col.iter().enumerate() {
                    dict.share(cell, r + 1, None);
                    if dict.given_up {
                        break;
                    }
                }
                dict.into_codes()
            })
            .collect()
    }
}

/// Reads a table whose first line is the header.
pub fn read_tsv(reader: impl Read, opts: &TsvOptions) -> Result<Loaded<Table>, LoadIssue> {
    let mut r = BufReader::with_capacity(64 * 1024, reader);
    parse(&mut r, None, opts, Source::Plain).map(Loaded::clean)
}

/// Reads a gzip-compressed table whose first line is the header.
pub fn read_tsv_gz(reader: impl Read, opts: &TsvOptions) -> Result<Loaded<Table>, LoadIssue> {
    with_gunzip(reader, |r| parse(r, None, opts, Source::Gzip))
}

/// Reads a table without a header row (e.g. `_physio.tsv.gz`, `_stim.tsv.gz`, whose columns
/// the sidecar's `Columns` names). The first line is data, line numbers start at 1.
pub fn read_tsv_headerless(
    reader: impl Read,
    columns: &[String],
    opts: &TsvOptions,
) -> Result<Loaded<Table>, LoadIssue> {
    let mut r = BufReader::with_capacity(64 * 1024, reader);
    parse(&mut r, Some(columns), opts, Source::Plain).map(Loaded::clean)
}

/// Reads a gzip-compressed table without a header row; see [`read_tsv_headerless`].
pub fn read_tsv_gz_headerless(
    reader: impl Read,
    columns: &[String],
    opts: &TsvOptions,
) -> Result<Loaded<Table>, LoadIssue> {
    with_gunzip(reader, |r| parse(r, Some(columns), opts, Source::Gzip))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Plain,
    Gzip,
}

fn with_gunzip<R: Read>(
    mut reader: R,
    f: impl FnOnce(&mut dyn BufRead) -> Result<Table, LoadIssue>,
) -> Result<Loaded<Table>, LoadIssue> {
    let mut magic = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        let rest = magic.get_mut(got..).unwrap_or(&mut []);
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(LoadIssue::error(FILE_READ, format!("read failed: {e}"))),
        }
    }
    if got < 2 || magic != [0x1F, 0x8B] {
        return Err(LoadIssue::error(
            GZ_NOT_GZIPPED,
            "the file has a .gz extension but is not gzip-compressed",
        ));
    }
    let chained = io::Cursor::new(magic).chain(reader);
    let decoder = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(32 * 1024, chained));
    let mut r = BufReader::with_capacity(64 * 1024, decoder);
    f(&mut r).map(Loaded::clean)
}

fn read_error(e: io::Error, source: Source) -> LoadIssue {
    match source {
        Source::Gzip => LoadIssue::error(INVALID_GZIP, format!("the gzip stream is corrupt: {e}")),
        Source::Plain => LoadIssue::error(FILE_READ, format!("read failed: {e}")),
    }
}

/// Reads one line (with its `\n`, if any) into `buf`; returns false at end of input.
fn read_line(r: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<bool> {
    buf.clear();
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(!buf.is_empty());
        }
        match memchr::memchr(b'\n', avail) {
            Some(i) => {
                buf.extend_from_slice(avail.get(..=i).unwrap_or(avail));
                r.consume(i + 1);
                return Ok(true);
            }
            None => {
                let n = avail.len();
                buf.extend_from_slice(avail);
                r.consume(n);
            }
        }
        if buf.len() > MAX_LINE_BYTES {
            return Err(io::Error::other(LineTooLong));
        }
    }
}

#[derive(Debug)]
struct LineTooLong;

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line longer than {MAX_LINE_BYTES} bytes")
    }
}

impl std::error::Error for LineTooLong {}

fn utf8_line(buf: &[u8], line: usize) -> Result<&str, LoadIssue> {
    std::str::from_utf8(buf).map_err(|e| {
        let at = e.valid_up_to();
        let (_, column) = line_col(buf, at);
        let b = buf.get(at).copied().unwrap_or(0);
        LoadIssue::error(
            INVALID_FILE_ENCODING,
            format!("invalid UTF-8 byte 0x{b:02X}; TSV files must be UTF-8"),
        )
        .at(line, column)
    })
}

fn parse(
    r: &mut dyn BufRead,
    header: Option<&[String]>,
    opts: &TsvOptions,
    source: Source,
) -> Result<Table, LoadIssue> {
    let max_rows = opts.max_rows.unwrap_or(usize::MAX);
    let mut buf: Vec<u8> = Vec::with_capacity(256);
    let mut table = Table::default();
    let mut line_no = 0usize;
    let mut have_header = false;
    if let Some(cols) = header {
        table.headers = cols.to_vec();
        have_header = true;
    }
    let mut pending_empty: Option<usize> = None;
    let mut ends: Vec<usize> = Vec::new();
    // Set once a row could not be kept (the text reached 4 GiB): later rows are not kept.
    let mut full = false;
    loop {
        let more = read_line(r, &mut buf).map_err(|e| {
            if e.get_ref().is_some_and(|inner| inner.is::<LineTooLong>()) {
                LoadIssue::error(TSV_ERROR, e.to_string()).at_line(line_no + 1)
            } else {
                read_error(e, source)
            }
        })?;
        if !more {
            break;
        }
        line_no += 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        let mut line: &[u8] = &buf;
        if line_no == 1 {
            line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
        }
        if !have_header {
            have_header = true;
            let text = utf8_line(line, line_no)?;
            if !text.is_empty() {
                table.headers = text.split('\t').map(str::to_owned).collect();
            }
            check_duplicates(&table.headers)?;
            continue;
        }
        if let Some(l) = pending_empty {
            return Err(LoadIssue::error(TSV_EMPTY_LINE, "empty line in the table").at_line(l));
        }
        if line.is_empty() {
            pending_empty = Some(line_no);
            continue;
        }
        let text = utf8_line(line, line_no)?;
        if full || table.n_rows >= max_rows {
            // A row past those kept: only its cell count is checked.
            let n_cells = count_tabs(line) + 1;
            if n_cells != table.headers.len() {
                return Err(unequal_row(n_cells, table.headers.len(), line_no));
            }
            table.truncated = true;
            table.n_rows += 1;
            continue;
        }
        // Where each cell ends: one pass over the line for the count and the cells.
        ends.clear();
        // (Cells are short: a plain loop beats starting `memchr` for each one.)
        ends.extend((0..line.len()).filter(|&i| line.get(i) == Some(&b'\t')));
        ends.push(line.len());
        let n_cells = ends.len();
        if n_cells != table.headers.len() {
            return Err(unequal_row(n_cells, table.headers.len(), line_no));
        }
        // A tab is one byte and never inside a character: these are boundaries.
        let starts = std::iter::once(0).chain(ends.iter().map(|e| e + 1));
        let cells = starts
            .zip(ends.iter())
            .map(|(start, &end)| text.get(start..end).unwrap_or_default());
        if !table.push_row(cells) {
            full = true;
            table.truncated = true;
        }
        table.n_rows += 1;
    }
    Ok(table)
}

/// A column's distinct cells (see [`Table::codes`]).
#[derive(Default)]
struct Dict {
    codes: Vec<u32>,
    /// Each distinct text met, with its code (the number of texts before it).
    by_text: foldhash::HashMap<Arc<str>, u32>,
    given_up: bool,
}

impl Dict {
    /// Distinct texts a column may have before the check below starts.
    const FEW: usize = 64;

    /// The text of `cell`, the `rows`-th kept cell of the column: shared with an equal
    /// earlier cell of a coded column, or with the cell above it.
    fn share(&mut self, cell: &str, rows: usize, above: Option<&Arc<str>>) -> Arc<str> {
        if self.given_up {
            let same = above.filter(|a| ***a == *cell).cloned();
            return same.unwrap_or_else(|| Arc::from(cell));
        }
        if let Some((text, &code)) = self.by_text.get_key_value(cell) {
            self.codes.push(code);
            return text.clone();
        }
        let text: Arc<str> = Arc::from(cell);
        let distinct = self.by_text.len();
        // More distinct texts than half the rows: not a column of levels.
        if distinct >= Self::FEW && distinct * 2 >= rows {
            *self = Dict {
                given_up: true,
                ..Dict::default()
            };
            return text;
        }
        let code = u32::try_from(distinct).unwrap_or(u32::MAX);
        self.by_text.insert(text.clone(), code);
        self.codes.push(code);
        text
    }

    fn into_codes(self) -> Option<Vec<u32>> {
        (!self.given_up).then_some(self.codes)
    }
}

/// The number of tabs in `line`, counted in byte-sized sums of at most 255 bytes (which
/// the compiler turns into wide vector additions).
fn count_tabs(line: &[u8]) -> usize {
    line.chunks(255)
        .map(|chunk| {
            let n = chunk
                .iter()
                .fold(0u8, |n, &b| n.wrapping_add(u8::from(b == b'\t')));
            usize::from(n)
        })
        .sum()
}

/// A row whose cell count is not the header's.
fn unequal_row(n_cells: usize, n_columns: usize, line_no: usize) -> LoadIssue {
    LoadIssue::error(
        TSV_EQUAL_ROWS,
        format!("row has {n_cells} cells but the table has {n_columns} columns"),
    )
    .at_line(line_no)
}

fn check_duplicates(headers: &[String]) -> Result<(), LoadIssue> {
    let mut seen = std::collections::HashSet::with_capacity(headers.len());
    let mut dups: Vec<&str> = Vec::new();
    for h in headers {
        if !seen.insert(h.as_str()) && !dups.contains(&h.as_str()) {
            dups.push(h);
        }
    }
    if dups.is_empty() {
        Ok(())
    } else {
        Err(LoadIssue::error(
            TSV_COLUMN_HEADER_DUPLICATE,
            format!("duplicate column headers: {}", dups.join(", ")),
        )
        .at_line(1))
    }
}
