//! `NIDOS_TIMING=1`: the wall time and memory of each phase of a run, on stderr.

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Phase durations on stderr when `NIDOS_TIMING` is set (profiling aid). Given to the
/// engine (`Options::phases`) it also times the phases of a dataset's validation.
#[derive(Debug)]
pub struct Timer {
    on: bool,
    last: Mutex<Instant>,
}

impl Timer {
    pub fn start() -> Timer {
        Timer {
            on: std::env::var_os("NIDOS_TIMING").is_some(),
            last: Mutex::new(Instant::now()),
        }
    }

    /// Whether laps are written (`NIDOS_TIMING` is set).
    pub fn on(&self) -> bool {
        self.on
    }

    pub fn lap(&self, phase: &str) {
        if self.on {
            let now = Instant::now();
            // Resident memory in all, and the part of it that is the program's own
            // (anonymous) memory rather than its mapped files (code, the built-in rules).
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_string())
                    .unwrap_or_default()
            };
            let rss = format!("{}, anon {}", field("VmRSS:"), field("RssAnon:"));
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            eprintln!(
                "nidos timing: {:>8.1} ms  {phase} (RSS {rss})",
                (now - *last).as_secs_f64() * 1e3
            );
            *last = now;
        }
    }
}

impl nidos_validate::Phases for Timer {
    fn begin(&self) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn lap(&self, phase: &str) {
        Timer::lap(self, phase);
    }
}
