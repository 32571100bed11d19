//! Which rules may apply to a file: rules indexed by the values their selectors
//! require of a few context keys, so each file tests only its candidates.

use nidos_expr::Value;

use crate::issue::FastMap;
use crate::selectors::SelectorTable;

/// Names whose constant comparisons in selectors index the rules.
pub(crate) const KEY_NAMES: [&str; KEYS] = ["path", "suffix", "extension", "datatype", "modality"];
pub(crate) const KEYS: usize = 5;

/// The rules of one family indexed by a necessary condition of their selectors, so a
/// file evaluates only the selectors of rules that can apply to it.
///
/// A rule's *key* is its first selector of the form `NAME == "lit"` (either side),
/// or `intersects([NAME], ["lit", …])`, with NAME in [`KEY_NAMES`]: when the file's
/// value of NAME is a string, such a selector is truthy exactly when the string is
/// one of the literals. Candidates are then checked with every selector as before,
/// so the index only skips rules that could not be selected.
#[derive(Default)]
pub(crate) struct RuleIndex {
    /// Per key name: literal → rules (ascending).
    by_value: [FastMap<String, Vec<usize>>; KEYS],
    /// Per key name: every rule keyed on it (for files whose value is not a string).
    keyed: [Vec<usize>; KEYS],
    /// Rules without a key: always candidates.
    always: Vec<usize>,
    /// Per rule: the numbers of its selectors in the engine's [`SelectorTable`].
    selectors: Vec<Vec<u32>>,
}

impl RuleIndex {
    pub(crate) fn new(
        rules: &[&Vec<nidos_schema::Expression>],
        table: &mut SelectorTable,
    ) -> RuleIndex {
        let mut index = RuleIndex {
            selectors: rules.iter().map(|s| table.ids(s)).collect(),
            ..RuleIndex::default()
        };
        for (i, selectors) in rules.iter().enumerate() {
            let key = selectors
                .iter()
                .find_map(|s| s.parsed.as_deref().and_then(selector_key));
            match key {
                Some((k, literals)) => {
                    index.keyed[k].push(i);
                    let mut literals = literals;
                    literals.sort();
                    literals.dedup();
                    for lit in literals {
                        index.by_value[k].entry(lit).or_default().push(i);
                    }
                }
                None => index.always.push(i),
            }
        }
        index
    }

    /// The selector numbers of rule `i`.
    pub(crate) fn selectors(&self, i: usize) -> &[u32] {
        self.selectors.get(i).map_or(&[], Vec::as_slice)
    }

    /// The candidate rules (ascending, as the schema lists them) for a file whose
    /// key values are `keys`.
    pub(crate) fn candidates(&self, keys: &[&Value; KEYS], out: &mut Vec<usize>) {
        out.clear();
        out.extend_from_slice(&self.always);
        for (k, value) in keys.iter().enumerate() {
            match value {
                Value::String(s) => {
                    if let Some(rules) = self.by_value[k].get(s.as_ref()) {
                        out.extend_from_slice(rules);
                    }
                }
                _ => out.extend_from_slice(&self.keyed[k]),
            }
        }
        out.sort_unstable();
    }
}

/// The key of one selector: the index of its name in [`KEY_NAMES`] and the string
/// literals it accepts.
pub(crate) fn selector_key(expr: &nidos_expr::Expr) -> Option<(usize, Vec<String>)> {
    use nidos_expr::Expr;
    let Expr::Call(call) = expr else {
        return None;
    };
    let key_of = |e: &Expr| match e {
        Expr::Name(n) => KEY_NAMES.iter().position(|k| *k == n.as_ref()),
        _ => None,
    };
    match (call.name.as_ref(), call.args.as_slice()) {
        ("_==_", [a, b]) if call.is_known() => {
            let (k, lit) = match (key_of(a), key_of(b)) {
                (Some(k), None) => (k, b),
                (None, Some(k)) => (k, a),
                _ => return None,
            };
            match lit {
                Expr::Literal(Value::String(s)) => Some((k, vec![s.to_string()])),
                _ => None,
            }
        }
        ("intersects", [Expr::Array(items), Expr::Literal(Value::Array(lits))])
            if call.is_known() =>
        {
            let [item] = items.as_slice() else {
                return None;
            };
            let k = key_of(item)?;
            // Non-string literals can never equal a string value: leave them out.
            let strings = lits
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            Some((k, strings))
        }
        _ => None,
    }
}
