//! Which reported issues have a fix in the schema (`fix:` beside a check, an error or a
//! field requirement), so reports can mark them `fixable` and `nidos fix` can find the
//! edit for each one.

use nidos_schema::{Fix, FixOp, Schema};

use crate::issue::{FastMap, Issue};

/// Issues marked per task when a report is marked in parallel.
const MARK_PIECE: usize = 8192;

/// The schema's fixes, looked up by the rule that raised an issue (for every issue of a
/// report, so the maps hash with foldhash).
#[derive(Clone, Debug, Default)]
pub struct FixIndex {
    /// Check rule id → fix.
    by_rule: FastMap<String, Fix>,
    /// Field rule id → field name → fix; the issue's sub-code names the field.
    by_field: FastMap<String, FastMap<String, Fix>>,
    /// Issue code → fix of an error rule (issues the engine raises itself).
    by_code: FastMap<String, Fix>,
}

impl FixIndex {
    pub fn new(schema: &Schema) -> FixIndex {
        let mut index = FixIndex::default();
        for check in &schema.checks {
            if let Some(f) = &check.fix {
                index.by_rule.insert(check.id.clone(), f.clone());
            }
        }
        for rule in schema.json_rules.iter().chain(&schema.sidecar_rules) {
            for (name, req) in &rule.fields {
                if let Some(f) = &req.fix {
                    index
                        .by_field
                        .entry(rule.id.clone())
                        .or_default()
                        .insert(name.clone(), f.clone());
                }
            }
        }
        for rule in &schema.errors {
            if let Some(f) = &rule.fix {
                index.by_code.insert(rule.code.clone(), f.clone());
            }
        }
        index
    }

    pub fn is_empty(&self) -> bool {
        self.by_rule.is_empty() && self.by_field.is_empty() && self.by_code.is_empty()
    }

    /// The fix of the rule that raised `issue`, if it declares one.
    pub fn fix_for(&self, issue: &Issue) -> Option<&Fix> {
        if let Some(rule) = issue.rule_id() {
            if let Some(f) = self.by_rule.get(rule.as_str()) {
                return Some(f);
            }
            let field = self
                .by_field
                .get(rule.as_str())
                .and_then(|fields| fields.get(issue.sub_code().as_str()));
            if field.is_some() {
                return field;
            }
        }
        self.by_code.get(issue.code().as_str())
    }

    /// Error-rule fixes that inspect file content themselves (see
    /// [`FixOp::scans_content`]), with the code they resolve.
    pub fn content_scans(&self) -> impl Iterator<Item = (&str, &Fix)> {
        self.by_code
            .iter()
            .filter(|(_, f)| f.op.scans_content())
            .map(|(c, f)| (c.as_str(), f))
    }

    /// Sets [`Issue::fixable`] on every issue whose rule has an automatic fix (a
    /// suggestion alone does not count).
    pub fn mark(&self, issues: &mut [Issue]) {
        if self.is_empty() {
            return;
        }
        // A large report is marked in pieces on all threads (it runs after the sort, with
        // nothing else to do).
        if issues.len() >= 2 * MARK_PIECE {
            use rayon::prelude::*;
            issues
                .par_chunks_mut(MARK_PIECE)
                .for_each(|piece| self.mark_piece(piece));
        } else {
            self.mark_piece(issues);
        }
    }

    fn mark_piece(&self, issues: &mut [Issue]) {
        // Whether an issue is fixable follows from its code, sub-code and rule, which
        // issues share (`Issue::kind_id`): each shared triple is looked up once, and the
        // answer kept by its identity. Nothing shared is cloned, so the threads marking
        // other pieces never contend for a reference count.
        let mut known: FastMap<usize, bool> = FastMap::default();
        let mut last = (0usize, false);
        for issue in issues {
            let id = issue.kind_id();
            if id != last.0 {
                let fixable = *known.entry(id).or_insert_with(|| {
                    self.fix_for(issue)
                        .is_some_and(|f| !matches!(f.op, FixOp::Suggest))
                });
                last = (id, fixable);
            }
            issue.fixable = last.1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::issue::Severity;

    fn fix(op: FixOp) -> Fix {
        Fix {
            id: "rules.errors.X".into(),
            op,
            suggestion: None,
        }
    }

    /// A report large enough to be marked in pieces gets the marks a one-piece pass
    /// gives: fixable codes marked, suggestions and codes without a fix not.
    #[test]
    fn pieces_mark_as_one_pass() {
        let mut index = FixIndex::default();
        let set = FixOp::Set {
            key: "K".into(),
            value: serde_json::Value::Null,
        };
        index.by_code.insert("FIXABLE".into(), fix(set));
        index
            .by_code
            .insert("SUGGESTED".into(), fix(FixOp::Suggest));
        let codes = ["FIXABLE", "SUGGESTED", "OTHER"];
        let issues: Vec<Issue> = (0..3 * MARK_PIECE + 5)
            .map(|i| Issue::new(codes[(i / 3 + i) % 3], Severity::Error, "/x"))
            .collect();
        let mut pieces = issues.clone();
        index.mark(&mut pieces);
        let mut whole = issues;
        index.mark_piece(&mut whole);
        let marked: Vec<bool> = pieces.iter().map(|i| i.fixable).collect();
        assert_eq!(marked, whole.iter().map(|i| i.fixable).collect::<Vec<_>>());
        for issue in &pieces {
            assert_eq!(issue.fixable, issue.code().as_str() == "FIXABLE");
        }
    }
}
