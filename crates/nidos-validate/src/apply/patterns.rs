//! Compiled patterns: the schema's formats (unanchored, as metadata values are tested)
//! and anchored column-value patterns, compiled once per distinct body.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use nidos_expr::full_match::FullMatcher;
use nidos_schema::Schema;

use crate::jsonschema::FormatCheck;

pub(crate) struct Patterns {
    formats: HashMap<String, regress::Regex>,
    anchored: RwLock<HashMap<String, Option<Arc<FullMatcher>>>>,
}

impl Patterns {
    pub(crate) fn new(schema: &Schema) -> Patterns {
        let formats = schema
            .formats
            .iter()
            .filter_map(|(name, f)| {
                regress::Regex::new(&f.pattern)
                    .ok()
                    .map(|re| (name.clone(), re))
            })
            .collect();
        Patterns {
            formats,
            anchored: RwLock::default(),
        }
    }

    /// `^(?:body)$` compiled (once per distinct body); `None` when it does not compile.
    pub(crate) fn anchored(&self, body: &str) -> Option<Arc<FullMatcher>> {
        if let Ok(cache) = self.anchored.read() {
            if let Some(re) = cache.get(body) {
                return re.clone();
            }
        }
        let re = FullMatcher::new(body).ok().map(Arc::new);
        if let Ok(mut cache) = self.anchored.write() {
            cache.insert(body.to_string(), re.clone());
        }
        re
    }
}

impl FormatCheck for Patterns {
    fn check(&self, format: &str, value: &str) -> Option<bool> {
        self.formats.get(format).map(|re| re.find(value).is_some())
    }
}
