//! The SARIF and HTML reports of `nidos validate`, on every case of
//! `tests/data/validate/<case>/` (the dataset in `ds/`): snapshots `expected.sarif` and
//! `expected.html` (the page with its inlined `report_page.css` and `report_page.js`
//! replaced by a placeholder, checked separately to be inlined whole) next to the text and
//! JSON ones, a structural check of the SARIF log
//! against the SARIF 2.1.0 rules it must meet, and the HTML page loaded in headless
//! Chromium (every code shown; the fragment filters hide what they should).
//!
//! The SARIF 2.1.0 JSON Schema file is not in the repository (its licence does not clearly
//! allow a copy); `check_sarif` below checks the schema's requirements for the objects
//! nidos writes: required properties, allowed properties, enumerations and minimums.
//!
//! `UPDATE_SNAPSHOTS=1` rewrites the snapshots. Needs `../shared` (the upstream schema) and,
//! for the browser test, `chromium` on PATH (or `NIDOS_BROWSER`): without them the tests
//! are reported as ignored.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value as Json};
use support::{snapshot, BIN, SHARED};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/validate");

fn schema() -> PathBuf {
    Path::new(SHARED).join("schemas/bids-1.11.1-schema-1.2.7.json")
}

fn cases() -> Vec<PathBuf> {
    let out = nidos_testkit::sorted_entries(Path::new(DATA), |p| p.join("ds").is_dir());
    assert!(!out.is_empty(), "no cases in {DATA}");
    out
}

fn run(case: &Path, extra: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("validate")
        .arg(case.join("ds"))
        .arg("--schema")
        .arg(schema())
        .arg("--ignore-nifti-headers")
        .args(extra);
    if case.join("config.json").exists() {
        cmd.arg("--config").arg(case.join("config.json"));
    }
    let o = cmd.output().unwrap();
    assert_ne!(
        o.status.code(),
        Some(101),
        "panic: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_ne!(
        o.status.code(),
        Some(2),
        "usage error: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn json_report(case: &Path) -> Json {
    serde_json::from_slice(&run(case, &["--format", "json"]).stdout).unwrap()
}

// ---------------------------------------------------------------------------------------
// SARIF 2.1.0 structure.

const LEVELS: [&str; 4] = ["none", "note", "warning", "error"];

fn keys_within(v: &Json, allowed: &[&str], at: &str, errors: &mut Vec<String>) {
    if let Some(o) = v.as_object() {
        for k in o.keys() {
            if !allowed.contains(&k.as_str()) {
                errors.push(format!("{at}: property {k:?} is not allowed"));
            }
        }
    } else {
        errors.push(format!("{at}: not an object"));
    }
}

fn message_ok(v: &Json, at: &str, errors: &mut Vec<String>) {
    // A message needs `text` or `id`; a multiformat string needs `text`.
    if v.get("text").and_then(Json::as_str).is_none()
        && v.get("id").and_then(Json::as_str).is_none()
    {
        errors.push(format!("{at}: message without text or id"));
    }
}

fn uri_ok(uri: &str) -> bool {
    !uri.chars()
        .any(|c| c.is_whitespace() || c.is_control() || "\"<>\\^`{|}".contains(c))
}

fn artifact_location_ok(v: &Json, bases: &Json, at: &str, errors: &mut Vec<String>) {
    keys_within(
        v,
        &["uri", "uriBaseId", "index", "description", "properties"],
        at,
        errors,
    );
    match v.get("uri").and_then(Json::as_str) {
        Some(u) if uri_ok(u) => {}
        other => errors.push(format!("{at}: bad uri {other:?}")),
    }
    if let Some(b) = v.get("uriBaseId") {
        let base = b.as_str().and_then(|b| bases.get(b));
        match base.and_then(|b| b.get("uri")).and_then(Json::as_str) {
            Some(u) if u.contains("://") && u.ends_with('/') && uri_ok(u) => {}
            other => errors.push(format!(
                "{at}: uriBaseId {b} has no absolute base ending in '/': {other:?}"
            )),
        }
    }
}

fn physical_ok(v: &Json, bases: &Json, at: &str, errors: &mut Vec<String>) {
    keys_within(
        v,
        &[
            "address",
            "artifactLocation",
            "region",
            "contextRegion",
            "properties",
        ],
        at,
        errors,
    );
    match v.get("artifactLocation") {
        Some(a) => artifact_location_ok(a, bases, &format!("{at}.artifactLocation"), errors),
        None => errors.push(format!("{at}: physicalLocation without artifactLocation")),
    }
    if let Some(r) = v.get("region") {
        match r.get("startLine").and_then(Json::as_u64) {
            Some(n) if n >= 1 => {}
            other => errors.push(format!("{at}.region: startLine {other:?} is not >= 1")),
        }
    }
}

/// The items of the list `v.<key>`, each with its path; an error when the list is
/// missing or empty.
fn items<'v>(
    v: &'v Json,
    key: &str,
    at: &str,
    errors: &mut Vec<String>,
) -> Vec<(String, &'v Json)> {
    let list = listed(v, key, at);
    if list.is_empty() {
        errors.push(format!("{at}: {key} is missing or empty"));
    }
    list
}

/// The items of the list `v.<key>` (none when it is missing), each with its path.
fn listed<'v>(v: &'v Json, key: &str, at: &str) -> Vec<(String, &'v Json)> {
    let list = v
        .get(key)
        .and_then(Json::as_array)
        .map_or(&[][..], Vec::as_slice);
    list.iter()
        .enumerate()
        .map(|(n, x)| (format!("{at}.{key}[{n}]"), x))
        .collect()
}

/// The SARIF 2.1.0 rules for the parts of a log nidos writes; returns what is wrong.
/// A `fix` object: a description, and at least one artifact change, each with an
/// artifact location and at least one replacement whose deleted region has a
/// non-negative byte offset and length.
fn fix_ok(v: &Json, bases: &Json, at: &str, errors: &mut Vec<String>) {
    keys_within(
        v,
        &["description", "artifactChanges", "properties"],
        at,
        errors,
    );
    if let Some(d) = v.get("description") {
        message_ok(d, &format!("{at}.description"), errors);
    }
    for (cat, c) in items(v, "artifactChanges", at, errors) {
        keys_within(
            c,
            &["artifactLocation", "replacements", "properties"],
            &cat,
            errors,
        );
        match c.get("artifactLocation") {
            Some(l) => artifact_location_ok(l, bases, &cat, errors),
            None => errors.push(format!("{cat}: no artifactLocation")),
        }
        for (rat, r) in items(c, "replacements", &cat, errors) {
            keys_within(
                r,
                &["deletedRegion", "insertedContent", "properties"],
                &rat,
                errors,
            );
            let region = r.get("deletedRegion");
            for key in ["byteOffset", "byteLength"] {
                if region
                    .and_then(|g| g.get(key))
                    .and_then(Json::as_i64)
                    .is_none_or(|x| x < 0)
                {
                    errors.push(format!("{rat}: deletedRegion.{key} missing or negative"));
                }
            }
            if let Some(ic) = r.get("insertedContent") {
                if ic.get("text").and_then(Json::as_str).is_none() && ic.get("binary").is_none() {
                    errors.push(format!(
                        "{rat}: insertedContent has neither text nor binary"
                    ));
                }
            }
        }
    }
}

fn check_sarif(log: &Json) -> Vec<String> {
    let mut errors = Vec::new();
    keys_within(
        log,
        &[
            "$schema",
            "version",
            "runs",
            "inlineExternalProperties",
            "properties",
        ],
        "log",
        &mut errors,
    );
    if log.get("version") != Some(&json!("2.1.0")) {
        errors.push("log: version is not \"2.1.0\"".into());
    }
    let Some(runs) = log.get("runs").and_then(Json::as_array) else {
        errors.push("log: runs is not an array".into());
        return errors;
    };
    for (r, run) in runs.iter().enumerate() {
        let at = format!("runs[{r}]");
        let Some(driver) = run.pointer("/tool/driver") else {
            errors.push(format!("{at}: no tool.driver"));
            continue;
        };
        if driver
            .get("name")
            .and_then(Json::as_str)
            .is_none_or(str::is_empty)
        {
            errors.push(format!("{at}: driver has no name"));
        }
        let rules = listed(driver, "rules", &at);
        let mut ids = BTreeSet::new();
        for (rat, rule) in &rules {
            keys_within(
                rule,
                &[
                    "id",
                    "name",
                    "shortDescription",
                    "fullDescription",
                    "defaultConfiguration",
                    "help",
                    "helpUri",
                    "properties",
                ],
                rat,
                &mut errors,
            );
            match rule.get("id").and_then(Json::as_str) {
                Some(id) if ids.insert(id.to_string()) => {}
                other => errors.push(format!("{rat}: missing or repeated id {other:?}")),
            }
            for d in ["shortDescription", "fullDescription"] {
                match rule
                    .get(d)
                    .and_then(|d| d.get("text"))
                    .and_then(Json::as_str)
                {
                    Some(t) if !t.trim().is_empty() => {}
                    _ => errors.push(format!("{rat}: {d} has no text")),
                }
            }
            if let Some(l) = rule.pointer("/defaultConfiguration/level") {
                if !LEVELS.iter().any(|x| l == x) {
                    errors.push(format!("{rat}: level {l}"));
                }
            }
        }
        let bases = run.get("originalUriBaseIds").cloned().unwrap_or(json!({}));
        let Some(results) = run.get("results").and_then(Json::as_array) else {
            errors.push(format!("{at}: results is not an array"));
            continue;
        };
        for (n, res) in results.iter().enumerate() {
            let rat = format!("{at}.results[{n}]");
            keys_within(
                res,
                &[
                    "ruleId",
                    "ruleIndex",
                    "level",
                    "kind",
                    "message",
                    "locations",
                    "relatedLocations",
                    "fixes",
                    "properties",
                ],
                &rat,
                &mut errors,
            );
            for (fat, fix) in listed(res, "fixes", &rat) {
                fix_ok(fix, &bases, &fat, &mut errors);
            }
            match res.get("message") {
                Some(m) => message_ok(m, &rat, &mut errors),
                None => errors.push(format!("{rat}: no message")),
            }
            if let Some(l) = res.get("level") {
                if !LEVELS.iter().any(|x| l == x) {
                    errors.push(format!("{rat}: level {l}"));
                }
            }
            let rule_id = res.get("ruleId").and_then(Json::as_str).unwrap_or("");
            if let Some(i) = res.get("ruleIndex") {
                match i.as_i64() {
                    Some(-1) => {}
                    Some(k) if k >= 0 && (k as usize) < rules.len() => {
                        let id = rules[k as usize].1["id"].as_str().unwrap_or("");
                        if rule_id != id && !rule_id.starts_with(&format!("{id}/")) {
                            errors.push(format!(
                                "{rat}: ruleId {rule_id} is not rule {id} or below it"
                            ));
                        }
                    }
                    _ => errors.push(format!("{rat}: ruleIndex {i} out of range")),
                }
            }
            for (lat, loc) in listed(res, "locations", &rat) {
                keys_within(
                    loc,
                    &[
                        "id",
                        "physicalLocation",
                        "logicalLocations",
                        "message",
                        "properties",
                    ],
                    &lat,
                    &mut errors,
                );
                if let Some(p) = loc.get("physicalLocation") {
                    physical_ok(p, &bases, &format!("{lat}.physicalLocation"), &mut errors);
                }
            }
            for (lat, loc) in listed(res, "relatedLocations", &rat) {
                if loc.get("id").and_then(Json::as_i64).is_some_and(|i| i < -1) {
                    errors.push(format!("{lat}: id below -1"));
                }
                if let Some(p) = loc.get("physicalLocation") {
                    physical_ok(p, &bases, &format!("{lat}.physicalLocation"), &mut errors);
                }
            }
        }
    }
    errors
}

#[test]
fn sarif_checker_rejects_bad_logs() {
    let good = json!({"version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "t", "rules": [{"id": "A", "shortDescription": {"text": "a"}, "fullDescription": {"text": "a"}}]}},
        "originalUriBaseIds": {"R": {"uri": "file:///d/"}},
        "results": [{"ruleId": "A/x", "ruleIndex": 0, "level": "error", "message": {"text": "m"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.json", "uriBaseId": "R"}, "region": {"startLine": 1}}}],
            "fixes": [{"description": {"text": "d"}, "artifactChanges": [{
                "artifactLocation": {"uri": "a.json", "uriBaseId": "R"},
                "replacements": [{"deletedRegion": {"byteOffset": 3, "byteLength": 2}, "insertedContent": {"text": "x"}}]}]}]}]
    }]});
    assert_eq!(check_sarif(&good), Vec::<String>::new());
    let breakages: [(&str, Json); 11] = [
        ("/version", json!("2.0.0")),
        ("/runs/0/tool/driver/name", json!("")),
        ("/runs/0/results/0/level", json!("fatal")),
        ("/runs/0/results/0/message", json!({})),
        ("/runs/0/results/0/ruleIndex", json!(3)),
        ("/runs/0/results/0/ruleId", json!("B")),
        (
            "/runs/0/results/0/locations/0/physicalLocation/region/startLine",
            json!(0),
        ),
        (
            "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri",
            json!("a b"),
        ),
        ("/runs/0/results/0/fixes/0/artifactChanges", json!([])),
        (
            "/runs/0/results/0/fixes/0/artifactChanges/0/replacements/0/deletedRegion/byteOffset",
            json!(-1),
        ),
        (
            "/runs/0/results/0/fixes/0/artifactChanges/0/replacements/0/insertedContent",
            json!({}),
        ),
    ];
    for (pointer, value) in breakages {
        let mut bad = good.clone();
        *bad.pointer_mut(pointer).unwrap() = value;
        assert!(!check_sarif(&bad).is_empty(), "not caught: {pointer}");
    }
    let mut bad = good.clone();
    bad["runs"][0]["results"][0]["colour"] = json!("red");
    assert!(!check_sarif(&bad).is_empty(), "unknown property not caught");
}

/// The SARIF log with the machine-specific base directory replaced.
fn sarif_of(case: &Path) -> (Json, String) {
    let o = run(case, &["--format", "sarif"]);
    let mut log: Json = serde_json::from_slice(&o.stdout).unwrap();
    let base = log
        .pointer_mut("/runs/0/originalUriBaseIds/DATASETROOT/uri")
        .expect("the run names its base directory");
    assert!(base.as_str().unwrap().starts_with("file:///"), "{base}");
    *base = json!("file:///DATASET/");
    let text = serde_json::to_string_pretty(&log).unwrap() + "\n";
    (log, text)
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn sarif_reports_are_valid_and_match_the_json_report() {
    for case in cases() {
        let (log, text) = sarif_of(&case);
        let errors = check_sarif(&log);
        assert!(errors.is_empty(), "{}: {errors:#?}", case.display());
        snapshot(&case.join("expected.sarif"), &text);
        // One result per issue, in the same order, with the code (and sub-code) as ruleId.
        let report = json_report(&case);
        let issues = report["issues"]["issues"].as_array().unwrap();
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(issues.len(), results.len(), "{}", case.display());
        for (i, r) in issues.iter().zip(results) {
            let sub = i["subCode"].as_str().unwrap_or("");
            let want = if sub.is_empty() {
                i["code"].as_str().unwrap().to_string()
            } else {
                format!("{}/{sub}", i["code"].as_str().unwrap())
            };
            assert_eq!(r["ruleId"], json!(want));
            let level = match i["severity"].as_str().unwrap() {
                "ignore" => "note",
                s => s,
            };
            assert_eq!(r["level"], json!(level));
            if let Some(line) = i.get("line") {
                assert_eq!(
                    r.pointer("/locations/0/physicalLocation/region/startLine"),
                    Some(line)
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// HTML.

/// The style sheet and script the page inlines (`nidos_validate::emit::html`).
const STYLE: &str = include_str!("../../nidos-validate/src/emit/report_page.css");
const SCRIPT: &str = include_str!("../../nidos-validate/src/emit/report_page.js");

/// The page as its snapshot stores it: the inlined style sheet and script, each checked to
/// stand in the page whole and once, replaced by a placeholder naming the file, so that the
/// snapshot holds what the case decides and not another copy of those files.
fn snapshot_form(html: &str, what: &str) -> String {
    let mut page = html.to_string();
    for (open, body, close, file) in [
        ("<style>\n", STYLE, "</style>", "report_page.css"),
        ("<script>\n", SCRIPT, "</script>", "report_page.js"),
    ] {
        let whole = format!("{open}{body}{close}");
        assert_eq!(
            page.matches(&whole).count(),
            1,
            "{what}: {file} is not inlined whole, once"
        );
        page = page.replacen(&whole, &format!("{open}/* {file} */\n{close}"), 1);
    }
    page
}

fn html_of(case: &Path) -> String {
    String::from_utf8(run(case, &["--format", "html"]).stdout).unwrap()
}

fn codes_of(report: &Json) -> BTreeSet<String> {
    report["issues"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap().to_string())
        .collect()
}

/// HTML escaping as the page does it (text and attribute values).
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn html_reports_are_self_contained_and_show_every_code() {
    for case in cases() {
        let html = html_of(&case);
        snapshot(
            &case.join("expected.html"),
            &snapshot_form(&html, &case.display().to_string()),
        );
        for needle in ["http://", "https://", " src=", "<link", "@import", "url("] {
            assert!(
                !html.contains(needle),
                "{}: network resource {needle:?}",
                case.display()
            );
        }
        let report = json_report(&case);
        for code in codes_of(&report) {
            let shown = ["error", "warning", "ignore"].iter().any(|sev| {
                html.contains(&format!(
                    "<details class=\"group\" data-severity=\"{sev}\" data-code=\"{code}\""
                ))
            });
            assert!(shown, "{}: {code} has no group", case.display());
        }
        // Groups start collapsed.
        for t in tags(&html, "<details ") {
            assert!(!t.contains(" open"), "{}: open group {t}", case.display());
        }
    }
}

/// The page explains what the text report explains: every field description and
/// "expected" line, and a `fixable` mark on every group the text report marks.
#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn html_reports_explain_what_the_text_report_explains() {
    for case in cases() {
        let html = html_of(&case);
        let text = String::from_utf8(run(&case, &["--verbose"]).stdout).unwrap();
        let mut explained = 0;
        for line in text.lines().map(str::trim) {
            if ["field ", "column ", "expected: "]
                .iter()
                .any(|p| line.starts_with(p))
            {
                explained += 1;
                assert!(
                    html.contains(&format!("<li>{}</li>", esc(line))),
                    "{}: the page lacks {line:?}",
                    case.display()
                );
            }
            if let Some(head) = line.strip_suffix("  [fixable]") {
                let code = head.split([' ', '(']).next().unwrap_or("");
                let at = html
                    .find(&format!("data-code=\"{code}\""))
                    .unwrap_or_else(|| panic!("{}: no group {code}", case.display()));
                let summary = &html[at..at + html[at..].find("</summary>").unwrap()];
                assert!(
                    summary.contains("class=\"fixable\""),
                    "{}: {code} lacks its fixable mark",
                    case.display()
                );
            }
        }
        if case.ends_with("errors") {
            assert!(explained > 0, "the errors case explains no field");
        }
        // The size is readable, with the exact count of bytes in its title.
        assert!(
            html.contains("<dt>Size</dt><dd title=\""),
            "{}: size",
            case.display()
        );
    }
}

/// The opening tags of `<tag class="class" …>` elements in a DOM dump.
fn tags<'a>(dom: &'a str, start: &str) -> Vec<&'a str> {
    dom.match_indices(start)
        .map(|(at, _)| {
            let rest = &dom[at..];
            &rest[..rest.find('>').unwrap_or(rest.len())]
        })
        .collect()
}

fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let key = format!(" {name}=\"");
    tag.find(&key)
        .map(|at| {
            let rest = &tag[at + key.len()..];
            &rest[..rest.find('"').unwrap_or(0)]
        })
        .unwrap_or("")
}

fn is_hidden(tag: &str) -> bool {
    tag.contains(" hidden")
}

/// The parts of a DOM dump that start with `start`, each up to the next one (or the end).
fn parts<'a>(dom: &'a str, start: &str) -> Vec<&'a str> {
    let at: Vec<usize> = dom.match_indices(start).map(|(i, _)| i).collect();
    at.iter()
        .enumerate()
        .map(|(k, &i)| &dom[i..at.get(k + 1).copied().unwrap_or(dom.len())])
        .collect()
}

/// The script ran to its end (it marks the body last).
fn script_finished(dom: &str, what: &str) {
    let body = tags(dom, "<body");
    assert!(
        body.first()
            .is_some_and(|b| attr(b, "data-script") == "done"),
        "{what}: the page's script did not finish: {body:?}"
    );
}

/// Every count follows the filters: a section's and a group's `data-shown` is the
/// number of its visible locations, and the status line says the total.
fn counts_follow(dom: &str, what: &str) {
    let mut all = 0;
    for section in parts(dom, "<section class=\"severity\"") {
        let head = tags(section, "<span class=\"count\"")[0];
        let mut in_section = 0;
        for group in parts(section, "<details class=\"group\"") {
            let visible = tags(group, "<li class=\"loc\"")
                .iter()
                .filter(|t| !is_hidden(t))
                .count();
            let count = tags(group, "<span class=\"count\"")[0];
            assert_eq!(
                attr(count, "data-shown"),
                visible.to_string(),
                "{what}: {}",
                &group[..group.find("</summary>").unwrap_or(group.len())]
            );
            let total: usize = attr(count, "data-total").parse().unwrap();
            let text = &group[group.find(count).unwrap() + count.len() + 1..];
            let text = &text[..text.find('<').unwrap()];
            if visible != total {
                assert!(
                    text.starts_with(&format!("({visible} of {total} ")),
                    "{what}: count text {text:?}"
                );
            }
            in_section += visible;
        }
        assert_eq!(
            attr(head, "data-shown"),
            in_section.to_string(),
            "{what}: section count"
        );
        all += in_section;
    }
    let shown = tags(dom, "<p id=\"shown\"");
    assert_eq!(attr(shown[0], "data-shown"), all.to_string(), "{what}");
}

/// Runs headless Chromium on `page#fragment`: the DOM after the scripts ran, or (with
/// `screenshot`) a picture of the page.
fn chromium(page: &Path, fragment: &str, profile: &Path, screenshot: Option<&Path>) -> String {
    let browser = std::env::var("NIDOS_BROWSER").unwrap_or_else(|_| "chromium".into());
    let url = format!("file://{}#{fragment}", page.display());
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    match screenshot {
        Some(p) => cmd
            .arg(format!("--screenshot={}", p.display()))
            .arg("--window-size=1280,1600"),
        None => cmd.arg("--dump-dom"),
    };
    let o = cmd.arg(&url).output().expect("chromium runs");
    assert!(
        o.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn dump_dom(page: &Path, fragment: &str, profile: &Path) -> String {
    let dom = chromium(page, fragment, profile, None);
    script_finished(&dom, &format!("{}#{fragment}", page.display()));
    counts_follow(&dom, &format!("{}#{fragment}", page.display()));
    dom
}

/// Where the browser tests keep their screenshots (under `target/`, out of the
/// repository): `target/test-artefacts/`.
fn artefacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("test-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[cfg_attr(nidos_browser_absent, ignore = "needs chromium on PATH (absent)")]
#[test]
fn html_filters_work_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let page = tmp.path().join(format!("{name}.html"));
        std::fs::write(&page, html_of(&case)).unwrap();
        let profile = tmp.path().join("profile");
        let report = json_report(&case);
        let codes = codes_of(&report);
        let issues = report["issues"]["issues"].as_array().unwrap().len();

        // Unfiltered: every code has a visible group, no location is hidden, every count
        // is the whole.
        let dom = dump_dom(&page, "", &profile);
        let groups = tags(&dom, "<details class=\"group\"");
        let shown: BTreeSet<&str> = groups
            .iter()
            .filter(|t| !is_hidden(t))
            .map(|t| attr(t, "data-code"))
            .collect();
        for code in &codes {
            assert!(shown.contains(code.as_str()), "{name}: {code} not shown");
        }
        let locs = tags(&dom, "<li class=\"loc\"");
        assert_eq!(locs.len(), issues, "{name}: one list item per issue");
        assert!(
            locs.iter().all(|t| !is_hidden(t)),
            "{name}: hidden without a filter"
        );
        assert!(
            groups.iter().all(|t| !t.contains(" open")),
            "{name}: groups start collapsed"
        );

        // Severity filter: exactly the errors stay.
        let dom = dump_dom(&page, "severity=error", &profile);
        for section in parts(&dom, "<section class=\"severity\"") {
            let error = attr(section, "data-severity") == "error";
            assert_eq!(is_hidden(tags(section, "<section")[0]), !error, "{name}");
            for t in tags(section, "<li class=\"loc\"") {
                assert_eq!(is_hidden(t), !error, "{name}: {t}");
            }
        }
        // Code filter: only that code's groups stay.
        if let Some(code) = codes.iter().next_back() {
            let dom = dump_dom(&page, &format!("code={code}"), &profile);
            for t in tags(&dom, "<details class=\"group\"") {
                assert_eq!(is_hidden(t), attr(t, "data-code") != code, "{name}: {t}");
            }
        }
        // Subject filter: only that subject's locations stay, and the counts say so.
        let dom = dump_dom(&page, "subject=01", &profile);
        for t in tags(&dom, "<li class=\"loc\"") {
            assert_eq!(is_hidden(t), attr(t, "data-subject") != "01", "{name}: {t}");
        }
        // Datatype filter.
        let dom = dump_dom(&page, "datatype=func", &profile);
        for t in tags(&dom, "<li class=\"loc\"") {
            assert_eq!(
                is_hidden(t),
                attr(t, "data-datatype") != "func",
                "{name}: {t}"
            );
        }
        if name == "errors" {
            // The filtered counts differ from the totals somewhere.
            let dom = dump_dom(&page, "datatype=func", &profile);
            assert!(
                dom.contains(" of "),
                "{name}: no count says 'n of total' under a filter"
            );
        }

        // A screenshot renders, kept as a test artefact.
        let shot = artefacts().join(format!("report-{name}.png"));
        let _ = std::fs::remove_file(&shot);
        chromium(&page, "", &profile, Some(&shot));
        let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
        assert!(size > 10_000, "{name}: screenshot is {size} bytes");
        if name == "errors" {
            std::fs::copy(&shot, artefacts().join("report.png")).unwrap();
        }
    }
}

/// A malformed `%` escape in the fragment (issue 38) is skipped alone: the script
/// finishes, the other presets apply, and the page says what it ignored.
#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[cfg_attr(nidos_browser_absent, ignore = "needs chromium on PATH (absent)")]
#[test]
fn html_fragment_with_a_malformed_escape_keeps_the_other_presets() {
    let tmp = tempfile::tempdir().unwrap();
    let case = Path::new(DATA).join("errors");
    let page = tmp.path().join("errors.html");
    std::fs::write(&page, html_of(&case)).unwrap();
    let profile = tmp.path().join("profile");
    for fragment in [
        "code=%E0%A4%A&severity=error&subject=01",
        "severity=error&%ZZ=1&subject=01&code=%",
        "severity=error&subject=01&datatype=%E0%A4%A",
    ] {
        let dom = dump_dom(&page, fragment, &profile);
        for section in parts(&dom, "<section class=\"severity\"") {
            let error = attr(section, "data-severity") == "error";
            assert_eq!(
                is_hidden(tags(section, "<section")[0]),
                !error,
                "{fragment}"
            );
        }
        let locs = tags(&dom, "<li class=\"loc\"");
        assert!(locs.iter().any(|t| !is_hidden(t)), "{fragment}: all hidden");
        for t in locs.iter().filter(|t| !is_hidden(t)) {
            assert_eq!(attr(t, "data-subject"), "01", "{fragment}: {t}");
        }
        let note = tags(&dom, "<p id=\"fragment-note\"");
        assert!(
            note.first().is_some_and(|t| !is_hidden(t)),
            "{fragment}: no note on the ignored part"
        );
    }
}

/// A change of filter rewrites the fragment (`history.replaceState`): a few lines of
/// script added to the page under test change the selects as a user would and record
/// the fragment after each change.
#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[cfg_attr(nidos_browser_absent, ignore = "needs chromium on PATH (absent)")]
#[test]
fn html_fragment_follows_filter_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let case = Path::new(DATA).join("errors");
    let html = html_of(&case);
    let driver = r#"<script>
(function(){
  function pick(k,v){var s=document.getElementById('filter-'+k);s.value=v;s.dispatchEvent(new Event('change'));}
  var b=document.body;
  pick('severity','error');b.setAttribute('data-hash-1',location.hash);
  pick('subject','');b.setAttribute('data-hash-2',location.hash);
  pick('severity','');b.setAttribute('data-hash-3',location.hash);
})();
</script></body>"#;
    let at = html.rfind("</body>").unwrap();
    let page = tmp.path().join("errors.html");
    std::fs::write(&page, format!("{}{driver}{}", &html[..at], &html[at + 7..])).unwrap();
    let profile = tmp.path().join("profile");
    let dom = dump_dom(&page, "subject=01&datatype=func", &profile);
    // Attribute values in a DOM dump have `&` as `&amp;`.
    let body = tags(&dom, "<body")[0].replace("&amp;", "&");
    let body = body.as_str();
    assert_eq!(
        attr(body, "data-hash-1"),
        "#severity=error&subject=01&datatype=func"
    );
    assert_eq!(attr(body, "data-hash-2"), "#severity=error&datatype=func");
    assert_eq!(attr(body, "data-hash-3"), "#datatype=func");
    // The DOM is filtered as the last state says.
    for t in tags(&dom, "<li class=\"loc\"") {
        assert_eq!(is_hidden(t), attr(t, "data-datatype") != "func", "{t}");
    }
}
