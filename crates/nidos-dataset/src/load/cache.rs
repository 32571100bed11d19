//! The per-dataset cache of parsed tables (least recently used evicted, freed by the
//! thread that parsed them).

use std::sync::Arc;
use std::thread::ThreadId;

use super::TableLoad;

/// Parsed tables by file index, least recently used evicted first once their estimated
/// size passes the budget.
///
/// An evicted table is freed by the thread that parsed it, on that thread's next visit:
/// a thread freeing many small blocks another thread allocated contends for that
/// thread's allocator pool, which made two workers barely faster than one. Tables
/// waiting for their thread are bounded by the budget too; past it, whoever evicts
/// frees them.
#[derive(Debug, Default)]
pub(crate) struct TableCache {
    /// File index → (table, estimated bytes, last use, parsing thread).
    entries: foldhash::HashMap<usize, (Arc<TableLoad>, usize, u64, ThreadId)>,
    /// Last use → file index, oldest first.
    by_use: std::collections::BTreeMap<u64, usize>,
    bytes: usize,
    clock: u64,
    /// Evicted tables, with their estimated bytes, by the thread that parsed them.
    evicted: std::collections::HashMap<ThreadId, Dead>,
    /// The estimated bytes of all `evicted` tables.
    evicted_bytes: usize,
}

/// Tables (with their estimated bytes) to free once the cache's lock is released.
pub(crate) type Dead = Vec<(Arc<TableLoad>, usize)>;

impl TableCache {
    /// The cached table `idx`, and the evicted tables this thread parsed.
    pub(super) fn get(&mut self, idx: usize) -> (Option<Arc<TableLoad>>, Dead) {
        let dead = self.take_own();
        self.clock += 1;
        let clock = self.clock;
        let Some(entry) = self.entries.get_mut(&idx) else {
            return (None, dead);
        };
        self.by_use.remove(&entry.2);
        entry.2 = clock;
        self.by_use.insert(clock, idx);
        (Some(entry.0.clone()), dead)
    }

    /// Forgets table `idx` (its file changed); answers it for the caller to free.
    pub(super) fn remove(&mut self, idx: usize) -> Option<Arc<TableLoad>> {
        let (load, cost, used, _) = self.entries.remove(&idx)?;
        self.by_use.remove(&used);
        self.bytes = self.bytes.saturating_sub(cost);
        Some(load)
    }

    /// Keeps `load` (unless it alone exceeds the budget), evicting the oldest tables
    /// until the total fits. Returns the tables for this thread to free.
    pub(super) fn insert(&mut self, idx: usize, load: Arc<TableLoad>, budget: usize) -> Dead {
        let me = std::thread::current().id();
        let cost = load.approx_bytes();
        if cost > budget || self.entries.contains_key(&idx) {
            return self.take_own();
        }
        while self.bytes + cost > budget {
            let Some((_, old)) = self.by_use.pop_first() else {
                break;
            };
            if let Some((table, c, _, owner)) = self.entries.remove(&old) {
                self.bytes -= c;
                self.evicted_bytes += c;
                self.evicted.entry(owner).or_default().push((table, c));
            }
        }
        self.clock += 1;
        self.by_use.insert(self.clock, idx);
        self.entries.insert(idx, (load, cost, self.clock, me));
        self.bytes += cost;
        if self.evicted_bytes > budget {
            // Some thread has not come back for its tables: free them all here.
            self.evicted_bytes = 0;
            return std::mem::take(&mut self.evicted)
                .into_values()
                .flatten()
                .collect();
        }
        self.take_own()
    }

    /// The cached tables with their file indexes, least recently used first.
    pub(super) fn tables(&self) -> Vec<(usize, Arc<TableLoad>)> {
        self.by_use
            .values()
            .filter_map(|idx| self.entries.get(idx).map(|e| (*idx, e.0.clone())))
            .collect()
    }

    fn take_own(&mut self) -> Dead {
        let dead = self
            .evicted
            .remove(&std::thread::current().id())
            .unwrap_or_default();
        let freed: usize = dead.iter().map(|(_, c)| c).sum();
        self.evicted_bytes = self.evicted_bytes.saturating_sub(freed);
        dead
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loaders;

    /// A table of `cells` one-letter cells.
    fn table(cells: usize) -> Arc<TableLoad> {
        let t = loaders::tsv::Table::from_rows(vec!["a".into()], vec![vec!["x"]; cells]);
        Arc::new(TableLoad::new(Some(t), Vec::new()))
    }

    /// A table evicted by one thread waits for the thread that parsed it, which frees
    /// it on its next visit; tables left waiting never pass the budget.
    #[test]
    fn evicted_tables_go_back_to_their_thread() {
        let one = table(10).approx_bytes();
        let budget = 2 * one;
        let mut cache = TableCache::default();
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(cache.insert(1, table(10), budget).is_empty());
                assert!(cache.insert(2, table(10), budget).is_empty());
            });
        });
        // This thread evicts table 1 (parsed by the other): not freed here.
        assert!(cache.insert(3, table(10), budget).is_empty());
        assert_eq!(cache.get(1).0.map(|_| ()), None);
        assert_eq!(cache.evicted_bytes, one);
        // Once waiting tables pass the budget, the evicting thread frees them all.
        assert!(cache.insert(4, table(10), budget).is_empty());
        let dead = cache.insert(5, table(10), budget);
        assert_eq!(dead.len(), 3, "tables 1 and 2, and this thread's 3");
        assert_eq!(cache.evicted_bytes, 0);
        // Tables this thread parsed and another evicted come back to it.
        std::thread::scope(|s| {
            s.spawn(|| assert!(cache.insert(6, table(10), budget).is_empty()));
        });
        let (hit, dead) = cache.get(5);
        assert!(hit.is_some());
        assert_eq!(dead.len(), 1, "table 4, evicted by the other thread");
    }
}
