//! Tells the tests whether `../shared` (the conformance material beside the repository)
//! is present: without it, the tests that need it are reported as ignored, not passed.

#[path = "../nidos-dataset/shared_cfg.rs"]
mod shared_cfg;

fn main() {
    shared_cfg::tell_whether_shared_is_present();
}
