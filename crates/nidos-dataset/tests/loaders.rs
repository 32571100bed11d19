//! Data-driven loader tests: every input file under `tests/data/loaders/<format>/` is one case,
//! its expected output sits beside it as `<file>.expected.json` (and optional run options as
//! `<file>.options.json`). One harness runs them all.
//!
//! Expected output is `{"value": …, "issues": […]}` for a successful load and `{"error": {…}}`
//! for a failed one. Issue messages are informative only: they are not compared.
//! Set `NIDOS_BLESS=1` to (re)write missing or differing `.expected.json` files of the JSON,
//! TSV, gzip, TIFF, bval and bvec cases (NIfTI expectations come from nibabel, see
//! `data/loaders/nifti/make.py`, and are never blessed).

use std::path::{Path, PathBuf};

use nidos_dataset::loaders::{self, LoadIssue, Loaded};
use serde_json::{json, Value as Json};

fn data_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/loaders")
        .join(kind)
}

fn is_aux(name: &str) -> bool {
    name.ends_with(".expected.json")
        || name.ends_with(".options.json")
        || name.ends_with(".py")
        || name.ends_with(".md")
        || name.starts_with('.')
}

/// The input files of one format, sorted.
fn inputs(kind: &str) -> Vec<PathBuf> {
    nidos_testkit::sorted_entries(&data_dir(kind), |p| p.is_file() && !is_aux(&name_of(p)))
}

fn name_of(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn sidecar(p: &Path, suffix: &str) -> PathBuf {
    p.with_file_name(format!("{}{suffix}", name_of(p)))
}

fn options(p: &Path) -> Json {
    match std::fs::read(sidecar(p, ".options.json")) {
        Ok(b) => serde_json::from_slice(&b).unwrap(),
        Err(_) => json!({}),
    }
}

fn issue_json(i: &LoadIssue) -> Json {
    i.to_json()
}

fn outcome<T>(r: Result<Loaded<T>, LoadIssue>, f: impl FnOnce(&T) -> Json) -> Json {
    match r {
        Ok(l) => json!({
            "value": f(&l.value),
            "issues": l.issues.iter().map(issue_json).collect::<Vec<_>>(),
        }),
        Err(e) => json!({ "error": issue_json(&e) }),
    }
}

/// Removes `message` keys (informative text) before comparing.
fn strip_messages(v: &mut Json) {
    match v {
        Json::Object(m) => {
            if m.contains_key("code") {
                m.remove("message");
            }
            m.values_mut().for_each(strip_messages);
        }
        Json::Array(a) => a.iter_mut().for_each(strip_messages),
        _ => {}
    }
}

/// Structural equality where numbers compare as f64 within a few ulps (JSON text round trips of
/// doubles differ between libraries in the last bit).
fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs())
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

struct Run {
    failures: Vec<String>,
    count: usize,
}

impl Run {
    fn new() -> Self {
        Run {
            failures: Vec::new(),
            count: 0,
        }
    }

    fn check(&mut self, input: &Path, actual: Json, blessable: bool) {
        self.count += 1;
        let exp_path = sidecar(input, ".expected.json");
        let bless = blessable && std::env::var_os("NIDOS_BLESS").is_some();
        let expected: Option<Json> = std::fs::read(&exp_path)
            .ok()
            .map(|b| serde_json::from_slice(&b).unwrap());
        let mut a = actual.clone();
        strip_messages(&mut a);
        let ok = expected.as_ref().is_some_and(|e| {
            let mut e = e.clone();
            strip_messages(&mut e);
            same(&a, &e)
        });
        if ok {
            return;
        }
        if bless {
            let text = serde_json::to_string_pretty(&actual).unwrap() + "\n";
            std::fs::write(&exp_path, text).unwrap();
            eprintln!("blessed {}", exp_path.display());
            return;
        }
        self.failures.push(format!(
            "{}:\n  expected: {}\n  actual:   {}",
            input.display(),
            expected.map_or("<missing>".into(), |e| e.to_string()),
            actual
        ));
    }

    fn finish(self, kind: &str) {
        assert!(self.count > 0, "no {kind} cases found");
        if !self.failures.is_empty() {
            panic!(
                "{} of {} {kind} cases failed:\n{}",
                self.failures.len(),
                self.count,
                self.failures.join("\n")
            );
        }
    }
}

/// Checks each case file of `kind` against the outcome `actual_of` gives for its bytes.
fn byte_cases(kind: &str, actual_of: impl Fn(&[u8]) -> Json) {
    let mut run = Run::new();
    for input in inputs(kind) {
        let bytes = std::fs::read(&input).unwrap();
        run.check(&input, actual_of(&bytes), true);
    }
    run.finish(kind);
}

#[test]
fn json_cases() {
    byte_cases("json", |bytes| {
        let r = loaders::json::read_json_object(bytes);
        outcome(r, |m| Json::Object(m.clone()))
    });
}

fn table_json(t: &loaders::tsv::Table) -> Json {
    let columns: serde_json::Map<String, Json> = t
        .headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let cells: Vec<&str> = t.column_at(i).unwrap().iter().collect();
            (h.clone(), json!(cells))
        })
        .collect();
    // The context value must say the same thing, whole and column by column.
    assert_eq!(t.to_value().to_json(), Json::Object(columns.clone()));
    for h in &t.headers {
        let col = t.object_column(h).unwrap();
        assert_eq!(t.column_value(col).to_json(), columns[h]);
    }
    json!({
        "headers": t.headers,
        "columns": columns,
        "n_rows": t.n_rows,
        "truncated": t.truncated,
    })
}

#[test]
fn tsv_cases() {
    use loaders::tsv::{self, TsvOptions};
    let mut run = Run::new();
    for input in inputs("tsv") {
        let bytes = std::fs::read(&input).unwrap();
        let opts = options(&input);
        let to = TsvOptions {
            max_rows: opts["max_rows"].as_u64().map(|n| n as usize),
        };
        let headerless: Option<Vec<String>> = opts
            .get("headerless")
            .map(|h| serde_json::from_value(h.clone()).unwrap());
        let gz = name_of(&input).ends_with(".gz");
        let r = match (gz, &headerless) {
            (false, None) => tsv::read_tsv(bytes.as_slice(), &to),
            (true, None) => tsv::read_tsv_gz(bytes.as_slice(), &to),
            (false, Some(h)) => tsv::read_tsv_headerless(bytes.as_slice(), h, &to),
            (true, Some(h)) => tsv::read_tsv_gz_headerless(bytes.as_slice(), h, &to),
        };
        run.check(&input, outcome(r, table_json), true);
    }
    run.finish("tsv");
}

/// A column of few distinct cells is coded (each cell's rank in order of first appearance)
/// and, made into a value, its equal cells share one text; a column whose cells keep
/// differing (here a counter that repeats every third row) is not coded, and its value
/// shares a text only with the cell above.
#[test]
fn tsv_columns_of_few_texts_are_coded() {
    use nidos_expr::Value;
    let mut text = String::from("kind\tnote\tn\n");
    for i in 0..200 {
        let kind = ["go", "stop", "go", "wait"][i % 4];
        let note = if i % 3 == 0 { "x" } else { "n/a" };
        text.push_str(&format!(
            "{kind}\t{note}\t{}\n",
            i - usize::from(i % 3 == 2)
        ));
    }
    let t = loaders::tsv::read_tsv(text.as_bytes(), &Default::default())
        .unwrap()
        .value;
    let codes = t.codes();
    assert_eq!(codes.len(), 3);
    let kind_codes = codes[0].as_ref().expect("kind is coded");
    assert_eq!(kind_codes[..5], [0, 1, 0, 2, 0]);
    assert_eq!(codes[1].as_ref().expect("note is coded")[..4], [0, 1, 1, 0]);
    assert!(codes[2].is_none(), "a counter is not coded");
    let texts = |name: &str| -> Vec<std::sync::Arc<str>> {
        let v = t.column_value(t.column(name).unwrap());
        v.as_array()
            .unwrap()
            .iter()
            .map(|c| match c {
                Value::String(s) => s.clone(),
                other => panic!("not a string: {other:?}"),
            })
            .collect()
    };
    let (kind, n) = (texts("kind"), texts("n"));
    assert!(std::sync::Arc::ptr_eq(&kind[0], &kind[2]));
    assert!(std::sync::Arc::ptr_eq(&kind[1], &kind[5]));
    assert!(!std::sync::Arc::ptr_eq(&kind[0], &kind[1]));
    assert!(
        std::sync::Arc::ptr_eq(&n[1], &n[2]),
        "the cell above is shared"
    );
    assert!(!std::sync::Arc::ptr_eq(&n[0], &n[1]));
    assert_eq!(&*kind[3], "wait");
    assert_eq!(&*n[199], "199");
    assert_eq!(&*n[200 - 1 - 2], "196");
    let col = t.column("n").unwrap();
    assert_eq!(
        (col.len(), col.get(199), col.get(200)),
        (200, Some("199"), None)
    );
}

/// A reader that hands out one byte at a time must give the same table (streaming edges).
#[test]
fn tsv_byte_at_a_time() {
    struct Trickle<'a>(&'a [u8]);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((b, rest)), Some(slot)) => {
                    *slot = *b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }
    let text = b"\xef\xbb\xbfa\tb\r\n1\t2\r\nn/a\t4\r\n";
    let opts = loaders::tsv::TsvOptions::default();
    let a = loaders::tsv::read_tsv(Trickle(text), &opts).unwrap();
    let b = loaders::tsv::read_tsv(&text[..], &opts).unwrap();
    assert_eq!(a, b);
    let cells: Vec<&str> = a.value.column("a").unwrap().iter().collect();
    assert_eq!(cells, ["1", "n/a"]);
}

fn nifti_outcome(r: Result<loaders::nifti::NiftiHeader, LoadIssue>) -> Json {
    match r {
        Ok(h) => json!({ "value": h.to_value().to_json() }),
        Err(e) => json!({ "error": { "code": e.code } }),
    }
}

/// Every generated NIfTI-1/NIfTI-2 case (`.nii` and `.nii.gz`, both byte orders, broken files
/// and gzip bombs) against the header fields nibabel reported for it (see `nifti/make.py`).
#[test]
fn nifti_cases() {
    let mut run = Run::new();
    for input in inputs("nifti") {
        let name = name_of(&input);
        if name == "synthetic.expected.json" {
            continue;
        }
        let started = std::time::Instant::now();
        let r = if name.ends_with(".gz") {
            loaders::nifti::read_nifti_header_gz(std::fs::File::open(&input).unwrap())
        } else {
            loaders::nifti::read_nifti_header(&std::fs::read(&input).unwrap())
        };
        // Bounded work: even a gzip bomb's header is read in well under a second.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{name} took {:?}",
            started.elapsed()
        );
        run.check(&input, nifti_outcome(r), false);
    }
    run.finish("nifti");
}

/// The real headers of the shared `synthetic` example dataset against nibabel's view of them,
/// recorded in `nifti/synthetic.expected.json`.
#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn nifti_synthetic_examples() {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/examples/synthetic"
    ));
    if !root.is_dir() {
        eprintln!(
            "skipping nifti_synthetic_examples: {} is absent",
            root.display()
        );
        return;
    }
    let expected: serde_json::Map<String, Json> = serde_json::from_slice(
        &std::fs::read(data_dir("nifti").join("synthetic.expected.json")).unwrap(),
    )
    .unwrap();
    assert!(!expected.is_empty());
    let mut failures = Vec::new();
    for (rel, want) in &expected {
        let path = root.join(rel);
        let mut prefix = Vec::new();
        use std::io::Read;
        let r = if rel.ends_with(".gz") {
            loaders::nifti::read_nifti_header_gz(std::fs::File::open(&path).unwrap())
        } else {
            std::fs::File::open(&path)
                .unwrap()
                .take(64 * 1024)
                .read_to_end(&mut prefix)
                .unwrap();
            loaders::nifti::read_nifti_header(&prefix)
        };
        let got = match r {
            Ok(h) => h.to_value().to_json(),
            Err(e) => json!({ "error": e.code }),
        };
        let want = if want.is_null() {
            json!({ "error": "NIFTI_HEADER_UNREADABLE" })
        } else {
            want.clone()
        };
        if !same(&got, &want) {
            failures.push(format!("{rel}:\n  nibabel: {want}\n  nidos:   {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Wraps a plain result as a `Loaded` one so `outcome` can render it.
fn loaded<T>(r: Result<T, LoadIssue>) -> Result<Loaded<T>, LoadIssue> {
    r.map(|value| Loaded {
        value,
        issues: Vec::new(),
    })
}

#[test]
fn gzip_cases() {
    byte_cases("gzip", |bytes| {
        // Callers pass a bounded prefix; the header cases fit in 512 bytes.
        let prefix = &bytes[..bytes.len().min(512)];
        let r = loaded(loaders::gzip::read_gzip_header(prefix));
        outcome(r, |h| h.to_value().to_json())
    });
}

#[test]
fn tiff_cases() {
    byte_cases("tiff", |bytes| {
        let r = loaded(loaders::tiff::read_tiff(bytes));
        outcome(r, |t| {
            json!({
                "tiff": t.to_value().to_json(),
                "description_head": t.description.as_ref().map(|d| d.chars().take(24).collect::<String>()),
                "ome": t.ome.as_ref().map(|o| o.to_value().to_json()),
            })
        })
    });
}

#[test]
fn bval_cases() {
    byte_cases("bval", |bytes| {
        let r = loaders::bval::read_bval(bytes);
        outcome(r, |b| b.to_value_with_path("/sub-01/dwi/x.bval").to_json())
    });
}

#[test]
fn bvec_cases() {
    byte_cases("bvec", |bytes| {
        let r = loaders::bvec::read_bvec(bytes);
        outcome(r, |b| {
            json!({
                "context": b.to_value_with_path("/sub-01/dwi/x.bvec").to_json(),
                "rows": b.rows,
            })
        })
    });
}

/// Feeds every loader with mutations (bit flips, truncations, splices) of every case file:
/// loaders must return issues, never panic. Deterministic (fixed-seed xorshift).
#[test]
fn loaders_never_panic_on_mutated_inputs() {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let opts = loaders::tsv::TsvOptions::max_rows(3);
    let cols = vec!["a".to_string(), "b".to_string()];
    let mut corpus: Vec<Vec<u8>> = Vec::new();
    for kind in ["json", "tsv", "nifti", "gzip", "tiff", "bval", "bvec"] {
        for p in inputs(kind) {
            let mut b = std::fs::read(&p).unwrap();
            b.truncate(4096);
            corpus.push(b);
        }
    }
    let mut runs = 0usize;
    for base in &corpus {
        for _ in 0..40 {
            let mut b = base.clone();
            match next() % 4 {
                0 if !b.is_empty() => {
                    for _ in 0..1 + next() % 8 {
                        let i = (next() as usize) % b.len();
                        b[i] ^= 1 << (next() % 8);
                    }
                }
                1 => b.truncate((next() as usize) % (b.len() + 1)),
                2 if !b.is_empty() => {
                    let i = (next() as usize) % b.len();
                    let v = (next() % 256) as u8;
                    b.splice(i..i, std::iter::repeat_n(v, 1 + (next() % 16) as usize));
                }
                _ => {
                    let other = &corpus[(next() as usize) % corpus.len()];
                    let cut = (next() as usize) % (b.len() + 1);
                    b.truncate(cut);
                    b.extend_from_slice(&other[other.len() / 2..]);
                }
            }
            let _ = loaders::json::read_json_object(&b);
            let _ = loaders::tsv::read_tsv(b.as_slice(), &opts);
            let _ = loaders::tsv::read_tsv_gz(b.as_slice(), &opts);
            let _ = loaders::tsv::read_tsv_headerless(b.as_slice(), &cols, &opts);
            let _ = loaders::nifti::read_nifti_header(&b).map(|h| h.to_value());
            let _ = loaders::nifti::read_nifti_header_gz(b.as_slice()).map(|h| h.to_value());
            let _ = loaders::gzip::read_gzip_header(&b).map(|h| h.to_value());
            let _ = loaders::tiff::read_tiff(&b).map(|t| t.to_value());
            let _ = loaders::bval::read_bval(&b);
            let _ = loaders::bvec::read_bvec(&b);
            runs += 1;
        }
    }
    assert!(runs > 1000, "only {runs} mutated inputs");
}

/// A `.nii.gz` whose header claims extensions up to a 2 GiB voxel offset, followed by a
/// gigabyte-scale run of zeros: the reader inflates at most `MAX_GZ_PREFIX` bytes.
#[test]
fn nifti_gz_prefix_is_bounded() {
    use std::io::{Read, Write};
    let mut hdr = std::fs::read(data_dir("nifti").join("n1_le_3d.nii")).unwrap();
    hdr.truncate(352);
    hdr[108..112].copy_from_slice(&2.0e9f32.to_le_bytes()); // vox_offset
    hdr[348] = 1; // extension flag
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&hdr).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        enc.write_all(&zeros).unwrap();
    }
    let gz = enc.finish().unwrap();
    /// Counts the compressed bytes the loader pulls.
    struct Counting<'a>(&'a [u8], usize);
    impl Read for Counting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1 += n;
            Ok(n)
        }
    }
    let mut r = Counting(&gz, 0);
    let h = loaders::nifti::read_nifti_header_gz(&mut r).unwrap();
    assert_eq!(h.shape(), [4, 5, 6]);
    assert!(h.mrs.is_none());
    // 64 MiB of zeros deflate to ~64 KiB; reading 1 MiB of output needs only a small share.
    assert!(
        r.1 < gz.len() / 4,
        "read {} of {} compressed bytes",
        r.1,
        gz.len()
    );
}

/// `read_nifti_header_gz_bytes` (in-memory, with its fast path: a reused raw-deflate
/// decoder for the usual single-member stream) gives what the streaming reader gives
/// (the general gzip decoder), on every `.nii`/`.nii.gz` case re-wrapped in gzip headers
/// with and without the optional fields, cut at many lengths, with a flipped byte in the
/// deflate data, and as two members; plus a header with extensions inflated past the
/// first fill.
#[test]
fn nifti_gz_in_memory_matches_streaming() {
    use std::io::{Cursor, Write};
    fn gz(data: &[u8], b: flate2::GzBuilder) -> Vec<u8> {
        let mut enc = b.write(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }
    fn same(bytes: &[u8], what: &str) {
        let streamed = loaders::nifti::read_nifti_header_gz(Cursor::new(bytes));
        let in_memory = loaders::nifti::read_nifti_header_gz_bytes(bytes);
        assert_eq!(
            format!("{streamed:?}"),
            format!("{in_memory:?}"),
            "{what} ({} bytes)",
            bytes.len()
        );
    }
    let mut raws: Vec<(String, Vec<u8>)> = Vec::new();
    for input in inputs("nifti") {
        let name = name_of(&input);
        let bytes = std::fs::read(&input).unwrap();
        let raw = if name.ends_with(".gz") {
            same(&bytes, &name);
            let mut out = Vec::new();
            let mut dec = flate2::read::MultiGzDecoder::new(bytes.as_slice());
            let _ = std::io::Read::read_to_end(&mut dec, &mut out);
            out
        } else {
            bytes
        };
        raws.push((name, raw));
    }
    // A NIfTI-1 header whose extension (vox_offset 2000) is read by a second fill.
    let mut ext = raws
        .iter()
        .find(|(n, _)| n == "n1_le_3d.nii")
        .map(|(_, b)| b.clone())
        .unwrap();
    ext.truncate(352);
    ext[108..112].copy_from_slice(&2000.0f32.to_le_bytes());
    ext[348] = 1;
    ext.resize(4000, 7);
    raws.push(("extension".into(), ext));
    let mut runs = 0;
    for (name, raw) in &raws {
        type Builder = fn() -> flate2::GzBuilder;
        let builders: [(&str, Builder); 4] = [
            ("plain", flate2::GzBuilder::new),
            ("name", || flate2::GzBuilder::new().filename("x.nii")),
            ("comment+extra", || {
                flate2::GzBuilder::new().comment("c").extra(vec![1, 2, 3])
            }),
            ("all", || {
                flate2::GzBuilder::new()
                    .filename("a")
                    .comment("bc")
                    .extra(vec![9; 20])
            }),
        ];
        for (kind, b) in builders {
            let whole = gz(raw, b());
            let what = format!("{name} {kind}");
            same(&whole, &what);
            for cut in (0..whole.len())
                .step_by(7)
                .chain([whole.len().saturating_sub(8)])
            {
                same(&whole[..cut], &format!("{what} cut at {cut}"));
                runs += 1;
            }
            for at in (10..whole.len()).step_by(13) {
                let mut bad = whole.clone();
                bad[at] ^= 0x55;
                same(&bad, &format!("{what} byte {at} flipped"));
                runs += 1;
            }
            let mut flagged = whole.clone();
            flagged[3] |= 0x02; // a header checksum flag: the general decoder's case
            same(&flagged, &format!("{what} FHCRC"));
        }
        // Two members, the first ending inside the header.
        let split = raw.len().min(100);
        let mut two = gz(&raw[..split], flate2::GzBuilder::new());
        two.extend(gz(&raw[split..], flate2::GzBuilder::new()));
        same(&two, &format!("{name} two members"));
    }
    assert!(runs > 1000, "only {runs} variants");
}
