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

/// How a declared version that is not a plain release number is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    /// The release number it is read as (`None`: no version at all).
    pub version: Option<String>,
    /// How it was read, for the warning (`None`: it is a plain release number).
    pub how: Option<String>,
}

/// Reads a declared version as a person means it: `1.2.0` as itself; `v1.2.0` and
/// `BIDS 1.2.0` (a word and a space before the number) as `1.2.0`; a pre-release such as
/// `1.0.0rc3`, `1.0.0-rc2` or `1.0.0.dev1` as the release it leads to (`1.0.0`); empty
/// text, or text without a leading release number (`BEP010`), as no version.
pub fn read_version(text: &str) -> Reading {
    let t = text.trim();
    let none = |why: &str| Reading {
        version: None,
        how: Some(why.to_owned()),
    };
    if t.is_empty() {
        return none("is empty");
    }
    // The number starts at the first digit; what comes before must be a `v` or a word
    // followed by a space (`BIDS 1.2.0`, `BIDS v1.2.0`).
    let Some(start) = t.find(|c: char| c.is_ascii_digit()) else {
        return none("holds no version number");
    };
    let prefix = &t[..start];
    let prefix_ok = match prefix.strip_suffix(['v', 'V']) {
        Some(rest) => rest.is_empty() || rest.ends_with(char::is_whitespace),
        None => prefix.is_empty() || prefix.ends_with(char::is_whitespace),
    };
    if !prefix_ok {
        return none("is not a version number");
    }
    let rest = &t[start..];
    let core_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let core = rest[..core_len].trim_end_matches('.');
    let tail = &rest[core.len()..];
    if core.split('.').any(|p| p.is_empty()) {
        return none("is not a version number");
    }
    // Missing parts are zeros: `1.2` is `1.2.0`.
    let mut parts: Vec<&str> = core.split('.').collect();
    while parts.len() < 3 {
        parts.push("0");
    }
    let release = parts.join(".");
    let tail_word = tail
        .trim_start_matches(['-', '.', '_', '+'])
        .to_ascii_lowercase();
    let pre = ["rc", "alpha", "beta", "dev", "pre", "a", "b"]
        .iter()
        .any(|w| tail_word.starts_with(w));
    let how = if !tail.is_empty() && pre {
        let kind = if tail_word.starts_with("rc") {
            "a release candidate"
        } else {
            "a pre-release"
        };
        Some(format!("is read as {release} ({kind} of {release})"))
    } else if !tail.is_empty() {
        return none("is not a version number");
    } else if !prefix.is_empty() || release != t {
        Some(format!("is read as {release}"))
    } else {
        None
    };
    Reading {
        version: Some(release),
        how,
    }
}

/// Chooses the schema version to validate with.
///
/// `requested` (the `--std-version` flag) wins, else `dataset_version` (the dataset's
/// version key in `dataset_description.json`), else the newest supported version.
/// The version is first read as a person means it ([`read_version`]): `v1.2.0`,
/// `BIDS 1.2.0` and the release candidates of 1.0.0 (`1.0.0rc3`, `1.0.0-rc2`) are
/// releases; empty text or no version number (`BEP010`) means the newest. A version that
/// is not supported is replaced: one newer than every supported version → the newest;
/// one older than every supported version → the oldest; one in between (`1.9.2`, not a
/// release) → the newest supported version below it. Every replacement and reading
/// comes with a warning saying how the version was read and which rules apply.
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
    let reading = read_version(wanted);
    let warn = |used: &str, why: String| {
        SchemaError::new(
            ErrorKind::Version,
            "",
            format!("{source} {wanted:?} {why}; using the rules of version {used}"),
        )
    };
    let Some(release) = reading.version else {
        let why = reading.how.unwrap_or_default();
        return (
            newest.clone(),
            Some(warn(newest, format!("{why}, so the newest rules apply"))),
        );
    };
    let read_as = reading.how.map(|h| format!("{h}, ")).unwrap_or_default();
    if let Some(exact) = supported
        .iter()
        .find(|s| compare_versions(s, &release) == Ordering::Equal)
    {
        let warning =
            (!read_as.is_empty()).then(|| warn(exact, read_as.trim_end_matches(", ").to_owned()));
        return (exact.clone(), warning);
    }
    let (used, why) = if compare_versions(&release, newest) == Ordering::Greater {
        (newest.clone(), "newer than every supported version")
    } else if compare_versions(&release, oldest) == Ordering::Less {
        (oldest.clone(), "older than every supported version")
    } else {
        let below = supported
            .iter()
            .filter(|s| compare_versions(s, &release) == Ordering::Less)
            .max_by(|a, b| compare_versions(a, b))
            .unwrap_or(newest);
        (
            below.clone(),
            "not a release: the nearest earlier release applies",
        )
    };
    let why = if read_as.is_empty() {
        format!("is {why}")
    } else {
        format!("{read_as}{why}")
    };
    (used.clone(), Some(warn(&used, why)))
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
        assert!(w
            .unwrap()
            .message
            .contains("using the rules of version 1.11.1"));
        let (u, w) = select_version(Some("1.10.5"), None, &s);
        assert_eq!(u, "1.10.0");
        assert!(w.is_some());
        let (u, _) = select_version(Some("1.0.0"), None, &s);
        assert_eq!(u, "1.8.0");
        let (u, _) = select_version(Some("banana"), None, &s);
        assert_eq!(u, "1.11.1");
    }

    #[test]
    fn declared_versions_are_read_as_meant() {
        let cases: &[(&str, Option<&str>, bool)] = &[
            ("1.2.0", Some("1.2.0"), false),
            ("v1.2.0", Some("1.2.0"), true),
            ("BIDS 1.2.0", Some("1.2.0"), true),
            ("BIDS v1.2.0", Some("1.2.0"), true),
            ("1.0.0rc3", Some("1.0.0"), true),
            ("1.0.0-rc2", Some("1.0.0"), true),
            ("1.0.0-rc1", Some("1.0.0"), true),
            ("1.2", Some("1.2.0"), true),
            ("1.9.2", Some("1.9.2"), false),
            ("BEP010", None, true),
            ("", None, true),
            ("  ", None, true),
            ("1.2.0 and more", None, true),
            ("vv1.2.0", None, true),
        ];
        for (text, version, how) in cases {
            let r = read_version(text);
            assert_eq!(r.version.as_deref(), *version, "{text:?}");
            assert_eq!(r.how.is_some(), *how, "{text:?}: {:?}", r.how);
        }
    }
}
