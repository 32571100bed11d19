//! Transparent huge pages, chosen by the size of the dataset.
//!
//! The allocator asks the kernel for transparent huge pages (2 MiB) on its regions. A
//! small run then takes about ten times fewer page faults: ds001 (135 files) takes 282
//! instead of 3,238, some 13 ms less CPU on a virtual machine, where a fault is costly.
//! A large run, though, holds its partly used regions as whole huge pages: 133 MB peak
//! instead of 97–102 MB for 32,000 files. So a large dataset (`scale::is_large`) is
//! validated without them.

/// Turns transparent huge pages off for this process when the dataset is large.
pub fn fit_to(large: bool) {
    if large {
        disable();
    }
}

#[cfg(target_os = "linux")]
fn disable() {
    // A flag of the process, which the kernel honours for every mapping, those already
    // made included. A kernel that refuses it leaves the huge pages on: no harm done.
    let _ = nix::sys::prctl::set_thp_disable(true);
}

#[cfg(not(target_os = "linux"))]
fn disable() {}
