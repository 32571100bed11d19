//! JavaScript's `Array.prototype.sort` as the reference's engine (V8) runs it: a TimSort
//! driven by a comparator whose result is a number. Only `result < 0` means "before";
//! `NaN` (what `Number("n/a") - 1` gives) counts as 0, "neither before nor after", which
//! makes the comparator inconsistent (`n/a` equals both 1 and 5, which differ). With a
//! consistent comparator every stable sort agrees; with `NaN` in play only the same
//! algorithm, step for step, gives the same order, so that is what this module is.
//! Lists of up to 15 elements are sorted by binary insertion alone, longer ones by
//! TimSort.
//!
//! The algorithm (from Tim Peters' description of listsort): split the input into
//! natural runs (strictly descending runs are reversed), extend short runs to a minimum
//! length with binary insertion, keep a stack of pending runs whose lengths satisfy the
//! TimSort invariants, and merge neighbours with a linear merge that switches to
//! exponential search ("galloping") while one side keeps winning.

/// How many consecutive wins of one side switch a merge to galloping, initially.
const MIN_GALLOP: usize = 7;
/// Lists up to this length are sorted by binary insertion alone, without looking for
/// runs (measured on the reference's engine: V8 15 in deno 2.9).
const INSERTION_ONLY: usize = 15;

/// Sorts `v` in place as V8 would with the comparator `cmp` (negative: `a` first).
pub fn sort_by<T: Clone>(v: &mut [T], cmp: impl Fn(&T, &T) -> f64) {
    // The language's SortCompare turns a NaN result into +0: "neither before nor after".
    let cmp = |a: &T, b: &T| {
        let r = cmp(a, b);
        if r.is_nan() {
            0.0
        } else {
            r
        }
    };
    let mut s = Sorter {
        a: v,
        cmp: &cmp,
        runs: Vec::new(),
        min_gallop: MIN_GALLOP,
    };
    s.run();
}

struct Sorter<'a, T, F: Fn(&T, &T) -> f64> {
    a: &'a mut [T],
    cmp: &'a F,
    /// Pending runs: (start, length, power). A run's power is the depth of the node that
    /// would merge it with the next run in a perfectly balanced merge tree of the list.
    runs: Vec<(usize, usize, u32)>,
    min_gallop: usize,
}

/// The minimum run lengths, spread evenly: `n` is cut into `2^e` parts of `n / 2^e`
/// elements (below 64), and the `k`-th run is forced up to the `k`-th cut, carrying the
/// fraction over (measured on the reference's engine: `n = 65` gives runs of 32 and 33).
struct MinRuns {
    n: usize,
    shift: u32,
    carry: usize,
}

impl MinRuns {
    fn new(n: usize) -> MinRuns {
        let (mut m, mut shift) = (n, 0);
        while m >= 64 {
            m >>= 1;
            shift += 1;
        }
        MinRuns { n, shift, carry: 0 }
    }

    fn next(&mut self) -> usize {
        self.carry += self.n;
        let out = self.carry >> self.shift;
        self.carry &= (1usize << self.shift) - 1;
        out
    }
}

impl<T: Clone, F: Fn(&T, &T) -> f64> Sorter<'_, T, F> {
    fn less(&self, x: &T, y: &T) -> bool {
        (self.cmp)(x, y) < 0.0
    }

    fn run(&mut self) {
        let n = self.a.len();
        if n < 2 {
            return;
        }
        if n <= INSERTION_ONLY {
            self.insertion_sort(0, 0, n);
            return;
        }
        let mut min_runs = MinRuns::new(n);
        let mut low = 0;
        let mut remaining = n;
        while remaining != 0 {
            let mut len = self.count_run(low, low + remaining);
            let min_run = min_runs.next();
            if len < min_run {
                let forced = min_run.min(remaining);
                self.insertion_sort(low, low + len, low + forced);
                len = forced;
            }
            self.found_run(low, len);
            self.runs.push((low, len, 0));
            low += len;
            remaining -= len;
        }
        while self.runs.len() > 1 {
            let mut i = self.runs.len() - 2;
            if i > 0 && self.runs[i - 1].1 < self.runs[i + 1].1 {
                i -= 1;
            }
            self.merge_at(i);
        }
    }

    /// The length of the run starting at `low` (at most up to `high`); a strictly
    /// descending run is reversed in place. A comparison that is neither negative nor
    /// non-negative (NaN) continues either kind of run.
    fn count_run(&mut self, low: usize, high: usize) -> usize {
        if low + 1 == high {
            return 1;
        }
        let first = (self.cmp)(&self.a[low + 1], &self.a[low]);
        let descending = first < 0.0;
        let mut len = 2;
        let mut i = low + 2;
        while i < high {
            let order = (self.cmp)(&self.a[i], &self.a[i - 1]);
            let ends = if descending {
                order >= 0.0
            } else {
                order < 0.0
            };
            if ends {
                break;
            }
            len += 1;
            i += 1;
        }
        if descending {
            self.a[low..low + len].reverse();
        }
        len
    }

    /// Binary insertion of `a[start..high]` into the sorted `a[low..start]`.
    fn insertion_sort(&mut self, low: usize, start: usize, high: usize) {
        let first = if start == low { start + 1 } else { start };
        for i in first..high {
            let pivot = self.a[i].clone();
            let (mut left, mut right) = (low, i);
            while left < right {
                let mid = left + ((right - left) >> 1);
                if self.less(&pivot, &self.a[mid]) {
                    right = mid;
                } else {
                    left = mid + 1;
                }
            }
            self.a[left..=i].rotate_right(1);
        }
    }

    /// A new run `[low, low + len)` follows the top of the stack: merge, from the top,
    /// every pending run whose power exceeds the power between the top and the new run
    /// ("powersort": merges follow a balanced tree over the positions of the list).
    fn found_run(&mut self, low: usize, len: usize) {
        let Some(&(start, top_len, _)) = self.runs.last() else {
            return;
        };
        debug_assert_eq!(start + top_len, low);
        let power = node_power(start, top_len, len, self.a.len());
        while self.runs.len() > 1 && self.runs[self.runs.len() - 2].2 > power {
            let i = self.runs.len() - 2;
            self.merge_at(i);
        }
        if let Some(top) = self.runs.last_mut() {
            top.2 = power;
        }
    }

    /// Merges pending runs `i` and `i + 1`.
    fn merge_at(&mut self, i: usize) {
        let (mut base_a, mut len_a, _) = self.runs[i];
        let (base_b, mut len_b, power_b) = self.runs[i + 1];
        self.runs[i].1 = len_a + len_b;
        self.runs[i].2 = power_b;
        self.runs.remove(i + 1);

        // Elements of A that are not after B's first element are already in place.
        let key = self.a[base_b].clone();
        let k = gallop_right(self.a, self.cmp, &key, base_a, len_a, 0);
        base_a += k;
        len_a -= k;
        if len_a == 0 {
            return;
        }
        // Elements of B that are not before A's last element are already in place.
        let key = self.a[base_a + len_a - 1].clone();
        len_b = gallop_left(self.a, self.cmp, &key, base_b, len_b, len_b - 1);
        if len_b == 0 {
            return;
        }
        if len_a <= len_b {
            self.merge_low(base_a, len_a, base_b, len_b);
        } else {
            self.merge_high(base_a, len_a, base_b, len_b);
        }
    }

    /// Merges with A (the shorter run) copied out, filling from the left.
    fn merge_low(&mut self, base_a: usize, mut len_a: usize, base_b: usize, mut len_b: usize) {
        let tmp: Vec<T> = self.a[base_a..base_a + len_a].to_vec();
        let mut dest = base_a;
        let mut ta = 0;
        let mut cb = base_b;
        self.a[dest] = self.a[cb].clone();
        dest += 1;
        cb += 1;
        len_b -= 1;
        // How the merge ends: A's rest copied in, or B's rest moved down with A's last
        // element after it.
        let copy_b_then_last_a;
        'outer: {
            if len_b == 0 {
                copy_b_then_last_a = false;
                break 'outer;
            }
            if len_a == 1 {
                copy_b_then_last_a = true;
                break 'outer;
            }
            let mut min_gallop = self.min_gallop;
            loop {
                let mut wins_a = 0;
                let mut wins_b = 0;
                loop {
                    if self.less(&self.a[cb], &tmp[ta]) {
                        self.a[dest] = self.a[cb].clone();
                        dest += 1;
                        cb += 1;
                        wins_b += 1;
                        wins_a = 0;
                        len_b -= 1;
                        if len_b == 0 {
                            copy_b_then_last_a = false;
                            break 'outer;
                        }
                        if wins_b >= min_gallop {
                            break;
                        }
                    } else {
                        self.a[dest] = tmp[ta].clone();
                        dest += 1;
                        ta += 1;
                        wins_a += 1;
                        wins_b = 0;
                        len_a -= 1;
                        if len_a == 1 {
                            copy_b_then_last_a = true;
                            break 'outer;
                        }
                        if wins_a >= min_gallop {
                            break;
                        }
                    }
                }
                min_gallop += 1;
                let mut first = true;
                while first || wins_a >= MIN_GALLOP || wins_b >= MIN_GALLOP {
                    first = false;
                    min_gallop = min_gallop.saturating_sub(1).max(1);
                    self.min_gallop = min_gallop;

                    let key = self.a[cb].clone();
                    wins_a = gallop_right(&tmp, self.cmp, &key, ta, len_a, 0);
                    if wins_a > 0 {
                        self.a[dest..dest + wins_a].clone_from_slice(&tmp[ta..ta + wins_a]);
                        dest += wins_a;
                        ta += wins_a;
                        len_a -= wins_a;
                        if len_a == 1 {
                            copy_b_then_last_a = true;
                            break 'outer;
                        }
                        // Only an inconsistent comparator empties A here.
                        if len_a == 0 {
                            copy_b_then_last_a = false;
                            break 'outer;
                        }
                    }
                    self.a[dest] = self.a[cb].clone();
                    dest += 1;
                    cb += 1;
                    len_b -= 1;
                    if len_b == 0 {
                        copy_b_then_last_a = false;
                        break 'outer;
                    }

                    let key = tmp[ta].clone();
                    wins_b = gallop_left(self.a, self.cmp, &key, cb, len_b, 0);
                    if wins_b > 0 {
                        for j in 0..wins_b {
                            self.a[dest + j] = self.a[cb + j].clone();
                        }
                        dest += wins_b;
                        cb += wins_b;
                        len_b -= wins_b;
                        if len_b == 0 {
                            copy_b_then_last_a = false;
                            break 'outer;
                        }
                    }
                    self.a[dest] = tmp[ta].clone();
                    dest += 1;
                    ta += 1;
                    len_a -= 1;
                    if len_a == 1 {
                        copy_b_then_last_a = true;
                        break 'outer;
                    }
                }
                min_gallop += 1;
                self.min_gallop = min_gallop;
            }
        }
        if copy_b_then_last_a {
            for j in 0..len_b {
                self.a[dest + j] = self.a[cb + j].clone();
            }
            self.a[dest + len_b] = tmp[ta].clone();
        } else if len_a > 0 {
            self.a[dest..dest + len_a].clone_from_slice(&tmp[ta..ta + len_a]);
        }
    }

    /// Merges with B (the shorter run) copied out, filling from the right.
    fn merge_high(&mut self, base_a: usize, mut len_a: usize, base_b: usize, mut len_b: usize) {
        let tmp: Vec<T> = self.a[base_b..base_b + len_b].to_vec();
        // Cursors point at the last unmerged element of each side; `usize` positions
        // are kept one past (so they never go below zero).
        let mut dest = base_b + len_b; // one past the next slot to fill
        let mut tb = len_b; // one past B's last unmerged element in `tmp`
        let mut ca = base_a + len_a; // one past A's last unmerged element
        self.a[dest - 1] = self.a[ca - 1].clone();
        dest -= 1;
        ca -= 1;
        len_a -= 1;
        let copy_a_then_first_b;
        'outer: {
            if len_a == 0 {
                copy_a_then_first_b = false;
                break 'outer;
            }
            if len_b == 1 {
                copy_a_then_first_b = true;
                break 'outer;
            }
            let mut min_gallop = self.min_gallop;
            loop {
                let mut wins_a = 0;
                let mut wins_b = 0;
                loop {
                    if self.less(&tmp[tb - 1], &self.a[ca - 1]) {
                        self.a[dest - 1] = self.a[ca - 1].clone();
                        dest -= 1;
                        ca -= 1;
                        wins_a += 1;
                        wins_b = 0;
                        len_a -= 1;
                        if len_a == 0 {
                            copy_a_then_first_b = false;
                            break 'outer;
                        }
                        if wins_a >= min_gallop {
                            break;
                        }
                    } else {
                        self.a[dest - 1] = tmp[tb - 1].clone();
                        dest -= 1;
                        tb -= 1;
                        wins_b += 1;
                        wins_a = 0;
                        len_b -= 1;
                        if len_b == 1 {
                            copy_a_then_first_b = true;
                            break 'outer;
                        }
                        if wins_b >= min_gallop {
                            break;
                        }
                    }
                }
                min_gallop += 1;
                let mut first = true;
                while first || wins_a >= MIN_GALLOP || wins_b >= MIN_GALLOP {
                    first = false;
                    min_gallop = min_gallop.saturating_sub(1).max(1);
                    self.min_gallop = min_gallop;

                    let key = tmp[tb - 1].clone();
                    let k = gallop_right(self.a, self.cmp, &key, base_a, len_a, len_a - 1);
                    wins_a = len_a - k;
                    if wins_a > 0 {
                        dest -= wins_a;
                        ca -= wins_a;
                        for j in (0..wins_a).rev() {
                            self.a[dest + j] = self.a[ca + j].clone();
                        }
                        len_a -= wins_a;
                        if len_a == 0 {
                            copy_a_then_first_b = false;
                            break 'outer;
                        }
                    }
                    self.a[dest - 1] = tmp[tb - 1].clone();
                    dest -= 1;
                    tb -= 1;
                    len_b -= 1;
                    if len_b == 1 {
                        copy_a_then_first_b = true;
                        break 'outer;
                    }

                    let key = self.a[ca - 1].clone();
                    let k = gallop_left(&tmp, self.cmp, &key, 0, len_b, len_b - 1);
                    wins_b = len_b - k;
                    if wins_b > 0 {
                        dest -= wins_b;
                        tb -= wins_b;
                        self.a[dest..dest + wins_b].clone_from_slice(&tmp[tb..tb + wins_b]);
                        len_b -= wins_b;
                        if len_b == 1 {
                            copy_a_then_first_b = true;
                            break 'outer;
                        }
                        // Only an inconsistent comparator empties B here.
                        if len_b == 0 {
                            copy_a_then_first_b = false;
                            break 'outer;
                        }
                    }
                    self.a[dest - 1] = self.a[ca - 1].clone();
                    dest -= 1;
                    ca -= 1;
                    len_a -= 1;
                    if len_a == 0 {
                        copy_a_then_first_b = false;
                        break 'outer;
                    }
                }
                min_gallop += 1;
                self.min_gallop = min_gallop;
            }
        }
        if copy_a_then_first_b {
            // A's rest moves right by one run; B's first element goes before it.
            dest -= len_a;
            ca -= len_a;
            for j in (0..len_a).rev() {
                self.a[dest + j] = self.a[ca + j].clone();
            }
            self.a[dest - 1] = tmp[tb - 1].clone();
        } else if len_b > 0 {
            let start = dest - len_b;
            self.a[start..dest].clone_from_slice(&tmp[..len_b]);
        }
    }
}

/// The power of the boundary between run `[s1, s1 + n1)` and the run of `n2` after it,
/// in a list of `n`: the first bit at which the binary fractions of the two runs'
/// midpoints (as fractions of `n`) differ.
fn node_power(s1: usize, n1: usize, n2: usize, n: usize) -> u32 {
    // Twice the midpoints, so that they are integers.
    let mut a = 2 * s1 + n1;
    let mut b = a + n1 + n2;
    let mut power = 0;
    loop {
        power += 1;
        if a >= n {
            a -= n;
            b -= n;
        } else if b >= n {
            return power;
        }
        a <<= 1;
        b <<= 1;
    }
}

/// Where `key` goes in the sorted `a[base..base+len]`, before any equal elements: the
/// `k` with `a[base+k-1] < key <= a[base+k]`, searched outwards from `hint`.
fn gallop_left<T>(
    a: &[T],
    cmp: &impl Fn(&T, &T) -> f64,
    key: &T,
    base: usize,
    len: usize,
    hint: usize,
) -> usize {
    let mut last = 0usize;
    let mut ofs = 1usize;
    // `last` and `ofs` end as a half-open window (last, ofs] relative to base, where
    // `last` may be -1: keep it shifted by one.
    let (mut lo, mut hi);
    if cmp(&a[base + hint], key) < 0.0 {
        let max = len - hint;
        while ofs < max {
            if cmp(&a[base + hint + ofs], key) >= 0.0 {
                break;
            }
            last = ofs;
            ofs = (ofs << 1) + 1;
        }
        ofs = ofs.min(max);
        lo = hint + last + 1;
        hi = hint + ofs;
    } else {
        let max = hint + 1;
        while ofs < max {
            if cmp(&a[base + hint - ofs], key) < 0.0 {
                break;
            }
            last = ofs;
            ofs = (ofs << 1) + 1;
        }
        ofs = ofs.min(max);
        // (hint - ofs, hint - last]; hint - ofs may be -1, so lo = hint - ofs + 1.
        lo = hint + 1 - ofs;
        hi = hint - last;
    }
    while lo < hi {
        let m = lo + ((hi - lo) >> 1);
        if cmp(&a[base + m], key) < 0.0 {
            lo = m + 1;
        } else {
            hi = m;
        }
    }
    hi
}

/// Where `key` goes in the sorted `a[base..base+len]`, after any equal elements: the
/// `k` with `a[base+k-1] <= key < a[base+k]`, searched outwards from `hint`.
fn gallop_right<T>(
    a: &[T],
    cmp: &impl Fn(&T, &T) -> f64,
    key: &T,
    base: usize,
    len: usize,
    hint: usize,
) -> usize {
    let mut last = 0usize;
    let mut ofs = 1usize;
    let (mut lo, mut hi);
    if cmp(key, &a[base + hint]) < 0.0 {
        let max = hint + 1;
        while ofs < max {
            if cmp(key, &a[base + hint - ofs]) >= 0.0 {
                break;
            }
            last = ofs;
            ofs = (ofs << 1) + 1;
        }
        ofs = ofs.min(max);
        lo = hint + 1 - ofs;
        hi = hint - last;
    } else {
        let max = len - hint;
        while ofs < max {
            if cmp(key, &a[base + hint + ofs]) < 0.0 {
                break;
            }
            last = ofs;
            ofs = (ofs << 1) + 1;
        }
        ofs = ofs.min(max);
        lo = hint + last + 1;
        hi = hint + ofs;
    }
    while lo < hi {
        let m = lo + ((hi - lo) >> 1);
        if cmp(key, &a[base + m]) < 0.0 {
            hi = m;
        } else {
            lo = m + 1;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> f64 {
        s.parse().unwrap_or(f64::NAN)
    }

    #[test]
    fn consistent_comparators_sort_stably() {
        let mut v: Vec<(i32, usize)> = (0..500).map(|i| ((i * 7919) % 13, i as usize)).collect();
        sort_by(&mut v, |a, b| (a.0 - b.0) as f64);
        assert!(v
            .windows(2)
            .all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)));
    }

    #[test]
    fn nan_stays_where_the_algorithm_leaves_it() {
        let mut v = vec!["1", "5", "n/a", "2"];
        sort_by(&mut v, |a, b| num(a) - num(b));
        assert_eq!(v, ["1", "2", "5", "n/a"]);
        let mut v = vec![
            "4", "33", "35", "38", "56", "n/a", "139", "141", "abc", "83",
        ];
        sort_by(&mut v, |a, b| num(a) - num(b));
        assert_eq!(
            v,
            ["4", "33", "35", "38", "56", "n/a", "83", "139", "141", "abc"]
        );
        let mut v = vec!["n/a", "2", "1"];
        sort_by(&mut v, |a, b| num(a) - num(b));
        assert_eq!(v, ["n/a", "1", "2"]);
    }
}
