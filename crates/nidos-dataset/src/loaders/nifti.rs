//! NIfTI-1 and NIfTI-2 headers, either byte order, from a prefix of the (decompressed) file.
//!
//! Produces the `nifti_header` context field. Orientation (`axis_codes`) follows the rules
//! nibabel uses: the affine is the sform when `sform_code > 0`, else the qform when
//! `qform_code > 0`, else the base (Analyze) affine from the voxel sizes; each voxel axis is
//! labelled with the world direction it points to most, after reducing the affine's rotation
//! and zooms to the nearest orthogonal matrix.

use std::io::Read;

use nidos_expr::{Object, Value};

use super::bytes::Bytes;
use super::LoadIssue;

/// The header cannot be parsed (too short, not NIfTI, bad gzip…).
pub const NIFTI_HEADER_UNREADABLE: &str = "NIFTI_HEADER_UNREADABLE";

/// Size of a NIfTI-1 header.
pub const NIFTI1_HEADER_SIZE: usize = 348;
/// Size of a NIfTI-2 header.
pub const NIFTI2_HEADER_SIZE: usize = 540;
/// Largest prefix [`read_nifti_header_gz`] inflates (header plus extensions such as NIfTI-MRS).
pub const MAX_GZ_PREFIX: usize = 1024 * 1024;
/// Extension code of NIfTI-MRS JSON headers.
pub const MRS_EXTENSION_CODE: i32 = 44;

/// NIfTI format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NiftiVersion {
    One,
    Two,
}

/// The header fields the standard's rules read, widened to common types.
#[derive(Clone, Debug, PartialEq)]
pub struct NiftiHeader {
    pub version: NiftiVersion,
    pub little_endian: bool,
    /// Raw `dim_info` byte: freq in bits 0–1, phase in 2–3, slice in 4–5 (each 0 = unknown, else 1–3).
    pub dim_info: u8,
    pub dim: [i64; 8],
    pub pixdim: [f64; 8],
    /// Raw `xyzt_units` code.
    pub xyzt_units: i32,
    pub qform_code: i32,
    pub sform_code: i32,
    /// `quatern_b, quatern_c, quatern_d`.
    pub quatern: [f64; 3],
    /// `qoffset_x, qoffset_y, qoffset_z`.
    pub qoffset: [f64; 3],
    /// `srow_x, srow_y, srow_z`.
    pub srow: [[f64; 4]; 3],
    pub datatype: i16,
    pub bitpix: i16,
    pub vox_offset: f64,
    pub intent_code: i32,
    pub descrip: String,
    /// The NIfTI-MRS extension's JSON, when the prefix held it.
    pub mrs: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Parses a NIfTI-1 or NIfTI-2 header from the first bytes of an uncompressed file.
/// Extensions that fit in `prefix` are scanned for NIfTI-MRS JSON.
pub fn read_nifti_header(prefix: &[u8]) -> Result<NiftiHeader, LoadIssue> {
    let unreadable = |why: &str| LoadIssue::error(NIFTI_HEADER_UNREADABLE, why.to_string());
    let Some(first) = prefix.get(..4) else {
        return Err(unreadable("the file is too short to hold a NIfTI header"));
    };
    let mut size_bytes = [0u8; 4];
    size_bytes.copy_from_slice(first);
    let le = i32::from_le_bytes(size_bytes);
    let be = i32::from_be_bytes(size_bytes);
    let (version, little) = match (le, be) {
        (348, _) => (NiftiVersion::One, true),
        (_, 348) => (NiftiVersion::One, false),
        (540, _) => (NiftiVersion::Two, true),
        (_, 540) => (NiftiVersion::Two, false),
        _ => return Err(unreadable(
            "not a NIfTI file: the header size field is neither 348 (NIfTI-1) nor 540 (NIfTI-2)",
        )),
    };
    let need = match version {
        NiftiVersion::One => NIFTI1_HEADER_SIZE,
        NiftiVersion::Two => NIFTI2_HEADER_SIZE,
    };
    if prefix.len() < need {
        return Err(unreadable(&format!(
            "the header is truncated: {} of {need} bytes",
            prefix.len()
        )));
    }
    let b = Bytes::new(prefix, little);
    let parsed = match version {
        NiftiVersion::One => parse_v1(&b),
        NiftiVersion::Two => parse_v2(&b),
    };
    let Some(mut header) = parsed else {
        return Err(unreadable("the header is truncated"));
    };
    if !header_magic_ok(&b, version) {
        return Err(unreadable("the NIfTI magic string is missing or wrong"));
    }
    header.mrs = read_mrs_extension(&b, need);
    Ok(header)
}

/// Inflates only the start of a `.nii.gz` stream (at most [`MAX_GZ_PREFIX`] bytes: the header
/// and the extensions before the voxel data) and parses the header.
pub fn read_nifti_header_gz(reader: impl Read) -> Result<NiftiHeader, LoadIssue> {
    read_nifti_header_gz_buffered(std::io::BufReader::with_capacity(8 << 10, reader))
}

/// [`read_nifti_header_gz`] of bytes already in memory (the decoder reads them in
/// place, without a buffer of its own).
pub fn read_nifti_header_gz_bytes(bytes: &[u8]) -> Result<NiftiHeader, LoadIssue> {
    match header_gz_fast(bytes) {
        Some(h) => Ok(h),
        None => read_nifti_header_gz_buffered(bytes),
    }
}

/// The start of the first member's deflate data in a gzip stream, when its header is one
/// the fast path reads (method 8, no header checksum, no reserved flag): `None` sends
/// the stream to the general decoder, which reports whatever is wrong with it.
fn gzip_data_start(b: &[u8]) -> Option<usize> {
    const FEXTRA: u8 = 0x04;
    const FNAME: u8 = 0x08;
    const FCOMMENT: u8 = 0x10;
    let (&[0x1F, 0x8B, 8, flags], _) = b.split_first_chunk::<4>()? else {
        return None;
    };
    if flags & !(FEXTRA | FNAME | FCOMMENT) != 0 {
        return None;
    }
    let mut at = 10usize;
    if flags & FEXTRA != 0 {
        let len = b.get(at..at + 2)?;
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            at += b.get(at..)?.iter().position(|&c| c == 0)? + 1;
        }
    }
    (at <= b.len()).then_some(at)
}

/// Inflates raw deflate `input` into `out[filled..]` (`out[..filled]` holds what the
/// member inflated so far): `Some(None)` when `out` is full; `Some(Some(n))` when the
/// member ends first, after `n` bytes, with a trailer whose checksum and size match and
/// nothing after it (the general decoder then reports nothing and reads no more);
/// `None` for anything else (an error, missing input, more members), which the caller
/// leaves to the general decoder.
fn inflate_into(
    d: &mut flate2::Decompress,
    input: &[u8],
    out: &mut [u8],
    mut filled: usize,
) -> Option<Option<usize>> {
    while filled < out.len() {
        let (in_before, out_before) = (d.total_in(), d.total_out());
        let rest_in = input.get(usize::try_from(in_before).ok()?..)?;
        let rest_out = out.get_mut(filled..)?;
        let status = d
            .decompress(rest_in, rest_out, flate2::FlushDecompress::None)
            .ok()?;
        let produced = usize::try_from(d.total_out() - out_before).ok()?;
        filled += produced;
        match status {
            flate2::Status::Ok => {}
            flate2::Status::StreamEnd => {
                let used = usize::try_from(d.total_in()).ok()?;
                let whole = out.get(..filled)?;
                return member_end_ok(input.get(used..)?, whole).then_some(Some(filled));
            }
            flate2::Status::BufError => return None,
        }
        if produced == 0 && d.total_in() == in_before {
            return None;
        }
    }
    Some(None)
}

/// Whether `rest` (what follows a member's deflate data) is exactly its 8-byte trailer
/// and the trailer's CRC-32 and size match `output`, the member's whole output.
fn member_end_ok(rest: &[u8], output: &[u8]) -> bool {
    let &[c0, c1, c2, c3, s0, s1, s2, s3] = rest else {
        return false;
    };
    let mut crc = flate2::Crc::new();
    crc.update(output);
    crc.sum() == u32::from_le_bytes([c0, c1, c2, c3])
        && crc.amount() == u32::from_le_bytes([s0, s1, s2, s3])
}

thread_local! {
    /// One raw-deflate decoder per thread, reset for each header: setting one up
    /// zeroes its tables and window (about as much work as inflating a header).
    static INFLATER: std::cell::RefCell<Option<flate2::Decompress>> =
        const { std::cell::RefCell::new(None) };
}

/// The fast path of [`read_nifti_header_gz_bytes`]: the usual `.nii.gz` (one gzip member,
/// longer than the header or ending cleanly within it) inflated by a reused decoder,
/// straight from the bytes. `None` whenever anything is unusual (an odd gzip header, a
/// stream that fails, runs short, ends with a trailer that does not check or is
/// followed by more members within the prefix needed, a header that does not parse):
/// the general decoder then reads the stream from the start, so issues and their texts
/// come from one place. When it succeeds the bytes are those the general decoder would
/// inflate, with nothing for it to report.
fn header_gz_fast(bytes: &[u8]) -> Option<NiftiHeader> {
    let input = bytes.get(gzip_data_start(bytes)?..)?;
    INFLATER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        let d = slot.get_or_insert_with(|| flate2::Decompress::new(false));
        d.reset(false);
        let mut buf = vec![0u8; NIFTI2_HEADER_SIZE + 4];
        let mut ended = inflate_into(d, input, &mut buf, 0)?;
        if let Some(n) = ended {
            buf.truncate(n);
        }
        let want = match read_nifti_header(&buf) {
            Ok(h) => usize::try_from(h.vox_offset.max(0.0) as u64)
                .unwrap_or(MAX_GZ_PREFIX)
                .min(MAX_GZ_PREFIX),
            Err(_) => return None,
        };
        if ended.is_none() && want > buf.len() && has_extension_flag(&buf) {
            let have = buf.len();
            buf.resize(want, 0);
            ended = inflate_into(d, input, &mut buf, have)?;
            if let Some(n) = ended {
                buf.truncate(n);
            }
        }
        read_nifti_header(&buf).ok()
    })
}

fn read_nifti_header_gz_buffered(reader: impl std::io::BufRead) -> Result<NiftiHeader, LoadIssue> {
    let mut reader = reader;
    let mut magic = [0u8; 2];
    let got = read_full(&mut reader, &mut magic);
    if got < 2 || magic != [0x1F, 0x8B] {
        return Err(LoadIssue::error(
            NIFTI_HEADER_UNREADABLE,
            "the file is not gzip-compressed",
        ));
    }
    let chained = std::io::Cursor::new(magic).chain(reader);
    let mut dec = flate2::bufread::MultiGzDecoder::new(chained);
    // First the fixed header, then up to vox_offset (bounded) for extensions.
    let mut buf = vec![0u8; NIFTI2_HEADER_SIZE + 4];
    let mut filled = 0usize;
    let mut err: Option<std::io::Error> = None;
    fill(&mut dec, &mut buf, &mut filled, &mut err);
    buf.truncate(filled);
    let want = match read_nifti_header(&buf) {
        Ok(h) => usize::try_from(h.vox_offset.max(0.0) as u64)
            .unwrap_or(MAX_GZ_PREFIX)
            .min(MAX_GZ_PREFIX),
        Err(mut e) => {
            if let Some(io) = err {
                e.message = format!("{} (gzip stream error: {io})", e.message);
            }
            return Err(e);
        }
    };
    if want > buf.len() && err.is_none() && has_extension_flag(&buf) {
        buf.resize(want, 0);
        fill(&mut dec, &mut buf, &mut filled, &mut err);
        buf.truncate(filled);
    }
    read_nifti_header(&buf)
}

fn has_extension_flag(buf: &[u8]) -> bool {
    let size = match buf.get(..4) {
        Some([0x5C, 0x01, 0, 0]) | Some([0, 0, 0x01, 0x5C]) => NIFTI1_HEADER_SIZE,
        _ => NIFTI2_HEADER_SIZE,
    };
    buf.get(size).is_some_and(|&b| b != 0)
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> usize {
    let mut filled = 0;
    let mut err = None;
    fill(r, buf, &mut filled, &mut err);
    filled
}

fn fill(r: &mut impl Read, buf: &mut [u8], filled: &mut usize, err: &mut Option<std::io::Error>) {
    while *filled < buf.len() {
        let Some(rest) = buf.get_mut(*filled..) else {
            return;
        };
        match r.read(rest) {
            Ok(0) => return,
            Ok(n) => *filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                *err = Some(e);
                return;
            }
        }
    }
}

fn header_magic_ok(b: &Bytes<'_>, version: NiftiVersion) -> bool {
    match version {
        NiftiVersion::One => matches!(b.slice(344, 4), Some(b"n+1\0") | Some(b"ni1\0")),
        NiftiVersion::Two => matches!(b.slice(4, 4), Some(b"n+2\0") | Some(b"ni2\0")),
    }
}

fn parse_v1(b: &Bytes<'_>) -> Option<NiftiHeader> {
    let mut dim = [0i64; 8];
    let mut pixdim = [0f64; 8];
    for i in 0..8 {
        dim[i] = i64::from(b.i16(40 + 2 * i)?);
        pixdim[i] = f64::from(b.f32(76 + 4 * i)?);
    }
    let q = |o: usize| b.f32(o).map(f64::from);
    let srow = affine_rows(|r, c| q(280 + 16 * r + 4 * c))?;
    Some(NiftiHeader {
        version: NiftiVersion::One,
        little_endian: b.little,
        dim_info: b.u8(39)?,
        dim,
        pixdim,
        xyzt_units: i32::from(b.u8(123)?),
        qform_code: i32::from(b.i16(252)?),
        sform_code: i32::from(b.i16(254)?),
        quatern: [q(256)?, q(260)?, q(264)?],
        qoffset: [q(268)?, q(272)?, q(276)?],
        srow,
        datatype: b.i16(70)?,
        bitpix: b.i16(72)?,
        vox_offset: q(108)?,
        intent_code: i32::from(b.i16(68)?),
        descrip: c_string(b.slice(148, 80)?),
        mrs: None,
    })
}

/// The three rows of the sform affine, cell (row, column) read by `cell`.
fn affine_rows(cell: impl Fn(usize, usize) -> Option<f64>) -> Option<[[f64; 4]; 3]> {
    let mut rows = [[0f64; 4]; 3];
    for (r, row) in rows.iter_mut().enumerate() {
        for (c, x) in row.iter_mut().enumerate() {
            *x = cell(r, c)?;
        }
    }
    Some(rows)
}

fn parse_v2(b: &Bytes<'_>) -> Option<NiftiHeader> {
    let mut dim = [0i64; 8];
    let mut pixdim = [0f64; 8];
    for i in 0..8 {
        dim[i] = b.i64(16 + 8 * i)?;
        pixdim[i] = b.f64(104 + 8 * i)?;
    }
    let srow = affine_rows(|r, c| b.f64(400 + 32 * r + 8 * c))?;
    Some(NiftiHeader {
        version: NiftiVersion::Two,
        little_endian: b.little,
        dim_info: b.u8(524)?,
        dim,
        pixdim,
        xyzt_units: b.i32(500)?,
        qform_code: b.i32(344)?,
        sform_code: b.i32(348)?,
        quatern: [b.f64(352)?, b.f64(360)?, b.f64(368)?],
        qoffset: [b.f64(376)?, b.f64(384)?, b.f64(392)?],
        srow,
        datatype: b.i16(12)?,
        bitpix: b.i16(14)?,
        vox_offset: b.i64(168)? as f64,
        intent_code: b.i32(504)?,
        descrip: c_string(b.slice(240, 80)?),
        mrs: None,
    })
}

fn c_string(raw: &[u8]) -> String {
    let end = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(raw.get(..end).unwrap_or(raw)).into_owned()
}

/// Scans the extensions after the header (as far as the prefix reaches) for NIfTI-MRS JSON.
fn read_mrs_extension(
    b: &Bytes<'_>,
    header_size: usize,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    if b.u8(header_size)? == 0 {
        return None;
    }
    let mut at = header_size.checked_add(4)?;
    // Each extension: esize (multiple of 16, includes the 8-byte head), ecode, data.
    for _ in 0..64 {
        let esize = usize::try_from(b.i32(at)?).ok()?;
        let ecode = b.i32(at.checked_add(4)?)?;
        if esize < 8 {
            return None;
        }
        if ecode == MRS_EXTENSION_CODE {
            let data = b.slice(at.checked_add(8)?, esize - 8)?;
            let end = data
                .iter()
                .rposition(|&c| c != 0 && c != b' ' && c != b'\n')
                .map_or(0, |p| p + 1);
            let text = std::str::from_utf8(data.get(..end)?).ok()?;
            return match serde_json::from_str(text) {
                Ok(serde_json::Value::Object(m)) => Some(m),
                _ => None,
            };
        }
        at = at.checked_add(esize)?;
    }
    None
}

impl NiftiHeader {
    /// Number of dimensions used: `dim[0]` clamped to 0–7.
    pub fn ndim(&self) -> usize {
        usize::try_from(self.dim[0].clamp(0, 7)).unwrap_or(0)
    }

    /// `dim[1..=dim[0]]`.
    pub fn shape(&self) -> &[i64] {
        self.dim.get(1..=self.ndim()).unwrap_or(&[])
    }

    /// `pixdim[1..=dim[0]]`.
    pub fn voxel_sizes(&self) -> &[f64] {
        self.pixdim.get(1..=self.ndim()).unwrap_or(&[])
    }

    /// `(freq, phase, slice)` from `dim_info`, each 0 (unknown) or 1–3.
    pub fn dim_info_parts(&self) -> (u8, u8, u8) {
        let d = self.dim_info;
        (d & 3, (d >> 2) & 3, (d >> 4) & 3)
    }

    /// Spatial unit name: `meter`, `mm`, `um` or `unknown`.
    pub fn xyz_unit(&self) -> &'static str {
        match self.xyzt_units & 0x07 {
            1 => "meter",
            2 => "mm",
            3 => "um",
            _ => "unknown",
        }
    }

    /// Temporal unit name: `sec`, `msec`, `usec` or `unknown` (the context's allowed values;
    /// the spectral codes hz/ppm/rads map to `unknown`).
    pub fn t_unit(&self) -> &'static str {
        match self.xyzt_units & 0x38 {
            8 => "sec",
            16 => "msec",
            24 => "usec",
            _ => "unknown",
        }
    }

    /// The sform as a 3×4 matrix.
    pub fn sform(&self) -> [[f64; 4]; 3] {
        self.srow
    }

    /// The qform as a 3×4 matrix (quaternion rotation, voxel sizes, `qfac` = sign of `pixdim[0]`).
    pub fn qform(&self) -> [[f64; 4]; 3] {
        let [b, c, d] = self.quatern;
        let w2 = 1.0 - (b * b + c * c + d * d);
        let a = if w2 > 0.0 { w2.sqrt() } else { 0.0 };
        let r = quat_to_rotation(a, b, c, d);
        let qfac = if self.pixdim[0] < 0.0 { -1.0 } else { 1.0 };
        let vox = [self.pixdim[1], self.pixdim[2], self.pixdim[3] * qfac];
        let mut m = [[0f64; 4]; 3];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] = r[i][j] * vox[j];
            }
            m[i][3] = self.qoffset[i];
        }
        m
    }

    /// The Analyze-style affine from voxel sizes alone (x flipped, centred).
    pub fn base_affine(&self) -> [[f64; 4]; 3] {
        let mut m = [[0f64; 4]; 3];
        let sign = [-1.0, 1.0, 1.0];
        for i in 0..3 {
            let z = if i < self.ndim() {
                self.pixdim[i + 1]
            } else {
                1.0
            };
            let n = if i < self.ndim() {
                self.dim[i + 1] as f64
            } else {
                1.0
            };
            m[i][i] = sign[i] * z;
            m[i][3] = -sign[i] * z * (n - 1.0) / 2.0;
        }
        m
    }

    /// The affine nibabel reports: sform if set, else qform if set, else the base affine.
    pub fn best_affine(&self) -> [[f64; 4]; 3] {
        if self.sform_code > 0 {
            self.sform()
        } else if self.qform_code > 0 {
            self.qform()
        } else {
            self.base_affine()
        }
    }

    /// Axis codes (`R`/`L`, `A`/`P`, `S`/`I`) of the three voxel axes; `None` for an axis the
    /// affine collapses.
    pub fn axis_codes(&self) -> [Option<&'static str>; 3] {
        axis_codes(&self.best_affine())
    }

    /// The `nifti_header` context value.
    pub fn to_value(&self) -> Value {
        let num = |n: f64| Value::Number(n);
        let (freq, phase, slice) = self.dim_info_parts();
        let mut di = Object::default();
        di.insert("freq".into(), num(f64::from(freq)));
        di.insert("phase".into(), num(f64::from(phase)));
        di.insert("slice".into(), num(f64::from(slice)));
        let mut units = Object::default();
        units.insert("xyz".into(), Value::str(self.xyz_unit()));
        units.insert("t".into(), Value::str(self.t_unit()));
        let ints = |v: &[i64]| Value::array(v.iter().map(|&x| num(x as f64)).collect());
        let floats = |v: &[f64]| Value::array(v.iter().map(|&x| num(x)).collect());
        let mut o = Object::default();
        o.insert("dim_info".into(), Value::object(di));
        o.insert("dim".into(), ints(&self.dim));
        o.insert("pixdim".into(), floats(&self.pixdim));
        o.insert("shape".into(), ints(self.shape()));
        o.insert("voxel_sizes".into(), floats(self.voxel_sizes()));
        o.insert("xyzt_units".into(), Value::object(units));
        o.insert("qform_code".into(), num(f64::from(self.qform_code)));
        o.insert("sform_code".into(), num(f64::from(self.sform_code)));
        o.insert(
            "axis_codes".into(),
            Value::array(
                self.axis_codes()
                    .iter()
                    .map(|c| c.map_or(Value::Null, Value::str))
                    .collect(),
            ),
        );
        if let Some(mrs) = &self.mrs {
            o.insert(
                "mrs".into(),
                Value::from(&serde_json::Value::Object(mrs.clone())),
            );
        }
        Value::object(o)
    }
}

fn quat_to_rotation(w: f64, x: f64, y: f64, z: f64) -> [[f64; 3]; 3] {
    let n = w * w + x * x + y * y + z * z;
    if n < f64::EPSILON {
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    }
    let s = 2.0 / n;
    let (xs, ys, zs) = (x * s, y * s, z * s);
    let (wx, wy, wz) = (w * xs, w * ys, w * zs);
    let (xx, xy, xz) = (x * xs, x * ys, x * zs);
    let (yy, yz, zz) = (y * ys, y * zs, z * zs);
    [
        [1.0 - (yy + zz), xy - wz, xz + wy],
        [xy + wz, 1.0 - (xx + zz), yz - wx],
        [xz - wy, yz + wx, 1.0 - (xx + yy)],
    ]
}

type M3 = [[f64; 3]; 3];

fn det3(m: &M3) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// Inverse transpose of a 3×3 matrix (the cofactor matrix over the determinant).
fn inv_transpose(m: &M3) -> Option<M3> {
    let d = det3(m);
    if !d.is_finite() || d.abs() < 1e-300 {
        return None;
    }
    let c =
        |r0: usize, r1: usize, c0: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    Some([
        [c(1, 2, 1, 2) / d, -c(1, 2, 0, 2) / d, c(1, 2, 0, 1) / d],
        [-c(0, 2, 1, 2) / d, c(0, 2, 0, 2) / d, -c(0, 2, 0, 1) / d],
        [c(0, 1, 1, 2) / d, -c(0, 1, 0, 2) / d, c(0, 1, 0, 1) / d],
    ])
}

/// Orthogonal polar factor of a non-singular matrix by Newton iteration
/// (`R ← (R + R⁻ᵀ) / 2`), the same matrix an SVD gives as `U Vᵀ`.
fn nearest_orthogonal(m: &M3) -> Option<M3> {
    let mut r = *m;
    for _ in 0..100 {
        let it = inv_transpose(&r)?;
        let mut next = [[0f64; 3]; 3];
        let mut delta = 0f64;
        for i in 0..3 {
            for j in 0..3 {
                next[i][j] = 0.5 * (r[i][j] + it[i][j]);
                delta = delta.max((next[i][j] - r[i][j]).abs());
            }
        }
        r = next;
        if delta < 1e-12 {
            break;
        }
    }
    r.iter().flatten().all(|v| v.is_finite()).then_some(r)
}

/// Labels each voxel axis with the world direction it points along most (nibabel's
/// `aff2axcodes` with the default RAS labels).
pub fn axis_codes(affine: &[[f64; 4]; 3]) -> [Option<&'static str>; 3] {
    const LABELS: [(&str, &str); 3] = [("L", "R"), ("P", "A"), ("I", "S")];
    let mut rzs: M3 = [[0f64; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            rzs[i][j] = affine[i][j];
        }
    }
    // Remove zooms: normalise each column.
    for j in 0..3 {
        let mut z = (0..3).map(|i| rzs[i][j] * rzs[i][j]).sum::<f64>().sqrt();
        if z == 0.0 || !z.is_finite() {
            z = 1.0;
        }
        for row in rzs.iter_mut() {
            row[j] /= z;
        }
    }
    let mut r = nearest_orthogonal(&rzs).unwrap_or(rzs);
    let mut out = [None; 3];
    for (in_ax, slot) in out.iter_mut().enumerate() {
        let col = [r[0][in_ax], r[1][in_ax], r[2][in_ax]];
        if col.iter().all(|v| v.abs() <= 1e-8) || col.iter().any(|v| !v.is_finite()) {
            continue;
        }
        let mut out_ax = 0;
        for k in 1..3 {
            if col[k].abs() > col[out_ax].abs() {
                out_ax = k;
            }
        }
        let (neg, pos) = LABELS[out_ax];
        *slot = Some(if col[out_ax] < 0.0 { neg } else { pos });
        // This world axis is taken.
        r[out_ax] = [0.0; 3];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path is taken for the usual `.nii.gz` files (and agrees with the general
    /// decoder: `tests/loaders.rs` compares the two on many variants, which holds only
    /// when the fast path declines or is right).
    #[test]
    fn fast_path_reads_usual_files() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/loaders/nifti/");
        for name in [
            "n1_le_3d.nii.gz",
            "n1_be_4d.nii.gz",
            "n2_le_4d.nii.gz",
            "n2_mrs.nii.gz",
        ] {
            let bytes = std::fs::read(format!("{dir}{name}")).unwrap();
            let fast = header_gz_fast(&bytes);
            assert!(fast.is_some(), "{name}: fast path declined");
            let general = read_nifti_header_gz_buffered(bytes.as_slice());
            assert_eq!(
                format!("{:?}", fast.map(Ok::<_, LoadIssue>)),
                format!("{:?}", Some(general)),
                "{name}"
            );
        }
        // A header-only file: the member ends within the first fill, cleanly.
        let raw = std::fs::read(format!("{dir}n1_le_3d.nii")).unwrap();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, &raw[..352]).unwrap();
        let small = enc.finish().unwrap();
        let fast = header_gz_fast(&small);
        assert!(fast.is_some(), "header-only stream: fast path declined");
        let general = read_nifti_header_gz_buffered(small.as_slice());
        assert_eq!(
            format!("{:?}", fast.map(Ok::<_, LoadIssue>)),
            format!("{:?}", Some(general))
        );
        // A damaged trailer: declined.
        let mut bad = small.clone();
        let last = bad.len() - 5;
        bad[last] ^= 1;
        assert!(header_gz_fast(&bad).is_none(), "bad trailer accepted");
        // Not gzip, a truncated stream: declined, left to the general decoder.
        for name in ["bad_not_gzipped.nii.gz", "bad_truncated_stream.nii.gz"] {
            let bytes = std::fs::read(format!("{dir}{name}")).unwrap();
            assert!(header_gz_fast(&bytes).is_none(), "{name}");
        }
    }
}
