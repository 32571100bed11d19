//! nidos-validate.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
