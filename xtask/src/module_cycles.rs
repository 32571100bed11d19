//! `cargo xtask module-cycles`: import cycles between the modules of each crate (every crate
//! under `crates/`, and `xtask/` itself).
//!
//! Every `crate::…`, `super::…` and `self::…` path of a crate's sources (in `use` trees,
//! braces expanded, and inline) is resolved to the module it names. A reference between
//! two modules neither of which contains the other becomes an edge between their
//! outermost differing ancestors, siblings under one parent: `crate::engine` using
//! `crate::apply::fields` is the edge `engine → apply`. A child using its parent (or the
//! reverse) is how modules nest, not a cycle. Test modules (`#[cfg(test)] mod … { }`) are
//! left out. Prints every strongly connected set of more than one sibling, with one
//! reference per edge, and fails when there is one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::root;

/// A module path below the crate root (`["apply", "fields"]`; the root is empty).
type ModPath = Vec<String>;

pub fn run(_args: &[String]) -> Result<()> {
    let mut cycles = 0;
    let mut crates = 0;
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))?
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    // The chores' own crate too.
    dirs.push(root().join("xtask").join("src"));
    for src in dirs {
        crates += 1;
        let name = src
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut files = Vec::new();
        sources(&src, &mut files)?;
        let mut modules = Vec::new();
        for f in &files {
            let text = std::fs::read_to_string(f)?;
            if let Some(m) = module_of(&src, f) {
                modules.push((m, text));
            }
        }
        for cycle in crate_cycles(&modules) {
            cycles += 1;
            println!("{name}: cycle between {}", cycle.members.join(", "));
            for (edge, example) in cycle.edges {
                println!("  {edge}: {example}");
            }
        }
    }
    println!("{crates} crates checked: {cycles} import cycles");
    if cycles > 0 {
        bail!("{cycles} import cycles between modules");
    }
    Ok(())
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// The module a source file defines (`src/apply/mod.rs` → `apply`); binaries other than
/// `main.rs` (`src/bin/…`) are left out.
fn module_of(src: &Path, file: &Path) -> Option<ModPath> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    if !(matches!(stem, "mod" | "lib" | "main") && (stem == "mod" || parts.is_empty())) {
        parts.push(stem.to_owned());
    }
    Some(parts)
}

/// One cycle: its modules and, per edge inside it, one reference that makes it.
pub struct Cycle {
    pub members: Vec<String>,
    pub edges: Vec<(String, String)>,
}

/// The cycles among the sibling modules of one crate (`modules`: path and source text).
pub fn crate_cycles(modules: &[(ModPath, String)]) -> Vec<Cycle> {
    let known: BTreeSet<&ModPath> = modules.iter().map(|(m, _)| m).collect();
    // Edge (from, to) → an example reference.
    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    for (module, text) in modules {
        for path in references(&strip_tests(text)) {
            let Some(target) = resolve(module, &path, &known) else {
                continue;
            };
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            let (Some(a), Some(b)) = (module.get(common), target.get(common)) else {
                continue; // one contains the other
            };
            let parent = module[..common].join("::");
            let name = |s: &str| {
                if parent.is_empty() {
                    s.to_owned()
                } else {
                    format!("{parent}::{s}")
                }
            };
            edges
                .entry((name(a), name(b)))
                .or_insert_with(|| format!("{} uses {}", display(module), path.join("::")));
        }
    }
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        graph.entry(a).or_default().push(b);
        graph.entry(b).or_default();
    }
    strongly_connected(&graph)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|members| {
            let inside: BTreeSet<&str> = members.iter().map(String::as_str).collect();
            let edges = edges
                .iter()
                .filter(|((a, b), _)| inside.contains(a.as_str()) && inside.contains(b.as_str()))
                .map(|((a, b), ex)| (format!("{a} → {b}"), ex.clone()))
                .collect();
            Cycle { members, edges }
        })
        .collect()
}

fn display(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".to_owned()
    } else {
        m.join("::")
    }
}

/// The module a reference names from `module`: the longest known module prefix of its
/// absolute path (`crate::apply::fields::check` → `apply::fields`).
fn resolve(module: &ModPath, path: &[String], known: &BTreeSet<&ModPath>) -> Option<ModPath> {
    let mut abs: ModPath = Vec::new();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => rest = &path[1..],
        Some("self") | Some("super") => {
            abs = module.clone();
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "self" => {}
                    "super" => {
                        abs.pop()?;
                    }
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    let mut best = abs.clone();
    for seg in rest {
        abs.push(seg.clone());
        if known.contains(&abs) {
            best = abs.clone();
        }
    }
    Some(best)
}

/// The source without `#[cfg(test)]` modules with a body, line comments and string
/// literals (whose text could look like paths).
fn strip_tests(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            // Skip the item that follows when it is an inline module.
            let mut item = String::new();
            let mut depth = 0i32;
            let mut opened = false;
            for l in lines.by_ref() {
                item.push_str(l);
                item.push('\n');
                for c in code_of(l).chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                    break;
                }
            }
            if !item.trim_start().starts_with("mod ") || !opened {
                out.push_str(&code_of_text(&item));
            }
            continue;
        }
        out.push_str(&code_of(line));
        out.push('\n');
    }
    out
}

fn code_of_text(text: &str) -> String {
    text.lines().map(|l| code_of(l) + "\n").collect()
}

/// A line without its `//` comment and with string contents blanked (roughly: enough
/// for paths, which never sit inside strings in code).
fn code_of(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_str = false;
    let mut prev = '\0';
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if in_str {
            if c == '"' && prev != '\\' {
                in_str = false;
                out.push('"');
            }
            prev = if prev == '\\' && c == '\\' { '\0' } else { c };
            continue;
        }
        if c == '/' && chars.peek() == Some(&'/') {
            break;
        }
        if c == '"' && prev != '\'' {
            in_str = true;
            prev = '\0';
            out.push('"');
            continue;
        }
        out.push(c);
        prev = c;
    }
    out
}

/// Every `crate::`/`super::`/`self::` path in the code, `use` trees expanded.
fn references(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if !word(b[i]) || (i > 0 && (word(b[i - 1]) || b[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && word(b[i]) {
            i += 1;
        }
        let w = &code[start..i];
        if matches!(w, "crate" | "super" | "self") && code[i..].starts_with("::") {
            let (tree, end) = use_tree(code, start);
            expand(&tree, &mut Vec::new(), &mut out);
            i = end;
        }
    }
    out
}

/// A path tree: a segment with the trees below it (`a::{b, c::d}`).
#[derive(Debug)]
struct Tree {
    seg: String,
    below: Vec<Tree>,
}

/// Parses the path (tree) starting at byte `at`; returns it and where it ends.
fn use_tree(code: &str, at: usize) -> (Tree, usize) {
    let b = code.as_bytes();
    let skip_ws = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut i = skip_ws(at);
    let start = i;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    let mut tree = Tree {
        seg: code[start..i].to_owned(),
        below: Vec::new(),
    };
    let j = skip_ws(i);
    if !code[j..].starts_with("::") {
        return (tree, i);
    }
    let k = skip_ws(j + 2);
    if code[k..].starts_with('{') {
        let mut p = k + 1;
        loop {
            p = skip_ws(p);
            match b.get(p) {
                None => return (tree, p),
                Some(b'}') => return (tree, p + 1),
                Some(b',') => p += 1,
                Some(c) if c.is_ascii_alphanumeric() || *c == b'_' => {
                    let (sub, end) = use_tree(code, p);
                    tree.below.push(sub);
                    p = end;
                    // `as alias`
                    let q = skip_ws(p);
                    if code[q..].starts_with("as ") {
                        let mut r = skip_ws(q + 3);
                        while r < b.len() && (b[r].is_ascii_alphanumeric() || b[r] == b'_') {
                            r += 1;
                        }
                        p = r;
                    }
                }
                Some(_) => p += 1, // `*` and anything unexpected
            }
        }
    }
    if b.get(k)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        let (sub, end) = use_tree(code, k);
        tree.below.push(sub);
        return (tree, end);
    }
    (tree, k)
}

fn expand(t: &Tree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    prefix.push(t.seg.clone());
    if t.below.is_empty() {
        out.push(prefix.clone());
    }
    for sub in &t.below {
        expand(sub, prefix, out);
    }
    prefix.pop();
}

/// Tarjan's strongly connected components, each sorted, in a stable order.
fn strongly_connected(graph: &BTreeMap<&str, Vec<&str>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<&'g str, Vec<&'g str>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in s.graph.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            comp.sort();
            s.out.push(comp);
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for &v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str) -> ModPath {
        p.split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }

    fn cycles(files: &[(&str, &str)]) -> Vec<Vec<String>> {
        let modules: Vec<(ModPath, String)> =
            files.iter().map(|(p, t)| (m(p), (*t).to_owned())).collect();
        crate_cycles(&modules)
            .into_iter()
            .map(|c| c.members)
            .collect()
    }

    #[test]
    fn finds_a_cycle_through_use_trees_and_inline_paths() {
        let found = cycles(&[
            ("", "mod engine; mod apply;"),
            ("engine", "use crate::{apply::fields::check, other};"),
            ("apply", "pub mod fields;"),
            ("apply::fields", "fn f() { crate::engine::Engine::new(); }"),
        ]);
        assert_eq!(found, vec![vec!["apply".to_owned(), "engine".to_owned()]]);
    }

    #[test]
    fn parents_children_tests_and_comments_make_no_cycle() {
        let found = cycles(&[
            ("", "use crate::a::X; mod a; mod b;"),
            ("a", "use super::Y; use self::c::Z; mod c; // crate::b::W"),
            ("a::c", "use super::super::a::X; let s = \"crate::b::Q\";"),
            (
                "b",
                "use crate::a::c::Z;\n#[cfg(test)]\nmod tests {\n    use crate::b::T;\n}\n",
            ),
            (
                "a::d",
                "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::b::T;\n}\n",
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn super_paths_resolve_to_siblings() {
        let found = cycles(&[
            ("load", "mod cache; mod sidecar;"),
            ("load::cache", "use super::sidecar::merge;"),
            ("load::sidecar", "fn f() { super::cache::get(); }"),
        ]);
        assert_eq!(
            found,
            vec![vec!["load::cache".to_owned(), "load::sidecar".to_owned()]]
        );
    }

    #[test]
    fn module_paths_of_files() {
        let src = Path::new("/x/src");
        let of = |f: &str| module_of(src, &src.join(f));
        assert_eq!(of("lib.rs"), Some(m("")));
        assert_eq!(of("apply/mod.rs"), Some(m("apply")));
        assert_eq!(of("apply/fields.rs"), Some(m("apply::fields")));
        assert_eq!(of("views/kinds/named.rs"), Some(m("views::kinds::named")));
        assert_eq!(of("bin/tool.rs"), None);
    }
}
