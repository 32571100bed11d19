//! The report's summary of a dataset and the message of each issue code.

use crate::engine::Engine;
use crate::issue::Issue;
use crate::report::Summary;
use indexmap::IndexMap;
use nidos_dataset::Dataset;
use std::collections::{BTreeSet, HashMap};

impl Engine<'_> {
    pub(crate) fn code_messages(&self, issues: &[Issue]) -> IndexMap<String, String> {
        let mut by_code: HashMap<&str, &str> = HashMap::new();
        for spec in self.schema.checks.iter().filter_map(|r| r.issue.as_ref()) {
            by_code
                .entry(spec.code.as_str())
                .or_insert(spec.message.as_str());
        }
        for rule in &self.schema.errors {
            by_code
                .entry(rule.code.as_str())
                .or_insert(rule.message.as_str());
        }
        // Field requirements that raise their own code (`issue:` on a sidecar field).
        let fields = self
            .schema
            .sidecar_rules
            .iter()
            .chain(&self.schema.json_rules);
        for spec in fields.flat_map(|r| r.fields.values().filter_map(|f| f.issue.as_ref())) {
            by_code
                .entry(spec.code.as_str())
                .or_insert(spec.message.as_str());
        }
        let codes: BTreeSet<&str> = issues.iter().map(|i| i.code.as_str()).collect();
        codes
            .into_iter()
            .map(|c| {
                (
                    c.to_string(),
                    crate::explain::explain(c, by_code.get(c).copied()),
                )
            })
            .collect()
    }

    pub(crate) fn summary(&self, ds: &Dataset) -> Summary {
        let mut subjects = BTreeSet::new();
        let mut sessions = BTreeSet::new();
        let mut tasks = BTreeSet::new();
        let mut datatypes = BTreeSet::new();
        let mut modalities = BTreeSet::new();
        let mut total = 0;
        let mut size = 0;
        for f in ds.files().iter().filter(|f| f.validated()) {
            total += 1;
            size += f.size;
            if let Some(s) = f.name.get("sub") {
                subjects.insert(s.to_string());
            }
            if let Some(s) = f.name.get("ses") {
                sessions.insert(s.to_string());
            }
            if let Some(s) = f.name.get("task") {
                tasks.insert(s.to_string());
            }
            if let Some(dt) = &f.datatype {
                datatypes.insert(dt.clone());
                for (modality, dts) in &self.schema.modalities {
                    if dts.iter().any(|d| d == dt) {
                        modalities.insert(modality.clone());
                    }
                }
            }
        }
        let description = ds.dataset_value().get("dataset_description");
        Summary {
            subjects: subjects.into_iter().collect(),
            sessions: sessions.into_iter().collect(),
            tasks: tasks.into_iter().collect(),
            modalities: modalities.into_iter().collect(),
            data_types: datatypes.into_iter().collect(),
            total_files: total,
            size,
            schema_version: self.schema.version.clone(),
            dataset_version: description
                .get(&self.schema.brand.version_key)
                .as_str()
                .map(str::to_string),
            version_key: self.schema.brand.version_key.clone(),
        }
    }
}
