//! `dataset.tree` is left out of the `dataset` object only while a run says it is not
//! wanted; every other member is the same either way, and an object built with the tree
//! keeps being served.

use nidos_dataset::{Dataset, OpenOptions};
use nidos_expr::Value;

mod common;

use common::{rules_and_dataset, write};

fn without_tree(v: &Value) -> Vec<(String, Value)> {
    let Value::Object(o) = v else {
        panic!("dataset is not an object: {v:?}")
    };
    o.iter()
        .filter(|(k, _)| k.as_str() != "tree")
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn tree_left_out_only_when_not_wanted() {
    let (schema, dir) = rules_and_dataset("participant_id\nsub-01\n");
    let root = dir.path();
    write(root, "sub-01/anat/sub-01_T1w.nii.gz", "");
    let open = || Dataset::open(root, &schema, &OpenOptions::default()).unwrap();

    let whole = open();
    let full = whole.dataset_value();
    let tree = full.get("tree");
    assert!(
        tree.get("sub-01").get("anat").get("sub-01_T1w.nii.gz") == Value::Bool(true),
        "{tree:?}"
    );

    let lean = open();
    lean.set_tree_wanted(false);
    let value = lean.dataset_value();
    assert_eq!(value.get("tree"), Value::Null, "{value:?}");
    assert_eq!(without_tree(&value), without_tree(&full));
    // Wanted again: the whole object is built and then served in either mode.
    lean.set_tree_wanted(true);
    assert_eq!(lean.dataset_value(), full);
    lean.set_tree_wanted(false);
    assert_eq!(lean.dataset_value(), full);
}
