//! `nidos schema …`: check, show, list versions of, compare and export schemas.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use nidos_schema::{LoadOptions, RuleKind, Schema};
use serde_json::{json, Value};

#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Json,
    Yaml,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiffFormat {
    #[default]
    Text,
    Json,
}

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Check a schema (YAML rule tree or compiled JSON; default: the bundled one):
    /// unknown keys, bad levels, duplicate issue codes, unparsable expressions, bad
    /// regexes, dangling or cyclic references. Exits 1 when it finds errors.
    Check {
        /// Schema directory or compiled JSON file.
        path: Option<PathBuf>,
        /// Do not print warnings, only errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the resolved schema, or the part at a dotted key path (`objects.entities.subject`).
    Show {
        /// Dotted key path; empty for the whole schema.
        key: Option<String>,
        /// A schema to use instead of the bundled one.
        #[arg(long)]
        schema: Option<PathBuf>,
        /// The standard version to select (lifecycle-annotated trees).
        #[arg(long, visible_alias = "std-version")]
        version: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
    },
    /// List the versions the bundled schema (or `--schema`) supports, newest first.
    Versions {
        #[arg(long)]
        schema: Option<PathBuf>,
    },
    /// Compare two schemas, each a version of the bundled schema or a path: what the
    /// second adds, changes, deprecates and removes, by section, as a changelog
    /// (`--format json`: the added, removed and changed keys of each part of the tree).
    Diff {
        a: String,
        b: String,
        #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
        format: DiffFormat,
    },
    /// Print the resolved rule set as one JSON document (loadable with `--schema`), or,
    /// given DIR, write the bundled YAML rule tree there to edit it and run with
    /// `NIDOS_SCHEMA_DIR=DIR` or `--schema DIR` (no rebuild needed).
    Export {
        /// Write the bundled YAML tree into this (new or empty) directory.
        dir: Option<PathBuf>,
        #[arg(long)]
        schema: Option<PathBuf>,
        #[arg(long, visible_alias = "std-version")]
        version: Option<String>,
    },
}

pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    let result = dispatch(cmd);
    // `nidos schema show | head` closes the pipe early: that is not an error.
    if let Err(e) = &result {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return Ok(ExitCode::SUCCESS);
        }
    }
    result
}

fn dispatch(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Check { path, quiet } => check(path, quiet),
        Command::Show {
            key,
            schema,
            version,
            format,
        } => show(key, schema, version, format),
        Command::Versions { schema } => versions(schema),
        Command::Diff { a, b, format } => diff(&a, &b, format),
        Command::Export {
            dir: Some(dir),
            schema: None,
            version: None,
        } => export_tree(&dir),
        Command::Export { dir: Some(_), .. } => {
            anyhow::bail!(
                "`schema export DIR` writes the bundled tree; it takes no --schema or --version"
            )
        }
        Command::Export {
            dir: None,
            schema,
            version,
        } => export(schema, version),
    }
}

fn schema_path(p: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let p = match p {
        Some(arg) => {
            let mut warnings = Vec::new();
            let p = crate::schema_arg::local_schema(&arg, None, &mut warnings)?;
            for w in warnings {
                eprintln!("warning: {}", crate::escape::keep_lines(&w.to_string()));
            }
            p
        }
        None => nidos_schema::bundled_schema_dir(),
    };
    if !p.exists() {
        anyhow::bail!(
            "no schema at {} (pass a path, or set {} to the bundled schema directory)",
            p.display(),
            nidos_schema::BUNDLED_ENV
        );
    }
    Ok(p)
}

fn load(path: &Path, version: Option<String>, tolerant: bool) -> anyhow::Result<Schema> {
    let opts = LoadOptions {
        version,
        tolerate_expression_errors: tolerant,
        ..LoadOptions::default()
    };
    let s = nidos_schema::load_path_with(path, &opts)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("loading schema {}", path.display()))?;
    for w in s
        .warnings
        .iter()
        .filter(|w| w.kind == nidos_schema::ErrorKind::Version)
    {
        eprintln!("warning: {}", crate::escape::keep_lines(&w.to_string()));
    }
    Ok(s)
}

fn check(path: Option<PathBuf>, quiet: bool) -> anyhow::Result<ExitCode> {
    let path = schema_path(path)?;
    let report = nidos_schema::check_path(&path);
    let mut out = std::io::stdout().lock();
    for e in &report.errors {
        writeln!(out, "error: {e}")?;
    }
    if !quiet {
        for w in &report.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    writeln!(
        out,
        "{}: {} errors, {} warnings",
        path.display(),
        report.errors.len(),
        report.warnings.len()
    )?;
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_value(v: &Value, format: Format) -> anyhow::Result<()> {
    let text = match format {
        Format::Json => serde_json::to_string_pretty(v)? + "\n",
        Format::Yaml => {
            serde_saphyr::to_string(v).map_err(|e| anyhow::anyhow!("cannot write YAML: {e}"))?
        }
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

fn show(
    key: Option<String>,
    schema: Option<PathBuf>,
    version: Option<String>,
    format: Format,
) -> anyhow::Result<ExitCode> {
    let path = schema_path(schema)?;
    let s = load(&path, version, true)?;
    let key = key.unwrap_or_default();
    let Some(v) = s.get(&key) else {
        anyhow::bail!("no key `{key}` in the schema");
    };
    print_value(v, format)?;
    Ok(ExitCode::SUCCESS)
}

fn versions(schema: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let path = schema_path(schema)?;
    let vs = nidos_schema::supported_versions(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut out = std::io::stdout().lock();
    for (i, v) in vs.iter().enumerate() {
        writeln!(out, "{v}{}", if i == 0 { " (default)" } else { "" })?;
    }
    Ok(ExitCode::SUCCESS)
}

fn export(schema: Option<PathBuf>, version: Option<String>) -> anyhow::Result<ExitCode> {
    let path = schema_path(schema)?;
    let s = load(&path, version, false)?;
    print_value(&s.raw, Format::Json)?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the bundled YAML tree (as embedded in the binary) into `dir`.
fn export_tree(dir: &Path) -> anyhow::Result<ExitCode> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        anyhow::bail!(
            "{} is not empty: export into a new or empty directory",
            dir.display()
        );
    }
    let files = nidos_schema::bundled_files().map_err(|e| anyhow::anyhow!("{e}"))?;
    for (rel, text) in &files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    eprintln!(
        "wrote {} files of the bundled rules to {}; run with {}={} or --schema {}",
        files.len(),
        dir.display(),
        nidos_schema::BUNDLED_ENV,
        dir.display(),
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// A schema named on the command line: an existing path, else a bundled version.
fn load_spec(spec: &str) -> anyhow::Result<Schema> {
    let p = Path::new(spec);
    if p.exists() {
        load(p, None, true)
    } else {
        let dir = schema_path(None)?;
        load(&dir, Some(spec.to_owned()), true)
    }
}

/// What differs between two schemas, per category: added, removed, changed keys.
pub fn diff_value(a: &Schema, b: &Schema) -> Value {
    fn table<'s>(s: &'s Schema, path: &[&str]) -> Vec<(String, &'s Value)> {
        let mut v = s.raw.value();
        for p in path {
            match v.get(p) {
                Some(x) => v = x,
                None => return Vec::new(),
            }
        }
        v.as_object()
            .map(|m| m.iter().map(|(k, x)| (k.clone(), x)).collect())
            .unwrap_or_default()
    }
    /// The rules under one node of a kind, by their keys below the node (groups joined
    /// with dots).
    fn rules<'s>(s: &'s Schema, kind: &RuleKind, node: &str) -> Vec<(String, &'s Value)> {
        let Some(v) = s.raw.get(kind.root).and_then(|r| r.get(node)) else {
            return Vec::new();
        };
        kind.rules_under(v, &format!("{}.{node}", kind.root))
            .into_iter()
            .map(|r| (r.keys.join("."), r.value))
            .collect()
    }
    fn compare(a: Vec<(String, &Value)>, b: Vec<(String, &Value)>) -> Value {
        let bm: indexmap::IndexMap<_, _> = b.into_iter().collect();
        let am: indexmap::IndexMap<_, _> = a.into_iter().collect();
        let added: Vec<&String> = bm.keys().filter(|k| !am.contains_key(*k)).collect();
        let removed: Vec<&String> = am.keys().filter(|k| !bm.contains_key(*k)).collect();
        let changed: Vec<&String> = am
            .iter()
            .filter(|(k, v)| bm.get(*k).is_some_and(|w| w != *v))
            .map(|(k, _)| k)
            .collect();
        json!({"added": added, "removed": removed, "changed": changed})
    }
    let mut out = serde_json::Map::new();
    out.insert(
        "a".into(),
        json!({"brand": a.brand.name, "version": a.version, "schema_version": a.schema_version}),
    );
    out.insert(
        "b".into(),
        json!({"brand": b.brand.name, "version": b.version, "schema_version": b.schema_version}),
    );
    for t in [
        "entities",
        "datatypes",
        "suffixes",
        "extensions",
        "formats",
        "metadata",
        "columns",
        "enums",
    ] {
        out.insert(
            t.into(),
            compare(table(a, &["objects", t]), table(b, &["objects", t])),
        );
    }
    let order = |s: &Schema| {
        s.entities
            .iter()
            .map(|e| e.name.clone())
            .collect::<Vec<_>>()
    };
    if order(a) != order(b) {
        out.insert("entity_order".into(), json!({"a": order(a), "b": order(b)}));
    }
    for kind in nidos_schema::RULE_KINDS {
        for node in kind.nodes {
            // Rule nodes are named by their path; `meta.associations` by its key alone.
            let label = match kind.root {
                "rules" => format!("rules.{node}"),
                _ => (*node).to_owned(),
            };
            out.insert(label, compare(rules(a, kind, node), rules(b, kind, node)));
        }
    }
    Value::Object(out)
}

fn diff(a: &str, b: &str, format: DiffFormat) -> anyhow::Result<ExitCode> {
    let sa = load_spec(a)?;
    let sb = load_spec(b)?;
    let mut out = std::io::stdout().lock();
    if format == DiffFormat::Json {
        let d = diff_value(&sa, &sb);
        writeln!(out, "{}", serde_json::to_string_pretty(&d)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let log = crate::schema_changelog::changelog(&sa, &sb);
    out.write_all(crate::schema_changelog::render(&sa, &sb, &log).as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
