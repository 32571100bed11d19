//! What changed between two reports: the issues resolved and the issues new.

use std::cmp::Ordering;

use crate::issue::{Issue, Severity};
use crate::report::Report;

/// The difference between a report and the one before it.
#[derive(Clone, Debug, Default)]
pub struct Delta {
    /// Issues of the earlier report that the new one no longer has.
    pub resolved: Vec<Issue>,
    /// Issues of the new report that the earlier one did not have.
    pub new: Vec<Issue>,
    /// The files validated again (dataset-relative paths, in path order).
    pub rechecked: Vec<String>,
}

impl Delta {
    /// Nothing appeared or went away.
    pub fn is_empty(&self) -> bool {
        self.resolved.is_empty() && self.new.is_empty()
    }
}

/// The report order without the file ranks, which differ between two walks of a
/// changed dataset (ranks order as paths do, so the order is the same).
fn order(a: &Issue, b: &Issue) -> Ordering {
    a.cmp_in_report(b, false)
}

/// The issues of `before` not in `after` and of `after` not in `before` (both sorted
/// in report order, as a run leaves them).
pub(crate) fn between(before: &Report, after: &Report) -> (Vec<Issue>, Vec<Issue>) {
    let (a, b) = (&before.issues, &after.issues);
    let (mut i, mut j) = (0, 0);
    let (mut resolved, mut new) = (Vec::new(), Vec::new());
    while i < a.len() && j < b.len() {
        match order(&a[i], &b[j]) {
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
            Ordering::Less => {
                resolved.push(a[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                new.push(b[j].clone());
                j += 1;
            }
        }
    }
    resolved.extend(a[i..].iter().cloned());
    new.extend(b[j..].iter().cloned());
    (resolved, new)
}

/// Errors and warnings of a report, as (errors, warnings).
pub fn totals(report: &Report) -> (usize, usize) {
    (
        report.count(Severity::Error),
        report.count(Severity::Warning),
    )
}
