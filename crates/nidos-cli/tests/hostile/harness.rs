//! Running `nidos validate` on a generated dataset under a watchdog: the child is killed
//! (and the test fails) when it runs past its time limit, and its peak resident memory
//! (`VmHWM` in `/proc/<pid>/status`, Linux only) is sampled while it runs.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

pub const BIN: &str = env!("CARGO_BIN_EXE_nidos");
const SHARED_SCHEMA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/schemas/bids-1.11.1-schema-1.2.7.json"
);
const BUNDLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema");

/// Default time limit of one validation (a hang check, not a performance test).
pub const LIMIT: Duration = Duration::from_secs(60);

/// Which schema the corpus runs with, and its brand's spellings.
pub struct Brand {
    pub schema: PathBuf,
    pub version_key: &'static str,
    pub scheme: &'static str,
}

/// The upstream 1.11.1 schema from `../shared`, else the bundled Std tree.
pub fn brand() -> Brand {
    let shared = Path::new(SHARED_SCHEMA);
    if shared.exists() {
        Brand {
            schema: shared.to_path_buf(),
            version_key: "BIDSVersion",
            scheme: "bids",
        }
    } else {
        println!(
            "note: {} is absent; using the bundled schema",
            shared.display()
        );
        Brand {
            schema: PathBuf::from(BUNDLED),
            version_key: "StdVersion",
            scheme: "std",
        }
    }
}

/// A dataset being built in a temporary directory. The dataset is `<tmp>/ds`; its
/// sibling `<tmp>/outside` holds sentinel files that must never be read.
pub struct Ds {
    pub tmp: tempfile::TempDir,
    pub brand: Brand,
}

impl Ds {
    /// A small dataset that validates: description, README, participants, one T1w.
    pub fn base() -> Ds {
        let ds = Ds::empty();
        let desc = format!(
            "{{\"Name\": \"hostile\", \"{}\": \"1.11.1\", \"DatasetType\": \"raw\", \"Authors\": [\"A\", \"B\"]}}",
            ds.brand.version_key
        );
        ds.write("dataset_description.json", desc);
        ds.write(
            "README",
            "A generated dataset for robustness tests of the validator: each test adds \
             one hostile file or link to this base and checks the report.\n",
        );
        ds.write("participants.tsv", "participant_id\nsub-01\n");
        ds.write("sub-01/anat/sub-01_T1w.nii.gz", gzip(&nifti1_header()));
        ds
    }

    pub fn empty() -> Ds {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("ds")).unwrap();
        fs::create_dir_all(tmp.path().join("outside")).unwrap();
        Ds {
            tmp,
            brand: brand(),
        }
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().join("ds")
    }

    pub fn outside(&self) -> PathBuf {
        self.tmp.path().join("outside")
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        if let Some(d) = p.parent() {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(&p, bytes).unwrap();
        p
    }

    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        fs::create_dir_all(&p).unwrap();
        p
    }

    /// A symbolic link at `rel` pointing to `target` (as written).
    pub fn symlink(&self, rel: &str, target: impl AsRef<Path>) {
        let p = self.path(rel);
        if let Some(d) = p.parent() {
            fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(target, p).unwrap();
    }

    pub fn validate(&self, extra: &[&str]) -> Run {
        self.validate_within(extra, LIMIT)
    }

    pub fn validate_within(&self, extra: &[&str], limit: Duration) -> Run {
        let schema = self.brand.schema.to_string_lossy().to_string();
        let root = self.root().to_string_lossy().to_string();
        let mut args = vec![
            "validate",
            root.as_str(),
            "--format",
            "json",
            "--schema",
            schema.as_str(),
        ];
        args.extend_from_slice(extra);
        run_watched(&args, limit, self.tmp.path())
    }
}

/// What one watched run gave.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// Peak resident set size in KiB as last sampled (0 when unavailable).
    pub peak_rss_kb: u64,
    pub elapsed: Duration,
}

/// The memory a validation may use on the large and hostile files: 300 MiB.
const PEAK_RSS_LIMIT_KB: u64 = 300 * 1024;

impl Run {
    /// Prints the time and peak memory of the run (labelled `what`) and asserts the peak
    /// stayed below 300 MiB.
    pub fn assert_bounded_memory(&self, what: &str) {
        println!(
            "{what}: {:?}, peak RSS {} KiB",
            self.elapsed, self.peak_rss_kb
        );
        assert!(
            self.peak_rss_kb < PEAK_RSS_LIMIT_KB,
            "peak RSS {} KiB",
            self.peak_rss_kb
        );
    }

    /// Asserts a normal exit (0 or 16) and a parseable JSON report; returns the issues.
    pub fn issues(&self) -> Vec<Json> {
        assert!(
            self.code == 0 || self.code == 16,
            "exit code {} (expected 0 or 16)\nstderr: {}",
            self.code,
            self.stderr
        );
        let report: Json = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("the report is not JSON ({e}):\n{}", self.stdout));
        report["issues"]["issues"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("no issues array in {report}"))
    }

    /// Asserts that an issue with `code` at `location` was reported.
    pub fn expect(&self, code: &str, location: &str) {
        let what = format!("no {code} at {location}");
        self.expect_where(Some(code), |l| l == location, &what);
    }

    /// Asserts that an issue (with `code`, or any code for `None`) was reported at a
    /// location for which `at` holds; `what` says what is missing otherwise.
    pub fn expect_where(&self, code: Option<&str>, at: impl Fn(&str) -> bool, what: &str) {
        let issues = self.issues();
        let found = !located(&issues, code, at).is_empty();
        assert!(found, "{what}; issues:\n{}", summary(&issues));
    }

    /// Asserts no issue has `code` (any code for `None`) at a location starting with
    /// `prefix`.
    pub fn expect_none(&self, code: Option<&str>, prefix: &str) {
        let bad = located(&self.issues(), code, |l| l.starts_with(prefix));
        let code = code.unwrap_or("issue");
        assert!(bad.is_empty(), "unexpected {code} under {prefix}: {bad:?}");
    }
}

/// The issues (with `code`, or any code for `None`) at a location for which `at` holds.
fn located(issues: &[Json], code: Option<&str>, at: impl Fn(&str) -> bool) -> Vec<Json> {
    issues
        .iter()
        .filter(|i| code.is_none_or(|c| i["code"] == c) && i["location"].as_str().is_some_and(&at))
        .cloned()
        .collect()
}

/// One line per distinct (code, location).
pub fn summary(issues: &[Json]) -> String {
    let mut lines: Vec<String> = issues
        .iter()
        .map(|i| format!("  {} {}", i["code"], i["location"]))
        .collect();
    lines.dedup();
    lines.join("\n")
}

fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs the binary with `args`, output to files in `scratch`, killing it after `limit`.
pub fn run_watched(args: &[&str], limit: Duration, scratch: &Path) -> Run {
    let out_path = scratch.join("stdout.json");
    let err_path = scratch.join("stderr.txt");
    let out = fs::File::create(&out_path).unwrap();
    let err = fs::File::create(&err_path).unwrap();
    let start = Instant::now();
    let mut child = Command::new(BIN)
        .args(args)
        .env_remove("NIDOS_SCHEMA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak = 0u64;
    let status = loop {
        if let Some(kb) = vm_hwm_kb(pid) {
            peak = peak.max(kb);
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("nidos {args:?} ran past {limit:?}: killed (hang)");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    let stdout = fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    assert!(!stderr.contains("panicked"), "nidos panicked: {stderr}");
    Run {
        code: status.code().unwrap_or(-1),
        stdout,
        stderr,
        peak_rss_kb: peak,
        elapsed,
    }
}

/// gzip-compresses `data`.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A gzip stream inflating to `n` zero bytes, built from a repeated member so building
/// it stays fast: one compressed 64 MiB member, concatenated.
pub fn gzip_zeros(n: u64) -> Vec<u8> {
    const MEMBER: u64 = 64 << 20;
    let member = gzip(&vec![0u8; MEMBER as usize]);
    let count = n.div_ceil(MEMBER);
    let mut out = Vec::with_capacity(member.len() * count as usize);
    for _ in 0..count {
        out.extend_from_slice(&member);
    }
    out
}

/// A minimal well-formed NIfTI-1 single-file header (348 bytes + 4 extension bytes):
/// a 2×2×2 float32 volume of 1 mm voxels, scanner-anatomical sform.
pub fn nifti1_header() -> Vec<u8> {
    let mut h = vec![0u8; 352];
    let put_i16 =
        |h: &mut Vec<u8>, at: usize, v: i16| h[at..at + 2].copy_from_slice(&v.to_le_bytes());
    let put_f32 =
        |h: &mut Vec<u8>, at: usize, v: f32| h[at..at + 4].copy_from_slice(&v.to_le_bytes());
    h[0..4].copy_from_slice(&348i32.to_le_bytes());
    for (i, d) in [3i16, 2, 2, 2, 1, 1, 1, 1].iter().enumerate() {
        put_i16(&mut h, 40 + 2 * i, *d);
    }
    put_i16(&mut h, 70, 16); // datatype float32
    put_i16(&mut h, 72, 32); // bitpix
    for (i, p) in [1.0f32, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
        .iter()
        .enumerate()
    {
        put_f32(&mut h, 76 + 4 * i, *p);
    }
    put_f32(&mut h, 108, 352.0); // vox_offset
    h[123] = 2 | 8; // xyzt_units: mm, s
    put_i16(&mut h, 254, 1); // sform_code
    put_f32(&mut h, 280, 1.0); // srow_x
    put_f32(&mut h, 300, 1.0); // srow_y
    put_f32(&mut h, 320, 1.0); // srow_z
    h[344..348].copy_from_slice(b"n+1\0");
    h
}

/// Every file under `root` (links not followed): relative path → (bytes, mtime).
pub fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for p in names {
            let m = fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if m.is_dir() {
                out.push((rel, Vec::new(), m.modified().unwrap()));
                stack.push(p);
            } else if m.is_file() {
                out.push((rel, fs::read(&p).unwrap(), m.modified().unwrap()));
            }
        }
    }
    out
}

/// Sets the mode of every entry under `root` (dirs get `dir_mode`, files `file_mode`).
pub fn chmod_tree(root: &Path, dir_mode: u32, file_mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![root.to_path_buf()];
    let mut dirs = Vec::new();
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else if m.is_file() {
                fs::set_permissions(&p, fs::Permissions::from_mode(file_mode)).unwrap();
            }
        }
        dirs.push(d);
    }
    // Directories last (deepest first), so a read-only parent does not block its children.
    for d in dirs.iter().rev() {
        fs::set_permissions(d, fs::Permissions::from_mode(dir_mode)).unwrap();
    }
}
