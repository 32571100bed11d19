//! The table cache is bounded (least recently used tables are dropped first): with a zero
//! or tiny budget tables are parsed again per use, and every context sees exactly what
//! it sees with the default budget.

use nidos_dataset::{Dataset, OpenOptions};
use nidos_expr::Context;

mod common;

use common::{rules_and_dataset, write};

#[test]
fn zero_budget_gives_the_same_contexts() {
    let (schema, dir) = rules_and_dataset("participant_id\tage\nsub-01\t30\nsub-02\t40\n");
    let root = dir.path();
    for sub in ["01", "02"] {
        for run in 1..=3 {
            let stem = format!("sub-{sub}/func/sub-{sub}_task-a_run-{run}");
            write(root, &format!("{stem}_bold.nii.gz"), "");
            write(
                root,
                &format!("{stem}_events.tsv"),
                "onset\tduration\n1\t2\n3\t\n",
            );
        }
    }
    let open = |budget: usize| {
        let opts = OpenOptions {
            table_cache_budget: budget,
            ..OpenOptions::default()
        };
        Dataset::open(root, &schema, &opts).unwrap()
    };
    let cached = open(OpenOptions::default().table_cache_budget);
    // Zero: nothing is kept. 700 bytes: about one small table, so most lookups evict
    // the least recently used one and parse again later.
    for budget in [0, 700] {
        compare(&cached, &open(budget));
    }
}

fn compare(cached: &Dataset, uncached: &Dataset) {
    assert_eq!(cached.files().len(), uncached.files().len());
    for i in 0..cached.files().len() {
        let (a, b) = (cached.context_at(i), uncached.context_at(i));
        for name in ["columns", "associations", "dataset"] {
            assert_eq!(
                a.lookup(name),
                b.lookup(name),
                "{name} of {}",
                cached.files()[i].path
            );
            // A second lookup (served from the cache, or parsed again) is the same.
            assert_eq!(b.lookup(name), uncached.context_at(i).lookup(name));
        }
        a.load_own();
        b.load_own();
        assert_eq!(
            format!("{:?}", a.load_issues()),
            format!("{:?}", b.load_issues()),
            "{}",
            cached.files()[i].path
        );
    }
}
