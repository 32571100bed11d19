//! Compiled patterns: the schema's formats (unanchored, as metadata values are tested),
//! each compiled when first used (a run reaches few of them), and anchored column-value
//! patterns, compiled once per distinct body.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use nidos_expr::full_match::FullMatcher;
use nidos_schema::Schema;

use crate::jsonschema::FormatCheck;

pub(crate) struct Patterns {
    /// Format name → its pattern, and the pattern compiled (`None`: it does not).
    formats: HashMap<String, (String, OnceLock<Option<regress::Regex>>)>,
    anchored: RwLock<HashMap<String, Option<Arc<FullMatcher>>>>,
}

impl Patterns {
    pub(crate) fn new(schema: &Schema) -> Patterns {
        let formats = schema
            .formats
            .iter()
            .map(|(name, f)| (name.clone(), (f.pattern.clone(), OnceLock::new())))
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
        let (pattern, compiled) = self.formats.get(format)?;
        let re = compiled.get_or_init(|| regress::Regex::new(pattern).ok());
        re.as_ref().map(|re| re.find(value).is_some())
    }
}
