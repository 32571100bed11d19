//! The work bound of backtracking regular-expression searches: which patterns may cost
//! more than a low-degree polynomial ([`costly`]), the time budget such a search runs
//! under ([`BUDGET`], [`run_budgeted`]), and the patterns that ran past it
//! ([`over_budget`]). Shared by searches (`regex_cache.rs`) and whole-value matching
//! (`full_match.rs`); see `docs/reliability.md`, "Regular expressions".

use std::sync::{mpsc, Mutex, OnceLock};
use std::time::Duration;

/// The time a budgeted backtracking search (or replacement) may take.
pub const BUDGET: Duration = Duration::from_secs(1);

/// Whether a backtracking search with `pattern` may cost more than a low-degree
/// polynomial: a group quantified other than by `?` (`(a+)+`, `(a?){30}`), two or more unbounded
/// quantifiers (`.*.*x`), or a back-reference. A structural over-approximation: a
/// pattern it passes runs in at most about n² steps on a text of n characters.
pub(crate) fn costly(pattern: &str) -> bool {
    let chars: Vec<char> = pattern.chars().collect();
    let mut unbounded = 0;
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            if chars
                .get(i + 1)
                .is_some_and(|d| d.is_ascii_digit() && *d != '0')
                || chars.get(i + 1) == Some(&'k')
            {
                return true;
            }
            i += 2;
            continue;
        }
        if in_class {
            in_class = c != ']';
            i += 1;
            continue;
        }
        match c {
            '[' => in_class = true,
            '*' | '+' | '{' => {
                if i > 0 && chars[i - 1] == ')' {
                    return true;
                }
                if c != '{' || !is_fixed_count(&chars[i..]) {
                    unbounded += 1;
                }
                if unbounded >= 2 {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// Whether `chars` starts with `{n}` (a fixed count, which repeats nothing optionally).
fn is_fixed_count(chars: &[char]) -> bool {
    let close = chars.iter().position(|&c| c == '}');
    match close {
        Some(end) if end > 1 => chars[1..end].iter().all(char::is_ascii_digit),
        _ => false,
    }
}

/// Runs `work` on a thread of its own for at most [`BUDGET`]: `None` past it. The thread
/// is then left to finish on its own (a backtracking search cannot be interrupted).
pub(crate) fn run_budgeted<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("nidos-regex".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .ok()?;
    rx.recv_timeout(BUDGET).ok()
}

/// Adds a pattern to those [`over_budget`] lists.
pub(crate) fn record_over_budget(pattern: &str) {
    if let Ok(mut list) = exhausted_list().lock() {
        if !list.iter().any(|p| p == pattern) {
            list.push(pattern.to_string());
        }
    }
}

fn exhausted_list() -> &'static Mutex<Vec<String>> {
    static LIST: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    LIST.get_or_init(|| Mutex::new(Vec::new()))
}

/// The patterns whose searches ran past [`BUDGET`] in this process, in the order met.
pub fn over_budget() -> Vec<String> {
    exhausted_list()
        .lock()
        .map(|l| l.clone())
        .unwrap_or_default()
}
