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
            let rss = std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|t| {
                    t.lines()
                        .find(|l| l.starts_with("VmRSS:"))
                        .map(|l| l.trim_start_matches("VmRSS:").trim().to_string())
                })
                .unwrap_or_default();
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
