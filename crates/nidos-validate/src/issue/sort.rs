//! Report order: a run's issues sorted by [`Issue::sort_key_cmp`], exact duplicates dropped.

use std::sync::Arc;

use super::{FastMap, Issue, Severity, Sym};

/// Sorts issues into report order and drops exact duplicates.
///
/// [`Issue::sort_key_cmp`] compares every field, so issues it finds equal are
/// identical and an unstable sort (no scratch copy) is deterministic.
///
/// The sort works on one 8-byte key per issue: the issue's index in the low bits, and
/// above it as much of (code, location, sub-code, line, severity) as fits, each field
/// replaced by its rank among the report's values. Most comparisons are one integer
/// comparison; only issues whose keys tie are compared field by field. The issues are
/// then moved into that order in place.
pub fn normalize(issues: &mut Vec<Issue>) {
    let Some(Keys {
        mut keys,
        index_bits,
        code_bits,
    }) = sort_keys(issues)
    else {
        issues.sort_unstable_by(Issue::sort_key_cmp);
        issues.dedup();
        return;
    };
    let mask = (1u64 << index_bits) - 1;
    let list: &[Issue] = issues;
    let issue = |key: u64| &list[(key & mask) as usize];
    let by_key = |a: &u64, b: &u64| {
        (a >> index_bits)
            .cmp(&(b >> index_bits))
            .then_with(|| issue(*a).sort_key_cmp(issue(*b)))
    };
    if keys.len() >= PARALLEL_SORT_MIN {
        use rayon::slice::ParallelSliceMut;
        keys.par_sort_unstable_by(by_key);
    } else {
        // Grouped by code first (a stable counting pass: reports have few codes), then
        // each group by the merge sort, which finds the runs already in order (a file's
        // issues of one code come together, a table's row issues line by line, files in
        // path order) and merges them instead of sorting anew. The order is total, so
        // stable or not gives the same result.
        let code = |key: u64| key.checked_shr(64 - code_bits).unwrap_or(0) as usize;
        keys = by_code(keys, code);
        let mut start = 0;
        while start < keys.len() {
            let c = code(keys[start]);
            let len = keys[start..].iter().take_while(|&&k| code(k) == c).count();
            keys[start..start + len].sort_by(by_key);
            start += len;
        }
    }
    // Exact duplicates are neighbours with equal keys above the index: only those are
    // compared. One bit per position.
    let mut duplicate = vec![0u64; keys.len().div_ceil(64)];
    for (at, pair) in keys.windows(2).enumerate() {
        let (a, b) = (pair[0], pair[1]);
        if a >> index_bits == b >> index_bits && issue(a) == issue(b) {
            duplicate[(at + 1) / 64] |= 1 << ((at + 1) % 64);
        }
    }
    permute(issues, &mut keys, mask);
    let mut at = 0;
    issues.retain(|_| {
        let keep = duplicate
            .get(at / 64)
            .is_none_or(|bits| bits >> (at % 64) & 1 == 0);
        at += 1;
        keep
    });
}

/// `keys` grouped by `code(key)`, keeping their order within a code (counting sort).
fn by_code(keys: Vec<u64>, code: impl Fn(u64) -> usize) -> Vec<u64> {
    let codes = keys.iter().map(|&k| code(k) + 1).max().unwrap_or(0);
    let mut next = vec![0usize; codes + 1];
    for &k in &keys {
        next[code(k) + 1] += 1;
    }
    for c in 1..next.len() {
        next[c] += next[c - 1];
    }
    let mut out = keys.clone();
    for k in keys {
        let slot = &mut next[code(k)];
        out[*slot] = k;
        *slot += 1;
    }
    out
}

/// Below this many issues the key sort runs on the calling thread.
const PARALLEL_SORT_MIN: usize = 1 << 17;

/// The sort keys of a list of issues: `keys[i]` is issue `i`'s key, its low
/// `index_bits` bits `i`; above them, from the top, the ranks of the code (`code_bits`
/// wide, always whole), the location, the sub-code, the line plus one (0: none) and the
/// severity, as many of them as fit, the last one kept cut to its high bits. Keys order
/// as the issues do, except that equal bits above the index leave the order to the
/// issues' remaining fields.
struct Keys {
    keys: Vec<u64>,
    index_bits: u32,
    code_bits: u32,
}

/// The ranks of a set of texts: each distinct text once, then numbered in text order.
struct Ranks<'a> {
    ids: FastMap<&'a str, u32>,
    /// Ids by the address of a shared copy of the text (an equal text has one copy per
    /// interning thread): hashing an address is cheaper than hashing the text, and the
    /// texts, borrowed for `'a`, keep their addresses.
    by_copy: FastMap<usize, u32>,
    /// The previous issue's text and its id (issues of one file come in runs, so most
    /// look-ups are a pointer comparison).
    last: Option<(&'a Sym, u32)>,
    texts: Vec<&'a str>,
}

impl<'a> Ranks<'a> {
    fn new() -> Ranks<'a> {
        Ranks {
            ids: FastMap::default(),
            by_copy: FastMap::default(),
            last: None,
            texts: Vec::new(),
        }
    }

    /// A provisional id for `s` (its order of first appearance).
    fn id(&mut self, s: &'a Sym) -> u32 {
        if let Some((prev, id)) = self.last {
            if Arc::ptr_eq(&prev.0, &s.0) {
                return id;
            }
        }
        let copy = Arc::as_ptr(&s.0) as usize;
        let id = match self.by_copy.get(&copy) {
            Some(&id) => id,
            None => {
                let next = self.texts.len() as u32;
                let id = *self.ids.entry(s.as_str()).or_insert(next);
                if id == next {
                    self.texts.push(s.as_str());
                }
                self.by_copy.insert(copy, id);
                id
            }
        };
        self.last = Some((s, id));
        id
    }

    /// The provisional ids in text order.
    fn in_order(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.texts.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| self.texts[a as usize].cmp(self.texts[b as usize]));
        order
    }

    /// Maps each provisional id to the text's rank in sorted order.
    fn ranks(&self) -> Vec<u64> {
        let mut rank = vec![0u64; self.texts.len()];
        for (r, &id) in self.in_order().iter().enumerate() {
            rank[id as usize] = r as u64;
        }
        rank
    }
}

/// Where one field goes in a key: its value shifted right by `drop` (the low bits that
/// do not fit), then left by `at`; `used` false when none of it fits or it is always 0.
#[derive(Clone, Copy, Default)]
struct Slot {
    drop: u32,
    at: u32,
    used: bool,
}

impl Slot {
    fn place(self, value: u64) -> u64 {
        if self.used {
            value >> self.drop << self.at
        } else {
            0
        }
    }
}

/// The slots of fields `widths` wide (in bits), placed from the key's top bit down to bit
/// `low`, in order, until the room is used up.
fn layout<const N: usize>(widths: [u32; N], low: u32) -> [Slot; N] {
    let mut free = 64 - low;
    widths.map(|width| {
        let take = width.min(free);
        if take == 0 {
            return Slot::default();
        }
        free -= take;
        Slot {
            drop: width - take,
            at: low + free,
            used: true,
        }
    })
}

/// Bits needed for the values `0..count`.
fn bits_for(count: u64) -> u32 {
    64 - count.saturating_sub(1).leading_zeros()
}

/// An issue's line plus one, 0 when it has none (one past the largest line is the
/// largest's key: ties are decided by the comparison).
fn line_key(issue: &Issue) -> u64 {
    issue.line_number().map_or(0, |n| {
        u64::try_from(n).unwrap_or(u64::MAX).saturating_add(1)
    })
}

fn severity_key(severity: Severity) -> u64 {
    match severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Ignore => 2,
    }
}

/// The sort keys of `issues`, or `None` for a short list or one whose indexes do not
/// fit 32 bits (the caller then sorts with [`Issue::sort_key_cmp`] directly).
///
/// Locations rank as [`Issue::sort_key_cmp`] orders them: an issue with a file rank is
/// at that file's path, and rank order is path order, so the ranked locations take their
/// order from their ranks (no text is hashed or compared); the few locations without one
/// are ranked by text and merged in among the files' paths.
fn sort_keys(issues: &[Issue]) -> Option<Keys> {
    const SMALL: usize = 32;
    if issues.len() < SMALL || u32::try_from(issues.len()).is_err() {
        return None;
    }
    // First pass: each issue's provisional code and sub-code ids (order of first
    // appearance) in its key, where the second pass puts the whole key.
    let mut codes = Ranks::new();
    let mut subs = Ranks::new();
    let mut unranked = Ranks::new();
    // By file rank: the index plus one of an issue at that file (0: none), then the
    // file's place among the locations.
    let mut files: Vec<u32> = Vec::new();
    let mut max_line = 0;
    let mut keys = Vec::with_capacity(issues.len());
    for (index, issue) in issues.iter().enumerate() {
        let (c, s) = (codes.id(issue.code()), subs.id(issue.sub_code()));
        keys.push(u64::from(c) << 32 | u64::from(s));
        max_line = max_line.max(line_key(issue));
        match issue.rank as usize {
            0 => {
                unranked.id(&issue.location);
            }
            rank => {
                if rank >= files.len() {
                    files.resize(rank + 1, 0);
                }
                if files[rank] == 0 {
                    files[rank] = index as u32 + 1;
                }
            }
        }
    }
    // The locations' places: files in rank order, the other locations merged in by text
    // (one equal to a file's path takes the file's place).
    let unranked_order = unranked.in_order();
    let mut unranked_place = vec![0u64; unranked_order.len()];
    let mut pending = unranked_order.iter().peekable();
    let mut places = 0u64;
    for file in files.iter_mut().filter(|f| **f != 0) {
        let path = issues
            .get(*file as usize - 1)
            .map_or("", |i| i.location.as_str());
        while let Some(&&id) = pending.peek() {
            let text = unranked.texts[id as usize];
            if text > path {
                break;
            }
            unranked_place[id as usize] = places;
            pending.next();
            if text < path {
                places += 1;
            }
        }
        *file = places as u32;
        places += 1;
    }
    for &id in pending {
        unranked_place[id as usize] = places;
        places += 1;
    }
    let index_bits = bits_for(issues.len() as u64);
    let code_bits = bits_for(codes.texts.len() as u64);
    let [code_at, location_at, sub_at, line_at, severity_at] = layout(
        [
            code_bits,
            bits_for(places),
            bits_for(subs.texts.len() as u64),
            64 - max_line.leading_zeros(),
            2,
        ],
        index_bits,
    );
    let (code_rank, sub_rank) = (codes.ranks(), subs.ranks());
    let rank = |ranks: &[u64], id: u64| ranks.get(id as usize).copied().unwrap_or(0);
    for (index, (key, issue)) in keys.iter_mut().zip(issues).enumerate() {
        let location = match issue.rank as usize {
            0 => rank(&unranked_place, u64::from(unranked.id(&issue.location))),
            file => files.get(file).map_or(0, |&p| u64::from(p)),
        };
        *key = code_at.place(rank(&code_rank, *key >> 32))
            | location_at.place(location)
            | sub_at.place(rank(&sub_rank, *key & 0xffff_ffff))
            | line_at.place(line_key(issue))
            | severity_at.place(severity_key(issue.severity))
            | index as u64;
    }
    Some(Keys {
        keys,
        index_bits,
        code_bits,
    })
}

/// Reorders `items` so that position `k` holds the item that was at `order[k] & mask`
/// (the masked `order` is a permutation of the indices; it is used up as scratch). In
/// place: each cycle of the permutation is walked once with swaps.
fn permute<T>(items: &mut [T], order: &mut [u64], mask: u64) {
    for start in 0..order.len() {
        let mut cur = start;
        loop {
            let next = (order[cur] & mask) as usize;
            order[cur] = cur as u64;
            if next == start || next == cur || next >= items.len() {
                break;
            }
            items.swap(cur, next);
            cur = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so the cases repeat run to run.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, below: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % below as u64) as usize
        }
    }

    /// Issues drawn from small pools of texts, so many share fields or are duplicates;
    /// locations that are "files" carry their rank, some issues at a file do not.
    /// `wide`: lines up to 2^50, so the keys cannot hold every field whole.
    fn issues(n: usize, seed: u64, wide: bool) -> Vec<Issue> {
        let mut g = Gen(seed);
        let codes = ["HED_WARNING", "A_CODE", "EMPTY_FILE", "Z", "HED_ERROR"];
        let files: Vec<String> = (0..40).map(|i| format!("/sub-{i:02}/f.tsv")).collect();
        // Locations no file rank is given for: before, between and after the files.
        let others = ["/", "/dataset_description.json", "/sub-05/a.tsv", "/zzz"];
        let subs = ["", "value", "onset", "SIDECAR_KEY_MISSING"];
        let severities = [Severity::Error, Severity::Warning, Severity::Ignore];
        (0..n)
            .map(|_| {
                let f = g.next(files.len() + others.len());
                let location = match files.get(f) {
                    Some(file) => file.clone(),
                    None => others[f - files.len()].to_string(),
                };
                let mut issue = Issue::new(
                    codes[g.next(codes.len())],
                    severities[g.next(severities.len())],
                    location,
                )
                .sub(subs[g.next(subs.len())]);
                if f < files.len() && g.next(4) > 0 {
                    issue.rank = f as u32 + 1;
                }
                if g.next(2) == 0 {
                    let line = g.next(30);
                    issue = issue.line(if wide { line << 45 | g.next(3) } else { line });
                }
                match g.next(5) {
                    0 => issue = issue.message(format!("m{}", g.next(3))),
                    1 => issue = issue.rule(["rules.a", "rules.b"][g.next(2)]),
                    2 => issue.extra_mut().affects = vec![format!("/x{}", g.next(2))],
                    _ => {}
                }
                issue
            })
            .collect()
    }

    fn reference(mut list: Vec<Issue>) -> Vec<Issue> {
        list.sort_by(Issue::sort_key_cmp);
        list.dedup();
        list
    }

    /// The keyed sort gives the comparison sort's sequence: below and above the size
    /// where keys are used and where the sort goes parallel, with keys that hold every
    /// field and keys that hold only the first few.
    #[test]
    fn keyed_sort_is_the_comparison_sort() {
        let cases = [
            (0, 1, false),
            (5, 2, false),
            (31, 3, false),
            (32, 4, false),
            (500, 5, false),
            (20_000, 6, false),
            (500, 7, true),
            (20_000, 8, true),
            (140_000, 9, false),
            (140_000, 10, true),
        ];
        for (n, seed, wide) in cases {
            let list = issues(n, seed, wide);
            // Already in order, and in order but for the codes (runs to merge).
            let sorted = reference(list.clone());
            let mut got = sorted.clone();
            normalize(&mut got);
            assert!(got == sorted, "{n} issues in order");
            let mut by_location = list.clone();
            by_location.sort_by(|a, b| a.location.cmp(&b.location));
            let mut got = by_location;
            normalize(&mut got);
            assert!(got == reference(list.clone()), "{n} issues by location");
            let want = reference(list.clone());
            let mut got = list;
            normalize(&mut got);
            assert_eq!(got.len(), want.len(), "{n} issues");
            for (k, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(a == b, "{n} issues, position {k}: {a:?} != {b:?}");
            }
        }
    }

    /// Every permutation of four items, and a long cycle, lands each item at its place.
    #[test]
    fn permute_applies_the_order() {
        let mut orders: Vec<Vec<u32>> = Vec::new();
        for a in 0..4u32 {
            for b in 0..4u32 {
                for c in 0..4u32 {
                    for d in 0..4u32 {
                        let o = vec![a, b, c, d];
                        let mut s = o.clone();
                        s.sort_unstable();
                        s.dedup();
                        if s.len() == 4 {
                            orders.push(o);
                        }
                    }
                }
            }
        }
        orders.push((1..1000).chain([0]).collect());
        for order in orders {
            let items: Vec<u32> = (0..order.len() as u32).map(|i| i * 10).collect();
            let want: Vec<u32> = order.iter().map(|&i| items[i as usize]).collect();
            let mut got = items.clone();
            // High bits above the mask (a key's fields) are ignored.
            let mut keys: Vec<u64> = order.iter().map(|&i| 7 << 40 | u64::from(i)).collect();
            permute(&mut got, &mut keys, (1 << 40) - 1);
            assert_eq!(got, want);
        }
    }
}
