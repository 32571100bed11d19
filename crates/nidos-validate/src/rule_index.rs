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
    /// Per key name: literal → rules.
    by_value: [FastMap<String, RuleSet>; KEYS],
    /// Per key name: every rule keyed on it (for files whose value is not a string).
    keyed: [RuleSet; KEYS],
    /// Rules without a key: always candidates.
    always: RuleSet,
    /// Per rule: the numbers of its selectors in the engine's [`SelectorTable`].
    selectors: Vec<Vec<u32>>,
}

/// A set of rule numbers as a bit per rule: a file's candidates are the union of a few
/// such sets, taken word by word and read back in ascending order without sorting.
#[derive(Clone, Default)]
struct RuleSet(Vec<u64>);

impl RuleSet {
    fn insert(&mut self, rule: usize) {
        let word = rule / 64;
        if self.0.len() <= word {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << (rule % 64);
    }

    fn word(&self, i: usize) -> u64 {
        self.0.get(i).copied().unwrap_or(0)
    }
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
                    index.keyed[k].insert(i);
                    for lit in literals {
                        index.by_value[k].entry(lit).or_default().insert(i);
                    }
                }
                None => index.always.insert(i),
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
        let mut sets = [&self.always; KEYS + 1];
        for (k, value) in keys.iter().enumerate() {
            sets[k + 1] = match value {
                Value::String(s) => match self.by_value[k].get(s.as_ref()) {
                    Some(set) => set,
                    None => &self.always,
                },
                _ => &self.keyed[k],
            };
        }
        let words = sets.iter().map(|s| s.0.len()).max().unwrap_or(0);
        for w in 0..words {
            let mut bits = sets.iter().fold(0, |acc, s| acc | s.word(w));
            while bits != 0 {
                out.push(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The candidates read from the bit sets are exactly the rules whose key admits the
    /// file, in ascending order, for rules spread over several words.
    #[test]
    fn candidates_are_the_admitted_rules_in_order() {
        let literals = ["bold", "T1w", ".json", "anat", "mri"];
        // Rule i: unkeyed, or keyed on name i % KEYS with one or two literals.
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let mut keys_of: Vec<Option<(usize, Vec<&str>)>> = Vec::new();
        let mut index = RuleIndex::default();
        for i in 0..200 {
            if next() % 4 == 0 {
                index.always.insert(i);
                keys_of.push(None);
                continue;
            }
            let k = next() % KEYS;
            let lits: Vec<&str> = (0..1 + next() % 2)
                .map(|_| literals[next() % literals.len()])
                .collect();
            index.keyed[k].insert(i);
            for lit in &lits {
                index.by_value[k]
                    .entry((*lit).to_string())
                    .or_default()
                    .insert(i);
            }
            keys_of.push(Some((k, lits)));
        }
        let values = [
            Value::str("bold"),
            Value::str("T1w"),
            Value::str(".json"),
            Value::str("other"),
            Value::Null,
        ];
        let mut out = Vec::new();
        for round in 0..50 {
            let file: Vec<&Value> = (0..KEYS)
                .map(|k| &values[(round * 7 + k * next()) % values.len()])
                .collect();
            let file: [&Value; KEYS] = [file[0], file[1], file[2], file[3], file[4]];
            index.candidates(&file, &mut out);
            let want: Vec<usize> = keys_of
                .iter()
                .enumerate()
                .filter(|(_, key)| match key {
                    None => true,
                    Some((k, lits)) => match file[*k] {
                        Value::String(s) => lits.iter().any(|l| *l == s.as_ref()),
                        _ => true,
                    },
                })
                .map(|(i, _)| i)
                .collect();
            assert_eq!(out, want, "round {round}");
        }
    }
}
