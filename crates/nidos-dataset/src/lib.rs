//! Datasets on disk: the file tree, file names, sidecar inheritance, associations,
//! file loaders, and the lazily built per-file context that rule expressions read.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod loaders;
