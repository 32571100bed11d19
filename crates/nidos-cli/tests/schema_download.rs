//! `--schema` as a release tag or URL: the published compiled schema is downloaded from
//! an HTTP server on the loopback address into the cache `NIDOS_CACHE_DIR` names, and
//! reused when the server is gone.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The bundled rules as one compiled JSON document (`nidos schema export`).
fn compiled_schema() -> &'static [u8] {
    static DOC: OnceLock<Vec<u8>> = OnceLock::new();
    DOC.get_or_init(|| {
        let out = Command::new(env!("CARGO_BIN_EXE_nidos"))
            .args(["schema", "export"])
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    })
}

/// A loopback HTTP server answering GET requests from `routes` (404 otherwise) and
/// counting the requests it served; it lives as long as the test process.
struct Server {
    port: u16,
    hits: Arc<AtomicUsize>,
}

fn serve(routes: HashMap<&'static str, (u16, Vec<u8>)>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            answer(stream, &routes);
        }
    });
    Server { port, hits }
}

/// A server that answers `path` with the compiled schema.
fn serve_schema(path: &'static str) -> Server {
    serve(HashMap::from([(path, (200, compiled_schema().to_vec()))]))
}

fn answer(mut stream: TcpStream, routes: &HashMap<&'static str, (u16, Vec<u8>)>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request = String::new();
    reader.read_line(&mut request).unwrap();
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("");
    let (status, body) = routes
        .get(path)
        .cloned()
        .unwrap_or((404, b"not found".to_vec()));
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

/// A port on the loopback address where nothing listens.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A one-subject dataset written with the brand the exported rules use.
fn dataset(root: &Path) -> PathBuf {
    let ds = root.join("ds");
    std::fs::create_dir_all(ds.join("sub-01/anat")).unwrap();
    std::fs::write(
        ds.join("dataset_description.json"),
        r#"{"Name": "download test", "StdVersion": "1.11.1", "Authors": ["A", "B"]}"#,
    )
    .unwrap();
    std::fs::write(ds.join("participants.tsv"), "participant_id\nsub-01\n").unwrap();
    std::fs::write(ds.join("README"), "A dataset for the download test.\n").unwrap();
    std::fs::write(ds.join("sub-01/anat/sub-01_T1w.nii.gz"), b"").unwrap();
    ds
}

/// A scratch directory (removed on drop) with a dataset in it, and the path of a
/// download cache there (not created).
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ds = dataset(tmp.path());
    let cache = tmp.path().join("cache");
    (tmp, ds, cache)
}

fn nidos(cache: &Path, template_port: u16, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nidos"))
        .env("NIDOS_CACHE_DIR", cache)
        .env(
            "NIDOS_PUBLISHED_SCHEMA",
            format!("http://127.0.0.1:{template_port}/en/{{tag}}/schema.json"),
        )
        .env_remove("NIDOS_SCHEMA_DIR")
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The run validated (exit 0 or 16) with the downloaded rules.
fn assert_validated(o: &Output) {
    assert!(matches!(o.status.code(), Some(0 | 16)), "{}", text(o));
    assert!(text(o).contains("rules of version 1.11.1"), "{}", text(o));
}

fn cached(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache.join("schemas"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_release_tag_is_downloaded_once_then_read_from_the_cache_offline() {
    let (_tmp, ds, cache) = scratch();
    let server = serve_schema("/en/v1.9.0/schema.json");
    let ds_arg = ds.to_str().unwrap();
    let validate = || {
        nidos(
            &cache,
            server.port,
            &["validate", ds_arg, "--schema", "v1.9.0"],
        )
    };

    let first = validate();
    assert_validated(&first);
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
    assert_eq!(
        cached(&cache),
        [format!("127.0.0.1_{}_en_v1.9.0_schema.json", server.port)]
    );
    // A fixed release is not asked for again: the server sees no second request.
    let again = validate();
    assert_validated(&again);
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
}

#[test]
fn offline_without_a_cached_copy_is_a_clear_error_naming_the_cache_path() {
    let (_tmp, ds, cache) = scratch();
    let port = closed_port();
    let out = nidos(
        &cache,
        port,
        &["validate", ds.to_str().unwrap(), "--schema", "v1.9.0"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let msg = text(&out);
    let expected = cache
        .join("schemas")
        .join(format!("127.0.0.1_{port}_en_v1.9.0_schema.json"));
    assert!(msg.contains(&expected.display().to_string()), "{msg}");
    assert!(msg.contains("cannot download"), "{msg}");
    assert!(cached(&cache).is_empty());
}

#[test]
fn a_url_is_refreshed_when_possible_and_falls_back_to_the_cache() {
    let (_tmp, ds, cache) = scratch();
    let server = serve_schema("/mine/schema.json");
    let url = format!("http://127.0.0.1:{}/mine/schema.json", server.port);
    let ds_arg = ds.to_str().unwrap();
    let first = nidos(&cache, 1, &["validate", ds_arg, "--schema", &url]);
    assert_validated(&first);
    let second = nidos(&cache, 1, &["validate", ds_arg, "--schema", &url]);
    assert_validated(&second);
    assert_eq!(
        server.hits.load(Ordering::SeqCst),
        2,
        "a URL is asked again"
    );

    // The same cache, the URL's host gone: the cached copy, with a warning.
    let gone = format!("http://127.0.0.1:{}/mine/schema.json", closed_port());
    let copy = cache
        .join("schemas")
        .join(format!("127.0.0.1_{}_mine_schema.json", server.port));
    let target = cache.join("schemas").join(format!(
        "127.0.0.1_{}_mine_schema.json",
        gone.split(':').nth(2).unwrap().split('/').next().unwrap()
    ));
    std::fs::copy(&copy, &target).unwrap();
    let offline = nidos(&cache, 1, &["validate", ds_arg, "--schema", &gone]);
    assert_validated(&offline);
    assert!(
        text(&offline).contains("using the copy cached at"),
        "{}",
        text(&offline)
    );
}

#[test]
fn a_response_that_is_not_a_compiled_schema_is_refused_and_not_cached() {
    let (_tmp, ds, cache) = scratch();
    let server = serve(HashMap::from([
        ("/en/v1.9.0/schema.json", (200, br#"{"hello": 1}"#.to_vec())),
        ("/en/v1.8.0/schema.json", (200, b"<html>".to_vec())),
    ]));
    for (tag, says) in [
        ("v1.9.0", "not a compiled schema"),
        ("v1.8.0", "not JSON"),
        ("v1.7.0", "HTTP 404"),
    ] {
        let out = nidos(
            &cache,
            server.port,
            &["validate", ds.to_str().unwrap(), "--schema", tag],
        );
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(says), "{tag}: {}", text(&out));
    }
    assert!(cached(&cache).is_empty());
}

#[test]
fn schema_commands_take_a_release_tag_too() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let server = serve_schema("/en/v1.9.0/schema.json");
    let out = nidos(
        &cache,
        server.port,
        &[
            "schema",
            "show",
            "--schema",
            "v1.9.0",
            "objects.entities.subject.name",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("sub"));
}
