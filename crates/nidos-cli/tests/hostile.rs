//! The hostile-dataset corpus: datasets built on the fly (nothing large is committed)
//! that try to crash, hang, exhaust or escape the validator. Each case runs the real
//! binary with `--format json` under a watchdog (tests/hostile/harness.rs) and asserts a
//! normal exit (0 or 16), a parseable report, and the located issue it should cause.
//!
//! Runs with the upstream 1.11.1 schema from `../shared` when present, else the bundled
//! Std tree. The 200,000-file case takes about a minute in a debug build.

#[path = "hostile/harness.rs"]
mod harness;

use std::fs;
use std::io::Write;

use harness::{gzip, gzip_zeros, nifti1_header, Ds};

const T1W_JSON: &str = "/sub-01/anat/sub-01_T1w.json";

// --- JSON -------------------------------------------------------------------------------

/// (case name, sidecar bytes, expected code at the sidecar)
const BAD_JSON: &[(&str, &[u8], &str)] = &[
    ("invalid", b"{\"RepetitionTime\": 2,,}", "JSON_INVALID"),
    (
        "truncated",
        b"{\"RepetitionTime\": 2, \"Echo",
        "JSON_INVALID",
    ),
    ("empty", b"", "EMPTY_FILE"),
    ("not an object", b"[1, 2, 3]", "JSON_NOT_AN_OBJECT"),
    (
        "bom",
        b"\xEF\xBB\xBF{\"RepetitionTime\": 2}",
        "INVALID_JSON_ENCODING",
    ),
    (
        "utf-16le with bom",
        b"\xFF\xFE{\0}\0",
        "INVALID_JSON_ENCODING",
    ),
    ("utf-16be without bom", b"\0{\0}", "INVALID_JSON_ENCODING"),
    (
        "latin-1",
        b"{\"InstitutionName\": \"H\xF4pital\"}",
        "INVALID_JSON_ENCODING",
    ),
    ("nul bytes", b"{\"a\": 1}\0\0\0", "JSON_INVALID"),
];

#[test]
fn bad_json_sidecars() {
    for (name, bytes, code) in BAD_JSON {
        let ds = Ds::base();
        ds.write(T1W_JSON.trim_start_matches('/'), bytes);
        println!("case: {name}");
        ds.validate(&[]).expect(code, T1W_JSON);
    }
}

#[test]
fn deeply_nested_json() {
    let ds = Ds::base();
    let depth = 100_000;
    let text = format!("{{\"a\": {}{}}}", "[".repeat(depth), "]".repeat(depth));
    ds.write(T1W_JSON.trim_start_matches('/'), text);
    ds.validate(&[]).expect("JSON_INVALID", T1W_JSON);
}

#[test]
fn invalid_dataset_description() {
    let ds = Ds::base();
    ds.write("dataset_description.json", b"{\"Name\": ");
    ds.validate(&[])
        .expect("JSON_INVALID", "/dataset_description.json");
}

#[test]
fn json_over_the_read_limit() {
    let ds = Ds::base();
    // Sparse: 65 MiB of a JSON string that is never materialised on disk.
    let p = ds.write(T1W_JSON.trim_start_matches('/'), b"{\"a\": \"");
    let f = fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(65 << 20).unwrap();
    let run = ds.validate(&[]);
    run.expect("FILE_TOO_LARGE", T1W_JSON);
    run.assert_bounded_memory("JSON over the read limit");
}

// --- text encodings and file names -----------------------------------------------------

const BAD_TEXT_TSV: &[(&str, &[u8], &str)] = &[
    (
        "latin-1",
        b"participant_id\tname\nsub-01\tJos\xE9\n",
        "INVALID_FILE_ENCODING",
    ),
    (
        "utf-16le",
        b"\xFF\xFEp\0a\0r\0t\0i\0c\0i\0p\0a\0n\0t\0_\0i\0d\0\n\0",
        "INVALID_FILE_ENCODING",
    ),
    ("ragged", b"participant_id\tage\nsub-01\n", "TSV_EQUAL_ROWS"),
    (
        "empty line",
        b"participant_id\n\nsub-01\n",
        "TSV_EMPTY_LINE",
    ),
    (
        "duplicate header",
        b"participant_id\tage\tage\nsub-01\t1\t2\n",
        "TSV_COLUMN_HEADER_DUPLICATE",
    ),
];

#[test]
fn bad_tables() {
    for (name, bytes, code) in BAD_TEXT_TSV {
        let ds = Ds::base();
        ds.write("participants.tsv", bytes);
        println!("case: {name}");
        ds.validate(&[]).expect(code, "/participants.tsv");
    }
}

#[test]
fn non_utf8_file_names() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let ds = Ds::base();
    let dir = ds.path("sub-01/anat");
    fs::write(
        dir.join(OsStr::from_bytes(b"sub-01_\xFF\xFE_T1w.json")),
        b"{}",
    )
    .unwrap();
    fs::create_dir(ds.root().join(OsStr::from_bytes(b"sub-\xE9"))).unwrap();
    // The odd name is reported (lossily decoded), whatever the code.
    ds.validate(&[]).expect_where(
        None,
        |l| l.contains('\u{FFFD}'),
        "the non-UTF-8 name is not reported",
    );
}

// --- large and compressed files -------------------------------------------------------

/// A real 1 GiB events table, streamed to disk; validation keeps memory bounded.
#[test]
fn one_gigabyte_tsv() {
    let ds = Ds::base();
    ds.write(
        "sub-01/func/sub-01_task-rest_bold.nii.gz",
        gzip(&nifti1_header()),
    );
    ds.write(
        "sub-01/func/sub-01_task-rest_bold.json",
        b"{\"RepetitionTime\": 2, \"TaskName\": \"rest\"}",
    );
    let p = ds.path("sub-01/func/sub-01_task-rest_events.tsv");
    let f = fs::File::create(&p).unwrap();
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    w.write_all(b"onset\tduration\ttrial_type\n").unwrap();
    let row = b"1.5\t0.5\tgo\n";
    let total = 1u64 << 30;
    let mut written = 0u64;
    let block: Vec<u8> = row.repeat(8192);
    while written < total {
        w.write_all(&block).unwrap();
        written += block.len() as u64;
    }
    w.flush().unwrap();
    drop(w);
    // Streaming 1 GiB through the debug build takes ~45 s on a loaded 2-core machine:
    // a longer limit, still a hang check.
    let run = ds.validate_within(&[], std::time::Duration::from_secs(240));
    run.issues();
    run.assert_bounded_memory("1 GiB TSV");
}

/// A sparse 1 GiB participants table: read whole it would exhaust memory, so it is a
/// FILE_TOO_LARGE warning and only its first rows are kept.
#[test]
fn one_gigabyte_participants_table() {
    let ds = Ds::base();
    let p = ds.write("participants.tsv", b"participant_id\nsub-01\n");
    let f = fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(1 << 30).unwrap();
    let run = ds.validate(&[]);
    run.expect("FILE_TOO_LARGE", "/participants.tsv");
    run.assert_bounded_memory("1 GiB sparse participants");
}

const T1W_NII: &str = "/sub-01/anat/sub-01_T1w.nii";

#[test]
fn bad_nifti_headers() {
    let good = nifti1_header();
    let mut bad_magic = good.clone();
    bad_magic[344..348].copy_from_slice(b"xyz\0");
    let mut bad_size = good.clone();
    bad_size[0..4].copy_from_slice(&1234i32.to_le_bytes());
    let mut huge_dims = good.clone();
    for i in 0..8 {
        huge_dims[40 + 2 * i..42 + 2 * i].copy_from_slice(&i16::MAX.to_le_bytes());
    }
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        ("truncated", good[..100].to_vec(), true),
        ("one byte", vec![0x5C], true),
        ("bad magic", bad_magic, true),
        ("bad sizeof_hdr", bad_size, true),
        ("huge dims", huge_dims, false),
        (
            "random",
            (0..352u32).map(|i| (i * 7919 % 251) as u8).collect(),
            true,
        ),
    ];
    for (name, bytes, unreadable) in cases {
        println!("case: {name}");
        for gz in [false, true] {
            let ds = Ds::base();
            fs::remove_file(ds.path("sub-01/anat/sub-01_T1w.nii.gz")).unwrap();
            let (rel, data) = if gz {
                (format!("{T1W_NII}.gz"), gzip(&bytes))
            } else {
                (T1W_NII.to_string(), bytes.clone())
            };
            ds.write(rel.trim_start_matches('/'), &data);
            let run = ds.validate(&[]);
            if unreadable {
                run.expect("NIFTI_HEADER_UNREADABLE", &rel);
            } else {
                run.issues();
            }
        }
    }
}

#[test]
fn gz_that_is_not_gzip() {
    let ds = Ds::base();
    ds.write("sub-01/anat/sub-01_T1w.nii.gz", nifti1_header());
    ds.validate(&[])
        .expect("NIFTI_HEADER_UNREADABLE", "/sub-01/anat/sub-01_T1w.nii.gz");
    let ds = Ds::base();
    ds.write(
        "sub-01/func/sub-01_task-rest_physio.tsv.gz",
        b"onset\tvalue\n1\t2\n",
    );
    ds.write(
        "sub-01/func/sub-01_task-rest_physio.json",
        b"{\"SamplingFrequency\": 10, \"StartTime\": 0, \"Columns\": [\"cardiac\"]}",
    );
    ds.validate(&[]).expect(
        "GZ_NOT_GZIPPED",
        "/sub-01/func/sub-01_task-rest_physio.tsv.gz",
    );
}

/// 4 GiB of zeros in a small `.nii.gz` and a `.tsv.gz`: only a prefix is inflated for
/// the header; the table is streamed with bounded memory.
#[test]
fn gzip_bombs() {
    let bomb = gzip_zeros(4 << 30);
    println!("bomb: {} bytes compressed", bomb.len());
    let ds = Ds::base();
    ds.write("sub-01/anat/sub-01_T1w.nii.gz", &bomb);
    ds.write("sub-01/func/sub-01_task-rest_physio.tsv.gz", &bomb);
    ds.write(
        "sub-01/func/sub-01_task-rest_physio.json",
        b"{\"SamplingFrequency\": 10, \"StartTime\": 0, \"Columns\": [\"cardiac\"]}",
    );
    ds.write("sub-01/func/sub-01_task-rest_events.tsv.gz", &bomb);
    let run = ds.validate(&[]);
    run.expect("NIFTI_HEADER_UNREADABLE", "/sub-01/anat/sub-01_T1w.nii.gz");
    // All zeros: one line over the 16 MiB line limit, reported, and reading stops.
    run.expect("TSV_ERROR", "/sub-01/func/sub-01_task-rest_physio.tsv.gz");
    run.assert_bounded_memory("gzip bombs");
}

// --- links, permissions, shapes of the tree --------------------------------------------

/// A link to make: (path in the dataset, target).
type Link = (&'static str, &'static str);

/// (links made, the code expected at each of these locations)
const BAD_LINKS: &[(&[Link], &str, &[&str])] = &[
    (
        &[
            ("sub-01/anat/sub-01_T2w.nii.gz", "sub-01_T2w.nii.gz"),
            ("sub-01/anat/a.json", "b.json"),
            ("sub-01/anat/b.json", "a.json"),
            ("sub-01/anat/up", ".."),
            ("sub-01/root", "../.."),
        ],
        "SYMLINK_CYCLE",
        &["/sub-01/anat/sub-01_T2w.nii.gz", "/sub-01/anat/up"],
    ),
    (
        &[
            ("sub-01/anat/sub-01_T2w.nii.gz", "nowhere.nii.gz"),
            ("sub-01/anat/sub-01_T2w.json", "/nonexistent/abs.json"),
        ],
        "SYMLINK_BROKEN",
        &[
            "/sub-01/anat/sub-01_T2w.nii.gz",
            "/sub-01/anat/sub-01_T2w.json",
        ],
    ),
];

/// Links in loops and links to nothing.
#[test]
fn symlink_loops_and_broken_links() {
    for (links, code, locations) in BAD_LINKS {
        let ds = Ds::base();
        for (path, target) in *links {
            ds.symlink(path, target);
        }
        let run = ds.validate(&[]);
        for location in *locations {
            run.expect(code, location);
        }
    }
}

/// Links out of the tree are reported and never read: the sentinel files outside are
/// invalid JSON / a broken table, which would be reported if they were read.
#[test]
fn links_out_of_the_tree() {
    let ds = Ds::base();
    fs::write(ds.outside().join("secret.json"), b"{ not json").unwrap();
    fs::create_dir_all(ds.outside().join("sub-02/anat")).unwrap();
    fs::write(
        ds.outside().join("sub-02/anat/sub-02_T1w.json"),
        b"{ not json",
    )
    .unwrap();
    ds.symlink(
        "sub-01/anat/sub-01_T1w.json",
        ds.outside().join("secret.json"),
    );
    ds.symlink("sub-02", "../outside/sub-02");
    ds.symlink("sub-01/anat/sub-01_T2w.json", "/etc/passwd");
    let run = ds.validate(&[]);
    run.expect("SYMLINK_OUTSIDE_DATASET", T1W_JSON);
    run.expect("SYMLINK_OUTSIDE_DATASET", "/sub-02");
    run.expect_none(Some("JSON_INVALID"), "/");
    // Nothing at all is reported under the link: its files were not walked.
    run.expect_none(None, "/sub-02/");
}

#[test]
fn unreadable_files() {
    use std::os::unix::fs::PermissionsExt;
    let ds = Ds::base();
    let p = ds.write(T1W_JSON.trim_start_matches('/'), b"{}");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&p).is_ok() {
        println!(
            "skip: running as root (or with CAP_DAC_OVERRIDE): chmod 000 does not prevent reading"
        );
        return;
    }
    let d = ds.mkdir("sub-01/func");
    fs::write(d.join("sub-01_task-rest_bold.json"), b"{}").unwrap();
    fs::set_permissions(&d, fs::Permissions::from_mode(0o000)).unwrap();
    let run = ds.validate(&[]);
    fs::set_permissions(&d, fs::Permissions::from_mode(0o755)).unwrap();
    run.expect("FILE_READ", T1W_JSON);
    run.expect("FILE_READ", "/sub-01/func/");
}

#[test]
fn deep_nesting() {
    let ds = Ds::base();
    // 2,000 levels: a path of about 4,000 bytes, under PATH_MAX.
    let rel: String = std::iter::repeat_n("d", 2000).collect::<Vec<_>>().join("/");
    let deep = ds.mkdir(&format!("sub-01/{rel}"));
    fs::write(deep.join("x.json"), b"{").unwrap();
    ds.validate(&[]).expect_where(
        Some("FILE_READ"),
        |l| l.starts_with("/sub-01/d/d/"),
        "no FILE_READ for the too-deep tree",
    );
}

/// `n` empty files, named by `name`, in the new directory `dir`: the run validating
/// them within `limit`, with its time and peak memory printed (labelled `what`).
fn many_files(
    what: &str,
    dir: &str,
    n: usize,
    name: impl Fn(usize) -> String,
    limit: std::time::Duration,
) -> harness::Run {
    let ds = Ds::base();
    let d = ds.mkdir(dir);
    for i in 0..n {
        fs::File::create(d.join(name(i))).unwrap();
    }
    let run = ds.validate_within(&[], limit);
    let issues = run.issues().len();
    println!(
        "{what}: {:?}, {issues} issues, peak RSS {} KiB",
        run.elapsed, run.peak_rss_kb
    );
    run
}

/// 200,000 files in one directory: inheritance lookups are indexed, so time grows
/// linearly (about 50 s in a debug build, most of it creating the files).
#[test]
fn two_hundred_thousand_files() {
    let limit = std::time::Duration::from_secs(300);
    many_files(
        "200k files",
        "sub-01/anat/many",
        200_000,
        |i| format!("f{i}.txt"),
        limit,
    );
}

/// A smaller version of the case above that runs by default (3,000 files).
#[test]
fn many_files_in_one_directory() {
    let name = |i| format!("sub-01_run-{i}_T1w.txt");
    let run = many_files("3k files", "sub-01/anat", 3_000, name, harness::LIMIT);
    assert!(!run.issues().is_empty());
}

// --- references that try to leave the dataset -------------------------------------------

/// IntendedFor and other URI-valued fields naming files outside the root: each is
/// reported as not found, although a file with that name exists outside (a sentinel).
#[test]
fn references_leaving_the_dataset() {
    let ds = Ds::base();
    let scheme = ds.brand.scheme;
    fs::write(
        ds.outside().join("sub-01_T1w.nii.gz"),
        gzip(&nifti1_header()),
    )
    .unwrap();
    let targets = [
        "../../etc/passwd".to_string(),
        "../../outside/sub-01_T1w.nii.gz".to_string(),
        "anat/../../../outside/sub-01_T1w.nii.gz".to_string(),
        format!("{scheme}::../outside/sub-01_T1w.nii.gz"),
        format!("{scheme}::/../outside/sub-01_T1w.nii.gz"),
        format!("{scheme}::sub-01/../../outside/sub-01_T1w.nii.gz"),
        "/etc/passwd".to_string(),
        "file:///etc/passwd".to_string(),
    ];
    ds.write("sub-01/fmap/sub-01_epi.nii.gz", gzip(&nifti1_header()));
    let sidecar = serde_json::json!({
        "PhaseEncodingDirection": "j-",
        "TotalReadoutTime": 0.05,
        "IntendedFor": targets,
    });
    ds.write("sub-01/fmap/sub-01_dir-AP_epi.json", sidecar.to_string());
    fs::rename(
        ds.path("sub-01/fmap/sub-01_epi.nii.gz"),
        ds.path("sub-01/fmap/sub-01_dir-AP_epi.nii.gz"),
    )
    .unwrap();
    ds.write(
        "sub-01/anat/sub-01_T1w.json",
        serde_json::json!({
            "AssociatedEmptyRoom": "../../outside/sub-01_T1w.nii.gz",
            "Sources": [format!("{scheme}::../outside/sub-01_T1w.nii.gz")],
        })
        .to_string(),
    );
    let run = ds.validate(&[]);
    let issues = run.issues();
    let at = |loc: &str| {
        issues
            .iter()
            .filter(|i| i["location"] == loc)
            .map(|i| i["code"].as_str().unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };
    // The reference locates IntendedFor issues at the data file the sidecar describes:
    // one per target that does not exist in the dataset.
    let codes = at("/sub-01/fmap/sub-01_dir-AP_epi.nii.gz");
    let n = codes
        .iter()
        .filter(|c| c.as_str() == "INTENDED_FOR")
        .count();
    println!("IntendedFor issues: {n}\n{}", harness::summary(&issues));
    assert!(
        n >= 1,
        "IntendedFor pointing outside is not reported:\n{}",
        harness::summary(&issues)
    );
}

// --- the read-only guarantee -----------------------------------------------------------

#[test]
fn validation_changes_nothing() {
    let ds = Ds::base();
    ds.write(T1W_JSON.trim_start_matches('/'), b"{\"RepetitionTime\": 2}");
    ds.write("sub-01/anat/sub-01_T2w.nii.gz", gzip(&nifti1_header()));
    ds.write(
        "sub-01/func/sub-01_task-rest_bold.nii.gz",
        gzip(&nifti1_header()),
    );
    ds.write(
        "sub-01/func/sub-01_task-rest_events.tsv",
        b"onset\tduration\n1\t1\n",
    );
    ds.write(".bidsignore", b"extra/\n");
    ds.write("extra/notes.txt", b"free text");
    let root = ds.root();
    // Let timestamps settle so a rewrite within the same tick would still show.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = harness::snapshot(&root);
    harness::chmod_tree(&root, 0o555, 0o444);
    let run = ds.validate(&[]);
    let run_jobs = ds.validate(&["--jobs", "1"]);
    harness::chmod_tree(&root, 0o755, 0o644);
    run.issues();
    run_jobs.issues();
    assert_eq!(run.stdout, run_jobs.stdout, "--jobs 1 changes the report");
    let after = harness::snapshot(&root);
    // chmod changes ctime, not mtime or content.
    assert_eq!(before.len(), after.len(), "files appeared or vanished");
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b.0, a.0);
        assert!(b.1 == a.1, "{} changed content", b.0.display());
        assert_eq!(b.2, a.2, "{} changed mtime", b.0.display());
    }
}

#[test]
fn jobs_option() {
    let ds = Ds::base();
    let one = ds.validate(&["--jobs", "1"]);
    let four = ds.validate(&["-j", "4"]);
    one.issues();
    assert_eq!(one.stdout, four.stdout);
    let zero = ds.validate(&["--jobs", "0"]);
    assert_eq!(
        zero.code, 2,
        "--jobs 0 should be a usage error: {}",
        zero.stderr
    );
}
