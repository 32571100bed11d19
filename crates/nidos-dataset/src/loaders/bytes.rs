//! Bounded, endian-aware reads from a byte slice. Every read is checked: out-of-range offsets
//! yield `None`, never a panic.

#[derive(Clone, Copy, Debug)]
pub(crate) struct Bytes<'a> {
    pub data: &'a [u8],
    pub little: bool,
}

/// One method per number type, named after it: the number at an offset, in the
/// slice's byte order.
macro_rules! reads {
    ($($t:ident),*) => {$(
        pub fn $t(&self, at: usize) -> Option<$t> {
            self.number(at, $t::from_le_bytes, $t::from_be_bytes)
        }
    )*};
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

    /// The `N` bytes at `at` as a number, read with `le` or `be` by the byte order.
    fn number<const N: usize, T>(
        &self,
        at: usize,
        le: fn([u8; N]) -> T,
        be: fn([u8; N]) -> T,
    ) -> Option<T> {
        let a = self.array::<N>(at)?;
        Some(if self.little { le(a) } else { be(a) })
    }

    reads! {u16, i16, u32, i32, u64, i64, f32, f64}

    pub fn slice(&self, at: usize, len: usize) -> Option<&'a [u8]> {
        self.data.get(at..at.checked_add(len)?)
    }
}
