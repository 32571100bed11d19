//! `--schema` given as a release tag (`v1.9.0`, `stable`, `latest`) or a URL, as the
//! reference validator accepts it: the published compiled schema is downloaded once into
//! the user's cache and read from there, so later runs work offline.
//!
//! Where a brand's schemas are published is schema data (`published_schema` in
//! `meta/brands.yaml`); `NIDOS_PUBLISHED_SCHEMA` overrides it (a URL with `{tag}`), and
//! `NIDOS_CACHE_DIR` the cache folder (default: the platform's cache directory, e.g.
//! `~/.cache/nidos` on Linux). A release tag `vX.Y.Z` names a fixed schema, so a cached
//! copy is used without asking the network; `stable`, `latest` and URLs are downloaded
//! again when the network answers, and fall back to the cached copy when it does not.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;

/// Environment variable: the published-schema URL template (`{tag}` for the tag).
pub const PUBLISHED_ENV: &str = "NIDOS_PUBLISHED_SCHEMA";
/// Environment variable: the folder that holds nidos's cache.
pub const CACHE_ENV: &str = "NIDOS_CACHE_DIR";

/// The largest schema accepted from the network (published ones are about 1 MB).
const MAX_BYTES: u64 = 64 << 20;

/// A `--schema` argument that names a published schema rather than a local path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// As the user wrote it (`v1.9.0`, or the URL).
    pub label: String,
    pub url: String,
    /// A fixed release: a cached copy is never refreshed.
    pub fixed: bool,
}

/// Whether `arg` is a release tag the way the reference accepts one.
fn is_release_tag(arg: &str) -> bool {
    if arg == "stable" || arg == "latest" {
        return true;
    }
    let Some(rest) = arg.strip_prefix('v') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// What `--schema ARG` names when it is not an existing local path: a release tag or
/// a URL. `dataset` selects the brand whose publication place a tag refers to.
pub fn remote(arg: &Path, dataset: Option<&Path>) -> anyhow::Result<Option<Remote>> {
    if arg.exists() {
        return Ok(None);
    }
    let Some(text) = arg.to_str() else {
        return Ok(None);
    };
    if text.starts_with("http://") || text.starts_with("https://") {
        return Ok(Some(Remote {
            label: text.to_owned(),
            url: text.to_owned(),
            fixed: false,
        }));
    }
    if !is_release_tag(text) {
        return Ok(None);
    }
    let template = match std::env::var(PUBLISHED_ENV) {
        Ok(t) if !t.is_empty() => Some(t),
        _ => nidos_schema::published_schema_template(
            dataset.and_then(nidos_dataset::read_description).as_ref(),
        )
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("reading where the bundled rules say schemas are published")?,
    };
    let Some(template) = template else {
        anyhow::bail!(
            "--schema {text}: the bundled rules name no place where schemas are published \
             (published_schema in meta/brands.yaml; or set {PUBLISHED_ENV}); pass a \
             compiled schema file instead"
        );
    };
    Ok(Some(Remote {
        label: text.to_owned(),
        url: template.replace("{tag}", text),
        fixed: text.starts_with('v'),
    }))
}

/// The folder downloaded schemas are kept in.
pub fn cache_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(CACHE_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("schemas"));
    }
    let base = dirs::cache_dir().ok_or_else(|| {
        anyhow::anyhow!("this platform has no cache directory; set {CACHE_ENV} to a folder")
    })?;
    Ok(base.join("nidos").join("schemas"))
}

/// The longest cache file name kept readable; a longer one is cut and ends in a hash of
/// the URL (file systems refuse names over 255 bytes).
const MAX_NAME: usize = 120;

/// The cache file of `url`: the URL without its scheme, every character other than
/// letters, digits, `.`, `-` and `_` as `_`, ending in `.json`. A name longer than
/// [`MAX_NAME`] keeps its first characters and ends in a hash of the whole URL.
pub fn cache_name(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let mut name: String = rest
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !name.ends_with(".json") {
        name.push_str(".json");
    }
    if name.len() > MAX_NAME {
        // Only ASCII is left, so any byte index is a character boundary.
        name.truncate(MAX_NAME - 22);
        name = format!("{name}-{:016x}.json", fnv1a(url.as_bytes()));
    }
    name
}

/// The 64-bit FNV-1a hash: stable across builds and platforms, unlike std's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The local file holding the schema `remote` names: the cached copy, downloaded
/// first when needed. The second value is a warning to show (a stale copy used).
pub fn fetch(remote: &Remote) -> anyhow::Result<(PathBuf, Option<String>)> {
    let dir = cache_dir()?;
    let file = dir.join(cache_name(&remote.url));
    if remote.fixed && file.is_file() {
        return Ok((file, None));
    }
    match download(&remote.url) {
        Ok(bytes) => {
            store(&dir, &file, &bytes)?;
            Ok((file, None))
        }
        Err(e) if file.is_file() => Ok((
            file.clone(),
            Some(format!(
                "could not refresh the schema {} ({e:#}); using the copy cached at {}",
                remote.label,
                file.display()
            )),
        )),
        Err(e) => Err(anyhow::anyhow!(
            "--schema {}: cannot download {} ({e:#}), and there is no cached copy at {}. {}",
            remote.label,
            remote.url,
            file.display(),
            offline_hint(&remote.label)
        )),
    }
}

/// What works without network for a failed download of `label`: for a release tag whose
/// version the bundled rules can be pinned to, `--std-version`.
fn offline_hint(label: &str) -> String {
    let pinned = label.strip_prefix('v').filter(|v| {
        nidos_schema::Schema::bundled()
            .is_ok_and(|s| s.supported_versions.iter().any(|p| p.as_str() == *v))
    });
    match pinned {
        Some(v) => format!(
            "The bundled rules include version {v}: --std-version {v} uses them offline. \
             Or run once with network access, or pass a compiled schema file with \
             --schema FILE.json"
        ),
        None => "Run once with network access, or pass a compiled schema file with \
                 --schema FILE.json"
            .to_string(),
    }
}

/// The most redirects followed for one download.
const MAX_REDIRECTS: usize = 5;

/// The body of `url`, checked to be a compiled schema that loads as a rule set.
/// Redirects are followed here, not by the HTTP client: only to `http` and `https`
/// addresses, at most [`MAX_REDIRECTS`] of them, each request under the same time and
/// size limits.
fn download(url: &str) -> anyhow::Result<Vec<u8>> {
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .redirects(0)
        .try_proxy_from_env(true)
        .build();
    let mut current = web_url(url, None)?;
    let mut hops = 0;
    let response = loop {
        let response = agent.get(current.as_str()).call().map_err(|e| match e {
            ureq::Error::Status(code, r) => anyhow::anyhow!("HTTP {code} {}", r.status_text()),
            ureq::Error::Transport(t) => match t.message() {
                Some(m) => anyhow::anyhow!("{}: {m}", t.kind()),
                None => anyhow::anyhow!("{}", t.kind()),
            },
        })?;
        if !(300..400).contains(&response.status()) {
            break response;
        }
        let Some(location) = response.header("location") else {
            anyhow::bail!("HTTP {} without a Location to follow", response.status());
        };
        hops += 1;
        if hops > MAX_REDIRECTS {
            anyhow::bail!("more than {MAX_REDIRECTS} redirects");
        }
        current = web_url(location, Some(&current))?;
    };
    let mut bytes = Vec::new();
    response
        .into_reader()
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .context("reading the response")?;
    if bytes.len() as u64 > MAX_BYTES {
        anyhow::bail!("the response is larger than {} MB", MAX_BYTES >> 20);
    }
    check_schema(&bytes)?;
    Ok(bytes)
}

/// `text` as an address to download from (relative to `base` when it is a redirect's
/// target): `http` and `https` only.
fn web_url(text: &str, base: Option<&url::Url>) -> anyhow::Result<url::Url> {
    let parsed = match base {
        Some(b) => b.join(text),
        None => url::Url::parse(text),
    }
    .map_err(|e| anyhow::anyhow!("bad address {text:?}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        anyhow::bail!(
            "refusing to follow a redirect to {:?}: only http and https addresses are fetched",
            crate::escape::control(text)
        );
    }
    Ok(parsed)
}

/// Whether `bytes` is a compiled schema: JSON with `objects` and `rules` objects that
/// loads as a rule set. Nothing else is cached.
fn check_schema(bytes: &[u8]) -> anyhow::Result<()> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).context("the response is not JSON")?;
    let is_schema = value.get("objects").is_some_and(|v| v.is_object())
        && value.get("rules").is_some_and(|v| v.is_object());
    if !is_schema {
        anyhow::bail!("the response is JSON but not a compiled schema (no objects and rules)");
    }
    nidos_schema::Schema::from_compiled_json(value)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("the response does not load as a compiled schema")?;
    Ok(())
}

/// Writes `bytes` to `file` atomically: a new temporary file in `dir` (an unguessable
/// name, created exclusively, so no existing file or link is ever opened), then a
/// rename. The temporary file is removed on every failure.
fn store(dir: &Path, file: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the schema cache {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".download-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", tmp.path().display()))?;
    // On failure the error holds the temporary file, which is removed when dropped.
    tmp.persist(file)
        .map_err(|e| e.error)
        .with_context(|| format!("writing {}", file.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_tags_are_recognised_as_the_reference_does() {
        for t in ["v1.9.0", "v10.0.12", "stable", "latest"] {
            assert!(is_release_tag(t), "{t}");
        }
        for t in ["1.9.0", "v1.9", "v1.9.0-rc", "vx.y.z", "Stable", ""] {
            assert!(!is_release_tag(t), "{t}");
        }
    }

    #[test]
    fn cache_names_are_plain_file_names() {
        assert_eq!(
            cache_name("https://example.org/en/v1.9.0/schema.json"),
            "example.org_en_v1.9.0_schema.json"
        );
        assert_eq!(
            cache_name("http://127.0.0.1:8080/s?v=1"),
            "127.0.0.1_8080_s_v_1.json"
        );
        let long = format!("https://example.org/{}", "a".repeat(400));
        let name = cache_name(&long);
        assert!(name.len() <= MAX_NAME, "{name}");
        assert!(name.starts_with("example.org_aaa") && name.ends_with(".json"));
        assert_ne!(name, cache_name(&format!("{long}b")));
    }

    #[test]
    fn only_web_addresses_are_followed() {
        let base = url::Url::parse("http://127.0.0.1:1/a/b.json").ok();
        assert!(web_url("file:///etc/passwd", base.as_ref()).is_err());
        assert!(web_url("ftp://x/y", base.as_ref()).is_err());
        let next = web_url("../c.json", base.as_ref()).map(|u| u.to_string());
        assert_eq!(next.ok().as_deref(), Some("http://127.0.0.1:1/c.json"));
    }
}
