//! What an issue reports apart from where: code, sub-code and rule id, held together once
//! per distinct triple (issues hold one pointer to it instead of three).

use std::cell::RefCell;
use std::sync::Arc;

use super::{FastMap, Sym, INTERN_LIMIT};

/// An issue's code, sub-code (empty when none) and rule id.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Kind {
    pub(super) code: Sym,
    pub(super) sub_code: Sym,
    pub(super) rule: Option<Sym>,
}

/// The shared kinds of this thread, by the addresses of their three texts (the texts are
/// kept alive by the kinds, so an address is not reused while its entry is there).
type Kinds = FastMap<[usize; 3], Arc<Kind>>;

thread_local! {
    static KINDS: RefCell<Kinds> = RefCell::new(Kinds::default());
}

fn address(s: &Sym) -> usize {
    Arc::as_ptr(&s.0) as usize
}

/// The shared kind of these texts for this thread: issues made from the same interned
/// texts share one. Up to [`INTERN_LIMIT`] kinds are remembered per thread; past that, and
/// during thread teardown, a fresh one is made.
pub(super) fn kind(code: &Sym, sub_code: &Sym, rule: Option<&Sym>) -> Arc<Kind> {
    let key = [address(code), address(sub_code), rule.map_or(0, address)];
    let made = || {
        Arc::new(Kind {
            code: code.clone(),
            sub_code: sub_code.clone(),
            rule: rule.cloned(),
        })
    };
    KINDS
        .try_with(|kinds| {
            let mut kinds = kinds.borrow_mut();
            if let Some(k) = kinds.get(&key) {
                return k.clone();
            }
            let k = made();
            if kinds.len() < INTERN_LIMIT {
                kinds.insert(key, k.clone());
            }
            k
        })
        .unwrap_or_else(|_| made())
}

#[cfg(test)]
mod tests {
    use super::super::Issue;
    use super::*;
    use crate::Severity;

    /// Issues built from equal texts share one kind, whatever the order of the builder
    /// steps; different texts give different kinds; the accessors give the texts back.
    #[test]
    fn equal_triples_share_a_kind() {
        let triples = [
            ("A_CODE", "", None),
            ("A_CODE", "Key", None),
            ("A_CODE", "Key", Some("rules.x")),
            ("A_CODE", "", Some("rules.x")),
            ("B_CODE", "Key", Some("rules.x")),
        ];
        let build = |(code, sub, rule): (&str, &str, Option<&str>), rule_first: bool| {
            let mut issue = Issue::new(code, Severity::Warning, "/a.json");
            if rule_first {
                if let Some(r) = rule {
                    issue = issue.rule(r);
                }
                issue.sub(sub)
            } else {
                issue = issue.sub(sub);
                match rule {
                    Some(r) => issue.rule(r),
                    None => issue,
                }
            }
        };
        let built: Vec<Issue> = triples.iter().map(|&t| build(t, false)).collect();
        for (&(code, sub, rule), issue) in triples.iter().zip(&built) {
            assert_eq!(issue.code().as_str(), code);
            assert_eq!(issue.sub_code().as_str(), sub);
            assert_eq!(issue.rule_id().map(Sym::as_str), rule);
            let again = build((code, sub, rule), true);
            assert!(
                Arc::ptr_eq(&issue.kind, &again.kind),
                "{code} {sub} {rule:?}"
            );
            let others = built.iter().filter(|o| Arc::ptr_eq(&o.kind, &issue.kind));
            assert_eq!(others.count(), 1, "{code} {sub} {rule:?}");
        }
    }

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn an_issue_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Issue>(), 32);
    }
}
