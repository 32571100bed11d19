//! The precompiled form of a bundled schema: [`SchemaData`] as plain bytes, written at build
//! time (`build.rs`) from the `schemas/*.json.gz` files and read back without inflating or
//! parsing JSON. Numbers are unsigned LEB128; a string is its length then its bytes; an
//! optional string is 0 when absent, its length plus one then its bytes when present; a list
//! is its length then its items; flags are one byte.
//!
//! `build.rs` includes this file and `data.rs` as modules of its own, so both refer to each
//! other through `crate::` paths that exist in either crate.

use crate::data::{SchemaData, TagData, UnitClassData, UnitData, UnitModifierData, ValueClassData};

/// The bytes of `data` (see the module documentation).
pub fn encode(data: &SchemaData) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.str(&data.version);
    w.str(&data.library);
    w.str(&data.with_standard);
    w.flags(&[data.unmerged]);
    w.uint(data.tags.len());
    for t in &data.tags {
        w.str(&t.n);
        w.uint(t.p.map_or(0, |p| p as usize + 1));
        w.strs(&t.f);
        w.strs(&t.vc);
        w.strs(&t.uc);
        w.opt(t.dep.as_deref());
        w.opt(t.lib.as_deref());
        w.opt(t.id.as_deref());
    }
    w.uint(data.unit_classes.len());
    for uc in &data.unit_classes {
        w.str(&uc.name);
        w.opt(uc.default.as_deref());
        w.uint(uc.units.len());
        for u in &uc.units {
            w.str(&u.name);
            w.flags(&[u.si, u.symbol, u.prefix]);
        }
    }
    w.uint(data.unit_modifiers.len());
    for m in &data.unit_modifiers {
        w.str(&m.name);
        w.flags(&[m.symbol]);
    }
    w.uint(data.value_classes.len());
    for vc in &data.value_classes {
        w.str(&vc.name);
        w.strs(&vc.chars);
    }
    w.0
}

/// Reads bytes written by [`encode`]; fails on truncated or malformed bytes, or bytes left
/// over.
pub fn decode(bytes: &[u8]) -> Result<SchemaData, String> {
    let mut r = Reader { bytes, pos: 0 };
    let version = r.str()?;
    let library = r.str()?;
    let with_standard = r.str()?;
    let [unmerged] = r.flags()?;
    let n = r.len()?;
    let mut tags = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let p = match r.uint()? {
            0 => None,
            p => Some(u32::try_from(p - 1).map_err(|_| "parent index out of range")?),
        };
        tags.push(TagData {
            n: name,
            p,
            f: r.strs()?,
            vc: r.strs()?,
            uc: r.strs()?,
            dep: r.opt()?,
            lib: r.opt()?,
            id: r.opt()?,
        });
    }
    let n = r.len()?;
    let mut unit_classes = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let default = r.opt()?;
        let k = r.len()?;
        let mut units = Vec::with_capacity(k);
        for _ in 0..k {
            let name = r.str()?;
            let [si, symbol, prefix] = r.flags()?;
            units.push(UnitData {
                name,
                si,
                symbol,
                prefix,
            });
        }
        unit_classes.push(UnitClassData {
            name,
            default,
            units,
        });
    }
    let n = r.len()?;
    let mut unit_modifiers = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let [symbol] = r.flags()?;
        unit_modifiers.push(UnitModifierData { name, symbol });
    }
    let n = r.len()?;
    let mut value_classes = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let chars = r.strs()?;
        value_classes.push(ValueClassData { name, chars });
    }
    if r.pos != bytes.len() {
        return Err("precompiled schema: bytes left over".to_string());
    }
    Ok(SchemaData {
        version,
        library,
        with_standard,
        unmerged,
        tags,
        unit_classes,
        unit_modifiers,
        value_classes,
    })
}

struct Writer(Vec<u8>);

impl Writer {
    fn uint(&mut self, mut n: usize) {
        while n >= 0x80 {
            self.0.push((n & 0x7f) as u8 | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn str(&mut self, s: &str) {
        self.uint(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    fn opt(&mut self, s: Option<&str>) {
        match s {
            None => self.uint(0),
            Some(s) => {
                self.uint(s.len() + 1);
                self.0.extend_from_slice(s.as_bytes());
            }
        }
    }

    fn strs(&mut self, list: &[String]) {
        self.uint(list.len());
        for s in list {
            self.str(s);
        }
    }

    fn flags(&mut self, flags: &[bool]) {
        let byte = flags
            .iter()
            .enumerate()
            .fold(0u8, |b, (i, &f)| b | (u8::from(f) << i));
        self.0.push(byte);
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

const TRUNCATED: &str = "precompiled schema: truncated";

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.bytes.get(self.pos).ok_or(TRUNCATED)?;
        self.pos += 1;
        Ok(b)
    }

    fn uint(&mut self) -> Result<usize, String> {
        let mut n = 0usize;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift >= usize::BITS {
                return Err("precompiled schema: number too large".to_string());
            }
            n |= usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
            shift += 7;
        }
    }

    /// A count of items that each take at least one byte: never more than the bytes left
    /// (so a corrupt count cannot reserve a huge list).
    fn len(&mut self) -> Result<usize, String> {
        let n = self.uint()?;
        if n > self.bytes.len() - self.pos {
            return Err(TRUNCATED.to_string());
        }
        Ok(n)
    }

    fn text(&mut self, len: usize) -> Result<String, String> {
        let end = self.pos.checked_add(len).ok_or(TRUNCATED)?;
        let b = self.bytes.get(self.pos..end).ok_or(TRUNCATED)?;
        self.pos = end;
        std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|e| format!("precompiled schema: {e}"))
    }

    fn str(&mut self) -> Result<String, String> {
        let n = self.uint()?;
        self.text(n)
    }

    fn opt(&mut self) -> Result<Option<String>, String> {
        match self.uint()? {
            0 => Ok(None),
            n => self.text(n - 1).map(Some),
        }
    }

    fn strs(&mut self) -> Result<Vec<String>, String> {
        let n = self.len()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(self.str()?);
        }
        Ok(out)
    }

    fn flags<const N: usize>(&mut self) -> Result<[bool; N], String> {
        let b = self.byte()?;
        let mut out = [false; N];
        for (i, f) in out.iter_mut().enumerate() {
            *f = b & (1 << i) != 0;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bundled schema decodes from its precompiled bytes to what its JSON file gives.
    #[test]
    fn precompiled_schemas_equal_their_json() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let mut seen = 0;
        for (name, bytes) in crate::versions::bundled() {
            let json = std::fs::read(dir.join(format!("{name}.json.gz"))).unwrap();
            let want = SchemaData::from_bytes(&json).unwrap();
            let got = decode(bytes).unwrap();
            assert_eq!(got, want, "{name}");
            seen += 1;
        }
        assert!(seen >= 7, "only {seen} bundled schemas");
    }

    /// Encoding then decoding gives the data back, every optional field present or absent,
    /// numbers across the one-byte boundary, non-ASCII text.
    #[test]
    fn round_trip() {
        let mut data = SchemaData {
            version: "8.4.0".into(),
            library: "lib".into(),
            with_standard: "8.3.0".into(),
            unmerged: true,
            ..Default::default()
        };
        for i in 0..300u32 {
            data.tags.push(TagData {
                n: format!("Tag-{i}-é"),
                p: i.checked_sub(1).filter(|p| p % 3 != 0),
                f: (0..i % 3).map(|k| format!("f{k}")).collect(),
                vc: if i % 2 == 0 {
                    vec!["numericClass".into()]
                } else {
                    vec![]
                },
                uc: vec![],
                dep: (i % 5 == 0).then(|| "8.1.0".to_string()),
                lib: (i % 7 == 0).then(String::new),
                id: (i % 4 == 0).then(|| format!("HED_{i:07}")),
            });
        }
        data.unit_classes.push(UnitClassData {
            name: "timeUnits".into(),
            default: Some("s".into()),
            units: vec![
                UnitData {
                    name: "s".into(),
                    si: true,
                    symbol: true,
                    prefix: false,
                },
                UnitData {
                    name: "$".into(),
                    si: false,
                    symbol: false,
                    prefix: true,
                },
            ],
        });
        data.unit_modifiers.push(UnitModifierData {
            name: "k".into(),
            symbol: true,
        });
        data.value_classes.push(ValueClassData {
            name: "textClass".into(),
            chars: vec!["letters".into(), "digits".into()],
        });
        let bytes = encode(&data);
        assert_eq!(decode(&bytes).unwrap(), data);
        assert_eq!(
            decode(&encode(&SchemaData::default())).unwrap(),
            SchemaData::default()
        );
        // Every shorter prefix and a longer one fail instead of giving something else.
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
    }
}
