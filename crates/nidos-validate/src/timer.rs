//! `NIDOS_TIMING=1`: the wall time and memory of each phase of a run, on stderr.

/// Phase durations on stderr when `NIDOS_TIMING` is set (profiling aid).
pub struct Timer {
    pub(crate) on: bool,
    last: std::cell::Cell<std::time::Instant>,
}

impl Timer {
    pub fn start() -> Timer {
        Timer {
            on: std::env::var_os("NIDOS_TIMING").is_some(),
            last: std::cell::Cell::new(std::time::Instant::now()),
        }
    }

    pub fn lap(&self, phase: &str) {
        if self.on {
            let now = std::time::Instant::now();
            let rss = std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|t| {
                    t.lines()
                        .find(|l| l.starts_with("VmRSS:"))
                        .map(|l| l.trim_start_matches("VmRSS:").trim().to_string())
                })
                .unwrap_or_default();
            eprintln!(
                "nidos timing: {:>8.1} ms  {phase} (RSS {rss})",
                (now - self.last.get()).as_secs_f64() * 1e3
            );
            self.last.set(now);
        }
    }
}
