//! `nidos ls DIR [filters]`: the files of a dataset that the schema accepts, with their
//! entities, datatype, suffix, extension and (optionally) merged sidecar metadata.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use indexmap::IndexMap;
use nidos_dataset::query::{query_by, Match, Query, SharedMetadata};
use nidos_dataset::OpenOptions;

use crate::schema_arg;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
    Tsv,
}

/// Entity filters shared by `ls` (values: lists `a,b` or repeated flags; globs allowed).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Filters {
    /// Subject label(s).
    #[arg(long)]
    pub sub: Vec<String>,
    /// Session label(s).
    #[arg(long)]
    pub ses: Vec<String>,
    /// Task label(s).
    #[arg(long)]
    pub task: Vec<String>,
    /// Acquisition label(s).
    #[arg(long)]
    pub acq: Vec<String>,
    /// Run index(es).
    #[arg(long)]
    pub run: Vec<String>,
    /// Datatype(s) (`anat`, `func`…).
    #[arg(long)]
    pub datatype: Vec<String>,
    /// Suffix(es) (`bold`, `T1w`…).
    #[arg(long)]
    pub suffix: Vec<String>,
    /// Extension(s) (`.nii.gz`, `nii*`…).
    #[arg(long)]
    pub extension: Vec<String>,
    /// Any entity, by long or short name: `--entity echo=1,2` (repeatable).
    #[arg(long = "entity", value_name = "KEY=VALUES")]
    pub entity: Vec<String>,
}

/// Splits `a,b,{c,d}` on commas outside braces.
pub fn split_list(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter().filter(|v| !v.is_empty()).collect()
}

fn values(v: &[String]) -> Vec<String> {
    v.iter().flat_map(|s| split_list(s)).collect()
}

impl Filters {
    pub fn to_query(&self) -> anyhow::Result<Query> {
        let mut q = Query::default();
        for (key, v) in [
            ("sub", &self.sub),
            ("ses", &self.ses),
            ("task", &self.task),
            ("acq", &self.acq),
            ("run", &self.run),
        ] {
            if !v.is_empty() {
                q.entities
                    .entry(key.to_string())
                    .or_default()
                    .extend(values(v));
            }
        }
        for e in &self.entity {
            let (k, v) = e
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--entity {e:?}: expected KEY=VALUE"))?;
            q.entities
                .entry(k.trim().to_string())
                .or_default()
                .extend(split_list(v));
        }
        q.datatypes = values(&self.datatype);
        q.suffixes = values(&self.suffix);
        q.extensions = values(&self.extension);
        Ok(q)
    }
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The dataset directory.
    pub dataset: PathBuf,
    #[command(flatten)]
    pub filters: Filters,
    /// Also list the files of derivative datasets (`derivatives/<name>/`).
    #[arg(long)]
    pub derivatives: bool,
    /// Attach each file's merged sidecar (inherited metadata).
    #[arg(long = "with-metadata")]
    pub with_metadata: bool,
    /// Output format (`tsv`/`csv`: one row per file, a column per entity and metadata key).
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    #[command(flatten)]
    pub schema: schema_arg::SchemaArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let loaded = schema_arg::load_for_dataset(&args.schema, &args.dataset)?;
    loaded.print_warnings("");
    let mut q = args.filters.to_query()?;
    for w in unknown_values(&loaded.schema, &q) {
        eprintln!("warning: {w}");
    }
    q.derivatives = args.derivatives;
    q.with_metadata = args.with_metadata;
    let opts = OpenOptions {
        ignore_nifti_headers: true,
        ..OpenOptions::default()
    };
    let order: Vec<String> = loaded
        .schema
        .entities
        .iter()
        .map(|e| e.name.clone())
        .collect();
    // Each derivative dataset is read by the rules of the version its own description
    // declares (or `--std-version`), as its validation would read it; its load warnings
    // are named by its folder.
    let top = args.dataset.clone();
    let rules_of = |dir: &Path| {
        let own = schema_arg::load_for_dataset(&args.schema, dir).ok()?;
        let name = dir.strip_prefix(&top).unwrap_or(dir).display().to_string();
        own.print_warnings(&format!("{name}: "));
        Some(own.schema)
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let result = if matches!(args.format, Format::Tsv | Format::Csv) {
        // Rows are written as they are formatted; metadata is shared between files
        // inheriting the same sidecars and each distinct sidecar set is formatted once.
        let shared = query_by(&args.dataset, &loaded.schema, &opts, &q, rules_of)?;
        let written = write_delimited(
            &mut out,
            &shared.matches,
            shared.metadata.as_ref(),
            args.format,
            &order,
        );
        finish(written.and_then(|_| out.flush()))?;
        let counts = (shared.rejected, shared.derivative_files);
        // The process ends next: the OS frees the datasets and matches at once.
        std::mem::forget(shared);
        counts
    } else {
        let mut result = query_by(&args.dataset, &loaded.schema, &opts, &q, rules_of)?;
        result.attach_metadata();
        let text = render(&result.matches, args.format, args.with_metadata, &order);
        finish(out.write_all(text.as_bytes()).and_then(|_| out.flush()))?;
        (result.rejected, result.derivative_files)
    };
    let (rejected, derivative_files) = result;
    if rejected > 0 {
        eprintln!(
            "note: {} file(s) not listed: no file rule of the schema accepts them (see `nidos validate`)",
            rejected
        );
    }
    if derivative_files > 0 {
        eprintln!(
            "note: {} file(s) of derivative datasets not listed (use --derivatives)",
            derivative_files
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A filter value no rule of the schema knows (a datatype, suffix or extension it does
/// not define, an entity value outside the entity's allowed ones), each with the
/// closest known value: such a filter matches nothing, which an empty table alone does
/// not say. Globs are left alone.
pub fn unknown_values(schema: &nidos_schema::Schema, q: &Query) -> Vec<String> {
    let is_glob = |v: &str| v.contains(['*', '?', '[', '{']);
    let mut out = Vec::new();
    let mut check = |flag: &str, values: &[String], known: &[&str], dotted: bool| {
        for v in values.iter().filter(|v| !is_glob(v)) {
            let v = v.trim_end_matches('/');
            let wanted = if dotted && !v.starts_with('.') {
                format!(".{v}")
            } else {
                v.to_string()
            };
            if known.contains(&wanted.as_str()) {
                continue;
            }
            let hint = match crate::closest::closest(&wanted, known.iter().copied()) {
                Some(c) => format!("; did you mean {c:?}?"),
                None => String::new(),
            };
            out.push(format!(
                "{flag} {v:?}: no rule of the schema knows this value, so it matches no file{hint}"
            ));
        }
    };
    let datatypes: Vec<&str> = schema.datatype_values().collect();
    let suffixes: Vec<&str> = schema.suffix_values().collect();
    let extensions: Vec<&str> = schema
        .extension_values()
        .map(|e| e.trim_end_matches('/'))
        .collect();
    check("--datatype", &q.datatypes, &datatypes, false);
    check("--suffix", &q.suffixes, &suffixes, false);
    check("--extension", &q.extensions, &extensions, true);
    for (name, values) in &q.entities {
        let entity = schema.entity(name).or_else(|| schema.entity_by_key(name));
        if let Some(allowed) = entity.and_then(|e| e.r#enum.as_ref()) {
            let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
            check(&format!("--entity {name}"), values, &allowed, false);
        }
    }
    out
}

/// A write error other than a closed pipe (`nidos ls … | head`) is an error.
fn finish(r: std::io::Result<()>) -> anyhow::Result<()> {
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// The entity columns present (as [`columns`]) and the metadata keys present, in
/// first-seen order over the matches.
fn shared_columns(
    matches: &[Match],
    shared: Option<&SharedMetadata>,
    order: &[String],
) -> (Vec<String>, Vec<String>) {
    let (ents, _) = columns(matches, order);
    let mut meta: IndexMap<&str, ()> = IndexMap::new();
    if let Some(shared) = shared {
        let mut seen = vec![false; shared.objects.len()];
        for &id in &shared.of_match {
            if let (Some(false), Some(md)) = (seen.get(id).copied(), shared.objects.get(id)) {
                seen[id] = true;
                for k in md.keys() {
                    meta.entry(k.as_str()).or_insert(());
                }
            }
        }
    }
    (ents, meta.into_keys().map(str::to_string).collect())
}

/// Writes matches as TSV or CSV rows, one per match (the same text as [`render`]).
fn write_delimited(
    out: &mut impl Write,
    matches: &[Match],
    shared: Option<&SharedMetadata>,
    format: Format,
    entity_order: &[String],
) -> std::io::Result<()> {
    let (ents, meta) = shared_columns(matches, shared, entity_order);
    let (sep, cell): (&str, fn(&str) -> String) = if format == Format::Tsv {
        ("\t", tsv_cell)
    } else {
        (",", csv_cell)
    };
    let mut header: Vec<String> = vec!["path".into()];
    header.extend(ents.iter().cloned());
    header.extend(["datatype", "suffix", "extension"].map(String::from));
    if shared.is_some() {
        header.extend(meta.iter().cloned());
    }
    out.write_all(
        header
            .iter()
            .map(|h| cell(h))
            .collect::<Vec<_>>()
            .join(sep)
            .as_bytes(),
    )?;
    out.write_all(b"\n")?;
    // The metadata cells of each distinct merged sidecar, formatted once, each with its
    // leading separator.
    let meta_cells: Vec<String> = shared
        .map(|s| {
            s.objects
                .iter()
                .map(|md| {
                    let mut t = String::new();
                    for k in &meta {
                        t.push_str(sep);
                        match md.get(k) {
                            Some(v) => t.push_str(&cell(&cell_json(v))),
                            None => t.push_str(&cell("n/a")),
                        }
                    }
                    t
                })
                .collect()
        })
        .unwrap_or_default();
    let na = "n/a";
    // Appends a cell, copying it as is when it needs no escaping (most cells).
    let special: &[char] = if format == Format::Tsv {
        &['\\', '\t', '\n', '\r']
    } else {
        &[',', '"', '\n', '\r']
    };
    let push = |line: &mut String, s: &str| {
        if s.contains(special) {
            line.push_str(&cell(s));
        } else {
            line.push_str(s);
        }
    };
    let mut line = String::with_capacity(256);
    for (n, m) in matches.iter().enumerate() {
        line.clear();
        push(&mut line, &m.path);
        for e in &ents {
            line.push_str(sep);
            push(
                &mut line,
                m.entities.get(e).map(String::as_str).unwrap_or(na),
            );
        }
        line.push_str(sep);
        push(&mut line, m.datatype.as_deref().unwrap_or(na));
        line.push_str(sep);
        push(&mut line, m.suffix.as_deref().unwrap_or(na));
        line.push_str(sep);
        push(
            &mut line,
            if m.extension.is_empty() {
                na
            } else {
                &m.extension
            },
        );
        if let Some(s) = shared {
            let cells = s
                .of_match
                .get(n)
                .and_then(|&id| meta_cells.get(id))
                .map(String::as_str);
            match cells {
                Some(c) => line.push_str(c),
                None => {
                    for _ in &meta {
                        line.push_str(sep);
                        push(&mut line, na);
                    }
                }
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// The entity columns present (long names, in first-seen order, which is the schema's
/// order for each file) and the metadata keys present.
fn columns(matches: &[Match], order: &[String]) -> (Vec<String>, Vec<String>) {
    let mut ents: IndexMap<String, usize> = IndexMap::new();
    let mut meta: IndexMap<String, ()> = IndexMap::new();
    for m in matches {
        for k in m.entities.keys() {
            if !ents.contains_key(k) {
                ents.insert(k.clone(), 0);
            }
        }
        if let Some(md) = &m.metadata {
            for k in md.keys() {
                if !meta.contains_key(k) {
                    meta.insert(k.clone(), ());
                }
            }
        }
    }
    // Entities in the schema's order; unknown ones last, by first appearance.
    let mut ents: Vec<String> = ents.into_keys().collect();
    ents.sort_by_key(|e| order.iter().position(|o| o == e).unwrap_or(usize::MAX));
    (ents, meta.into_keys().collect())
}

fn cell_json(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "n/a".into(),
        other => other.to_string(),
    }
}

fn tsv_cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders matches in a format.
pub fn render(
    matches: &[Match],
    format: Format,
    with_metadata: bool,
    entity_order: &[String],
) -> String {
    match format {
        Format::Json => {
            let arr: Vec<serde_json::Value> = matches
                .iter()
                .map(|m| {
                    let mut o = serde_json::Map::new();
                    o.insert("path".into(), m.path.clone().into());
                    if !m.dataset.is_empty() {
                        o.insert("dataset".into(), m.dataset.clone().into());
                    }
                    o.insert(
                        "entities".into(),
                        serde_json::Value::Object(
                            m.entities
                                .iter()
                                .map(|(k, v)| (k.clone(), v.clone().into()))
                                .collect(),
                        ),
                    );
                    o.insert("datatype".into(), m.datatype.clone().into());
                    o.insert("suffix".into(), m.suffix.clone().into());
                    o.insert("extension".into(), m.extension.clone().into());
                    if let Some(md) = &m.metadata {
                        o.insert("metadata".into(), serde_json::Value::Object(md.clone()));
                    }
                    serde_json::Value::Object(o)
                })
                .collect();
            let mut s = serde_json::to_string_pretty(&arr).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Csv | Format::Tsv => {
            let (ents, meta) = columns(matches, entity_order);
            let (sep, cell): (&str, fn(&str) -> String) = if format == Format::Tsv {
                ("\t", tsv_cell)
            } else {
                (",", csv_cell)
            };
            let mut header: Vec<String> = vec!["path".into()];
            header.extend(ents.iter().cloned());
            header.extend(["datatype", "suffix", "extension"].map(String::from));
            if with_metadata {
                header.extend(meta.iter().cloned());
            }
            let mut out = String::with_capacity(matches.len() * 128);
            out.push_str(&header.iter().map(|h| cell(h)).collect::<Vec<_>>().join(sep));
            out.push('\n');
            let na = "n/a".to_string();
            for m in matches {
                let mut row: Vec<String> = Vec::with_capacity(header.len());
                row.push(cell(&m.path));
                for e in &ents {
                    row.push(cell(m.entities.get(e).unwrap_or(&na)));
                }
                row.push(cell(m.datatype.as_ref().unwrap_or(&na)));
                row.push(cell(m.suffix.as_ref().unwrap_or(&na)));
                row.push(cell(if m.extension.is_empty() {
                    &na
                } else {
                    &m.extension
                }));
                if with_metadata {
                    for k in &meta {
                        let v = m
                            .metadata
                            .as_ref()
                            .and_then(|md| md.get(k))
                            .map(cell_json)
                            .unwrap_or_else(|| na.clone());
                        row.push(cell(&v));
                    }
                }
                out.push_str(&row.join(sep));
                out.push('\n');
            }
            out
        }
        Format::Table => {
            let (ents, _) = columns(matches, entity_order);
            let mut rows: Vec<Vec<String>> = Vec::with_capacity(matches.len() + 1);
            let mut header = vec!["path".to_string()];
            header.extend(ents.iter().cloned());
            header.extend(["datatype", "suffix", "extension"].map(String::from));
            if with_metadata {
                header.push("metadata keys".into());
            }
            rows.push(header);
            // A table is read on a terminal: control characters in names are shown
            // escaped (TSV, CSV and JSON escape them by their own syntax).
            let shown = |s: &str| crate::escape::control(s).into_owned();
            for m in matches {
                let mut row = vec![shown(&m.path)];
                for e in &ents {
                    row.push(m.entities.get(e).map_or_else(|| "-".into(), |v| shown(v)));
                }
                row.push(m.datatype.as_deref().map_or_else(|| "-".into(), shown));
                row.push(m.suffix.as_deref().map_or_else(|| "-".into(), shown));
                row.push(if m.extension.is_empty() {
                    "-".into()
                } else {
                    shown(&m.extension)
                });
                if with_metadata {
                    row.push(
                        m.metadata
                            .as_ref()
                            .map(|md| md.len().to_string())
                            .unwrap_or_default(),
                    );
                }
                rows.push(row);
            }
            let ncol = rows.first().map(Vec::len).unwrap_or(0);
            let widths: Vec<usize> = (0..ncol)
                .map(|c| {
                    rows.iter()
                        .map(|r| r.get(c).map(|s| s.chars().count()).unwrap_or(0))
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let mut out = String::new();
            for r in &rows {
                let line: Vec<String> = r
                    .iter()
                    .enumerate()
                    .map(|(i, s)| format!("{s:<w$}", w = widths[i]))
                    .collect();
                out.push_str(line.join("  ").trim_end());
                out.push('\n');
            }
            out
        }
    }
}
