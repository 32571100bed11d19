//! Bounded, endian-aware reads from a byte slice. Every read is checked: out-of-range offsets
//! yield `None`, never a panic.

#[derive(Clone, Copy, Debug)]
pub(crate) struct Bytes<'a> {
    pub data: &'a [u8],
    pub little: bool,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8], little: bool) -> Self {
        Bytes { data, little }
    }

    pub fn array<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        let end = at.checked_add(N)?;
        let s = self.data.get(at..end)?;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Some(out)
    }

    pub fn u8(&self, at: usize) -> Option<u8> {
        self.data.get(at).copied()
    }

    pub fn u16(&self, at: usize) -> Option<u16> {
        let a = self.array::<2>(at)?;
        Some(if self.little {
            u16::from_le_bytes(a)
        } else {
            u16::from_be_bytes(a)
        })
    }

    pub fn i16(&self, at: usize) -> Option<i16> {
        self.u16(at).map(|v| v as i16)
    }

    pub fn u32(&self, at: usize) -> Option<u32> {
        let a = self.array::<4>(at)?;
        Some(if self.little {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        })
    }

    pub fn i32(&self, at: usize) -> Option<i32> {
        self.u32(at).map(|v| v as i32)
    }

    pub fn u64(&self, at: usize) -> Option<u64> {
        let a = self.array::<8>(at)?;
        Some(if self.little {
            u64::from_le_bytes(a)
        } else {
            u64::from_be_bytes(a)
        })
    }

    pub fn i64(&self, at: usize) -> Option<i64> {
        self.u64(at).map(|v| v as i64)
    }

    pub fn f32(&self, at: usize) -> Option<f32> {
        self.u32(at).map(f32::from_bits)
    }

    pub fn f64(&self, at: usize) -> Option<f64> {
        self.u64(at).map(f64::from_bits)
    }

    pub fn slice(&self, at: usize, len: usize) -> Option<&'a [u8]> {
        self.data.get(at..at.checked_add(len)?)
    }
}
