//! Version comparison, version selection and the location of the bundled schema.

use std::cmp::Ordering;
use std::path::PathBuf;

use crate::error::{ErrorKind, SchemaError, Warning};

/// Environment variable that overrides the bundled schema directory.
pub const BUNDLED_ENV: &str = "NIDOS_SCHEMA_DIR";

fn parts(v: &str) -> (Vec<u64>, Option<&str>) {
    let v = v.trim().trim_start_matches('v');
    let (core, pre) = match v.find(['-', '+']) {
        Some(i) => (&v[..i], Some(&v[i + 1..])),
        None => (v, None),
    };
    let nums = core
        .split('.')
        .map(|p| p.parse::<u64>().unwrap_or(0))
        .collect();
    (nums, pre)
}

/// True when `v` looks like a version: dotted numbers (`1.10.0`), optionally with a
/// pre-release suffix (`0.7.3-dev`).
pub fn is_version(v: &str) -> bool {
    let v = v.trim();
    let core = v.split(['-', '+']).next().unwrap_or("");
    !core.is_empty()
        && core
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Compares two versions numerically part by part (`1.10.0 > 1.9.0`, missing parts
/// are 0, a pre-release sorts before its release).
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let (pa, ra) = parts(a);
    let (pb, rb) = parts(b);
    let n = pa.len().max(pb.len());
    for i in 0..n {
        let x = pa.get(i).copied().unwrap_or(0);
        let y = pb.get(i).copied().unwrap_or(0);
        match x.cmp(&y) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    match (ra, rb) {
        (None, None) => Ordering::Equal,
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (Some(x), Some(y)) => x.cmp(y),
    }
}

/// Chooses the schema version to validate with.
///
/// `requested` (the `--std-version` flag) wins, else `dataset_version` (the dataset's
/// version key in `dataset_description.json`), else the newest supported version.
/// A version that is not supported is replaced, with a warning naming the version used:
/// one newer than every supported version → the newest; one older than every supported
/// version → the oldest; one in between → the newest supported version below it.
pub fn select_version(
    requested: Option<&str>,
    dataset_version: Option<&str>,
    supported: &[String],
) -> (String, Option<Warning>) {
    let newest = supported.iter().max_by(|a, b| compare_versions(a, b));
    let oldest = supported.iter().min_by(|a, b| compare_versions(a, b));
    let (wanted, source) = match (requested, dataset_version) {
        (Some(r), _) => (r.trim(), "requested version"),
        (None, Some(d)) => (d.trim(), "dataset version"),
        (None, None) => match newest {
            Some(n) => return (n.clone(), None),
            None => {
                return (
                    String::new(),
                    Some(SchemaError::new(
                        ErrorKind::Version,
                        "",
                        "the schema lists no supported versions",
                    )),
                )
            }
        },
    };
    let (Some(newest), Some(oldest)) = (newest, oldest) else {
        return (
            wanted.to_owned(),
            Some(SchemaError::new(
                ErrorKind::Version,
                "",
                "the schema lists no supported versions",
            )),
        );
    };
    if let Some(exact) = supported
        .iter()
        .find(|s| compare_versions(s, wanted) == Ordering::Equal && is_version(wanted))
    {
        return (exact.clone(), None);
    }
    let (used, why) = if !is_version(wanted) {
        (newest.clone(), "is not a version")
    } else if compare_versions(wanted, newest) == Ordering::Greater {
        (newest.clone(), "is newer than every supported version")
    } else if compare_versions(wanted, oldest) == Ordering::Less {
        (oldest.clone(), "is older than every supported version")
    } else {
        let below = supported
            .iter()
            .filter(|s| compare_versions(s, wanted) == Ordering::Less)
            .max_by(|a, b| compare_versions(a, b))
            .unwrap_or(newest);
        (below.clone(), "is not supported")
    };
    let w = SchemaError::new(
        ErrorKind::Version,
        "",
        format!("{source} {wanted:?} {why}; using schema version {used}"),
    );
    (used, Some(w))
}

/// The YAML tree that replaces the embedded rules: `NIDOS_SCHEMA_DIR` when set and
/// not empty.
pub fn bundled_override() -> Option<PathBuf> {
    std::env::var_os(BUNDLED_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// The directory of the bundled Std schema tree as YAML (the rules are also embedded
/// in the library: see [`crate::load_bundled`]).
///
/// In order: the `NIDOS_SCHEMA_DIR` environment variable; a `schema/` directory next
/// to the running executable (or in `../share/nidos/schema` relative to it); the
/// repository's `schema/` directory as seen when this crate was built.
pub fn bundled_schema_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(BUNDLED_ENV) {
        if !d.is_empty() {
            return PathBuf::from(d);
        }
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            for cand in [dir.join("schema"), dir.join("../share/nidos/schema")] {
                if cand.join("objects").is_dir() {
                    return cand;
                }
            }
        }
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ordering() {
        assert_eq!(compare_versions("1.10.0", "1.9.0"), Ordering::Greater);
        assert_eq!(compare_versions("1.9", "1.9.0"), Ordering::Equal);
        assert_eq!(compare_versions("0.7.3-dev", "0.7.3"), Ordering::Less);
    }

    #[test]
    fn selection() {
        let s = v(&["1.8.0", "1.9.0", "1.10.0", "1.11.1"]);
        assert_eq!(select_version(None, None, &s), ("1.11.1".into(), None));
        assert_eq!(select_version(Some("1.9.0"), Some("1.8.0"), &s).0, "1.9.0");
        assert_eq!(
            select_version(None, Some("1.8.0"), &s),
            ("1.8.0".into(), None)
        );
        let (u, w) = select_version(None, Some("2.0.0"), &s);
        assert_eq!(u, "1.11.1");
        assert!(w.unwrap().message.contains("using schema version 1.11.1"));
        let (u, w) = select_version(Some("1.10.5"), None, &s);
        assert_eq!(u, "1.10.0");
        assert!(w.is_some());
        let (u, _) = select_version(Some("1.0.0"), None, &s);
        assert_eq!(u, "1.8.0");
        let (u, _) = select_version(Some("banana"), None, &s);
        assert_eq!(u, "1.11.1");
    }
}
