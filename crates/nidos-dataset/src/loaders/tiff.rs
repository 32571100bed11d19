//! TIFF files: the format version (classic 42 / BigTIFF 43) and, for OME-TIFF, the physical
//! pixel sizes from the OME-XML in the first image's `ImageDescription` tag. Everything is read
//! from the prefix given: tags or text beyond it are treated as absent.

use nidos_expr::{Object, Value};
use quick_xml::events::Event;

use super::bytes::Bytes;
use super::LoadIssue;

/// Not a TIFF file (bad byte-order mark or version). The standard defines no code for this;
/// nidos reports it under this name.
pub const TIFF_UNREADABLE: &str = "TIFF_UNREADABLE";

/// The `ImageDescription` tag.
const IMAGE_DESCRIPTION: u16 = 270;
/// Field types whose values are bytes: BYTE, ASCII, UNDEFINED (writers use all three for text).
const BYTE_TYPES: [u16; 3] = [1, 2, 7];
/// Most IFD entries scanned.
const MAX_ENTRIES: u64 = 4096;

/// What the rules need from a TIFF file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TiffInfo {
    /// 42 (classic TIFF) or 43 (BigTIFF).
    pub version: u16,
    pub little_endian: bool,
    /// The first image's `ImageDescription`, when it lies within the prefix.
    pub description: Option<String>,
    /// OME metadata parsed from the description, when it is OME-XML.
    pub ome: Option<OmeInfo>,
}

/// The `Pixels` physical sizes of an OME-XML document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OmeInfo {
    pub physical_size_x: Option<f64>,
    pub physical_size_y: Option<f64>,
    pub physical_size_z: Option<f64>,
    pub physical_size_x_unit: Option<String>,
    pub physical_size_y_unit: Option<String>,
    pub physical_size_z_unit: Option<String>,
}

/// Reads the TIFF header and the first IFD from a prefix of the file.
pub fn read_tiff(prefix: &[u8]) -> Result<TiffInfo, LoadIssue> {
    let bad = |why: &str| LoadIssue::error(TIFF_UNREADABLE, why.to_string());
    let little = match prefix.get(..2) {
        Some(b"II") => true,
        Some(b"MM") => false,
        _ => return Err(bad("not a TIFF file (no II/MM byte-order mark)")),
    };
    let b = Bytes::new(prefix, little);
    let version = b
        .u16(2)
        .ok_or_else(|| bad("the TIFF header is truncated"))?;
    let (ifd, big) = match version {
        42 => (
            u64::from(
                b.u32(4)
                    .ok_or_else(|| bad("the TIFF header is truncated"))?,
            ),
            false,
        ),
        43 => {
            let (Some(8), Some(0), Some(off)) = (b.u16(4), b.u16(6), b.u64(8)) else {
                return Err(bad("malformed or truncated BigTIFF header"));
            };
            (off, true)
        }
        v => {
            return Err(bad(&format!(
                "unknown TIFF version {v} (expected 42 or 43)"
            )))
        }
    };
    let description = usize::try_from(ifd)
        .ok()
        .and_then(|at| find_ascii_tag(&b, at, big, IMAGE_DESCRIPTION));
    let ome = description.as_deref().and_then(read_ome_xml);
    Ok(TiffInfo {
        version,
        little_endian: little,
        description,
        ome,
    })
}

/// The value of an ASCII tag in the IFD at `at`, when the IFD and the value lie in the prefix.
fn find_ascii_tag(b: &Bytes<'_>, at: usize, big: bool, tag: u16) -> Option<String> {
    let (count, first, entry_len) = if big {
        (b.u64(at)?, at.checked_add(8)?, 20usize)
    } else {
        (u64::from(b.u16(at)?), at.checked_add(2)?, 12usize)
    };
    for i in 0..count.min(MAX_ENTRIES) {
        let e = first.checked_add(usize::try_from(i).ok()?.checked_mul(entry_len)?)?;
        if b.u16(e)? != tag {
            continue;
        }
        if !BYTE_TYPES.contains(&b.u16(e + 2)?) {
            return None;
        }
        let (n, inline_at, inline_cap) = if big {
            (b.u64(e + 4)?, e + 12, 8u64)
        } else {
            (u64::from(b.u32(e + 4)?), e + 8, 4u64)
        };
        let n_usize = usize::try_from(n).ok()?;
        let data_at = if n <= inline_cap {
            inline_at
        } else if big {
            usize::try_from(b.u64(inline_at)?).ok()?
        } else {
            usize::try_from(b.u32(inline_at)?).ok()?
        };
        let raw = b.slice(data_at, n_usize)?;
        let end = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
        return Some(String::from_utf8_lossy(raw.get(..end)?).into_owned());
    }
    None
}

/// Reads `Pixels` physical sizes from an OME-XML document; `None` when the text is not
/// OME-XML with a `Pixels` element (malformed XML included).
pub fn read_ome_xml(xml: &str) -> Option<OmeInfo> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut saw_ome = false;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => {
                let name = e.local_name();
                if name.as_ref() == b"OME" {
                    saw_ome = true;
                } else if name.as_ref() == b"Pixels" && saw_ome {
                    let mut info = OmeInfo::default();
                    for attr in e.attributes().flatten() {
                        let Ok(v) = attr.unescape_value() else {
                            continue;
                        };
                        let v = v.trim();
                        match attr.key.local_name().as_ref() {
                            b"PhysicalSizeX" => info.physical_size_x = v.parse().ok(),
                            b"PhysicalSizeY" => info.physical_size_y = v.parse().ok(),
                            b"PhysicalSizeZ" => info.physical_size_z = v.parse().ok(),
                            b"PhysicalSizeXUnit" => info.physical_size_x_unit = Some(v.into()),
                            b"PhysicalSizeYUnit" => info.physical_size_y_unit = Some(v.into()),
                            b"PhysicalSizeZUnit" => info.physical_size_z_unit = Some(v.into()),
                            _ => {}
                        }
                    }
                    return Some(info);
                }
            }
            Ok(Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

impl TiffInfo {
    /// The `tiff` context value: `{version}`.
    pub fn to_value(&self) -> Value {
        let mut o = Object::default();
        o.insert("version".into(), Value::Number(f64::from(self.version)));
        Value::object(o)
    }
}

/// OME-XML's default length unit.
pub const OME_DEFAULT_UNIT: &str = "µm";

impl OmeInfo {
    /// The `ome` context value. A size without an explicit unit gets OME's default unit, µm.
    pub fn to_value(&self) -> Value {
        let mut o = Object::default();
        let axes = [
            ("X", self.physical_size_x, &self.physical_size_x_unit),
            ("Y", self.physical_size_y, &self.physical_size_y_unit),
            ("Z", self.physical_size_z, &self.physical_size_z_unit),
        ];
        for (axis, size, _) in &axes {
            if let Some(s) = size {
                o.insert(format!("PhysicalSize{axis}"), Value::Number(*s));
            }
        }
        for (axis, size, unit) in &axes {
            match (size, unit) {
                (_, Some(u)) => {
                    o.insert(format!("PhysicalSize{axis}Unit"), Value::str(u.as_str()));
                }
                (Some(_), None) => {
                    o.insert(
                        format!("PhysicalSize{axis}Unit"),
                        Value::str(OME_DEFAULT_UNIT),
                    );
                }
                (None, None) => {}
            }
        }
        Value::object(o)
    }
}
