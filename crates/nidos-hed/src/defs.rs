//! Definitions: `(Definition/Name[/#], (contents))` groups gathered from sidecars (or given by a
//! test), looked up by `Def` and `Def-expand`. Gathering them from HED strings needs the
//! checker, which reads this table: it is in `gather.rs`.

use foldhash::HashMap;

#[derive(Debug, Clone)]
pub struct Definition {
    pub name: String,
    /// The contents' tag that holds `#`, written out, when the definition takes a value.
    pub placeholder: Option<String>,
    /// Order-insensitive key of the contents group (with `#` in place), if there are contents.
    pub key: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Definitions {
    by_name: HashMap<String, Definition>,
}

impl Definitions {
    pub fn get(&self, lower_name: &str) -> Option<&Definition> {
        self.by_name.get(lower_name)
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    pub(crate) fn contains(&self, lower_name: &str) -> bool {
        self.by_name.contains_key(lower_name)
    }

    /// Adds a definition under its lower-case name (replacing one of that name).
    pub(crate) fn insert(&mut self, lower_name: String, def: Definition) {
        self.by_name.insert(lower_name, def);
    }
}
