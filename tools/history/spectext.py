"""The standard's text at each release tag, and how a term is recognised in it.

Shared by `date_terms.py` (which dates the terms of the bundled tree) and
`check_history.py` (which re-checks the dates it wrote). Only facts are read from
the standard's text: which terms occur where, and under which heading.

A tag's text is every Markdown file under `vX/src/`, except the `schema/` folder and
the changelog files (`CHANGES.md`, `pregh-changes.md`). From v1.5.0 on, the chapters
call macros (`{{ MACROS___make_sidecar_table("eeg.EEGHardware") }}` and the like) that
render tables and file-name templates from that tag's own schema; a reader of the
published text at that tag sees those tables, so the macros are expanded here into
virtual lines (field names, column names, `datatype/` + `_suffix` templates) that
carry the macro's place (file, heading) and are marked as coming from a macro.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

try:
    import yaml
except ImportError:  # pragma: no cover - reported by the callers
    yaml = None

# Every released version, oldest first.
VERSIONS = [
    "1.0.0", "1.0.1", "1.0.2", "1.1.0", "1.1.1", "1.1.2", "1.2.0", "1.2.1", "1.2.2",
    "1.3.0", "1.4.0", "1.4.1", "1.5.0", "1.6.0", "1.7.0", "1.8.0", "1.9.0", "1.10.0",
    "1.10.1", "1.11.0", "1.11.1",
]
# Versions whose text is in spec-history (the public repository starts at v1.1.2).
TEXT_VERSIONS = VERSIONS[VERSIONS.index("1.1.2"):]
CHANGELOG_FILES = {"CHANGES.md", "pregh-changes.md"}


def vkey(v: str) -> tuple:
    return tuple(int(x) for x in v.split("."))


def prev_version(v: str) -> str | None:
    i = VERSIONS.index(v)
    return VERSIONS[i - 1] if i > 0 else None


# ---------------------------------------------------------------- text model

@dataclass
class Line:
    text: str
    file: str          # path relative to vX/src
    section: str       # nearest preceding Markdown heading ("" if none)
    in_code: bool      # inside a fenced code block (or a macro-rendered template)
    via: str = ""      # macro that rendered this line, "" for literal text
    dirs: tuple = ()   # datatype directories open at this line (code blocks)
    header: bool = False  # the header row of a Markdown table


@dataclass
class TagText:
    tag: str
    lines: list = field(default_factory=list)
    unresolved_macros: list = field(default_factory=list)
    files: set = field(default_factory=set)


HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
MACRO_START = re.compile(r"\{\{\s*MACROS___(\w+)\s*\(")


def _tag_dir(root: str, version: str) -> str:
    return os.path.join(root, "v" + version, "src")


def markdown_files(src: str):
    out = []
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        if rel == "schema" or rel.startswith("schema" + os.sep):
            dirnames[:] = []
            continue
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".md") and name not in CHANGELOG_FILES:
                out.append(os.path.relpath(os.path.join(dirpath, name), src))
    return out


def clean_heading(h: str) -> str:
    h = re.sub(r"\{[#.][^}]*\}", "", h)            # attribute lists
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)  # links
    return h.strip()


# ---------------------------------------------------------------- schema of a tag

class TagSchema:
    """The YAML schema shipped with one tag (v1.5.0 on), for macro expansion only."""

    def __init__(self, src: str):
        self.root = os.path.join(src, "schema")
        self.cache: dict = {}

    def load(self, rel: str):
        if rel in self.cache:
            return self.cache[rel]
        path = os.path.join(self.root, rel)
        data = None
        if yaml is not None and os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as fh:
                    data = yaml.safe_load(fh)
            except Exception:  # a malformed file just leaves the macro unresolved
                data = None
        self.cache[rel] = data
        return data

    def yaml_files(self, sub: str):
        base = os.path.join(self.root, sub)
        out = []
        for dirpath, _d, filenames in os.walk(base):
            for name in sorted(filenames):
                if name.endswith(".yaml"):
                    out.append(os.path.relpath(os.path.join(dirpath, name), self.root))
        return sorted(out)

    def object_values(self, group: str, key: str):
        """The enumerated values the object's table lists (strings or enum refs)."""
        objs = self.load(f"objects/{group}.yaml")
        obj = objs.get(key) if isinstance(objs, dict) else None
        out = []
        stack = [obj]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if isinstance(node.get("enum"), list):
                    for v in node["enum"]:
                        if isinstance(v, dict) and isinstance(v.get("$ref"), str):
                            parts = v["$ref"].split(".")
                            enums = self.load("objects/enums.yaml")
                            if len(parts) >= 3 and isinstance(enums, dict) and isinstance(enums.get(parts[2]), dict):
                                out.append(str(enums[parts[2]].get("value", parts[2])))
                        elif isinstance(v, (str, int, float)):
                            out.append(str(v))
                for k in ("anyOf", "items", "oneOf"):
                    if k in node:
                        stack.append(node[k])
            elif isinstance(node, list):
                stack.extend(node)
        return out

    def object_name(self, group: str, key: str) -> str:
        objs = self.load(f"objects/{group}.yaml")
        if isinstance(objs, dict) and isinstance(objs.get(key), dict):
            name = objs[key].get("name") or objs[key].get("value")
            if isinstance(name, str):
                return name
        return key.split("__")[0]

    def resolve(self, dotted: str, subdirs: list):
        """`eeg.EEGHardware` → the mapping at rules/<subdir>/eeg.yaml: EEGHardware."""
        parts = dotted.split(".")
        for sub in subdirs:
            for cut in range(len(parts) - 1, 0, -1):
                rel = os.path.join(sub, *parts[:cut]) + ".yaml"
                node = self.load(rel)
                ok = node is not None
                for p in parts[cut:]:
                    if isinstance(node, dict) and p in node:
                        node = node[p]
                    else:
                        ok = False
                        break
                if ok:
                    return node
        return None

    def file_rule_suffixes(self, datatype: str):
        found = []
        for rel in self.yaml_files("rules/files/raw") + self.yaml_files("rules/datatypes") + self.yaml_files("datatypes"):
            data = self.load(rel)
            stack = [data]
            if rel.startswith("datatypes") and isinstance(data, list):
                if os.path.splitext(os.path.basename(rel))[0] != datatype:
                    continue
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    dts = node.get("datatypes")
                    if isinstance(node.get("suffixes"), list) and (
                        rel.startswith("datatypes") or (isinstance(dts, list) and datatype in dts)
                    ):
                        found.extend(s for s in node["suffixes"] if isinstance(s, str))
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
        return list(dict.fromkeys(found))


def _macro_call(lines: list, i: int, start: int):
    """Return (argument text, index of the line where the call ends)."""
    buf = lines[i][start:]
    j = i
    while "}}" not in buf and j + 1 < len(lines) and j - i < 400:
        j += 1
        buf += "\n" + lines[j]
    return buf.split("}}")[0], j


def _strings(s: str):
    return re.findall(r"""["']([^"'\n]+)["']""", s)


def _kwarg_list(args: str, name: str):
    m = re.search(name + r"\s*=\s*\[([^\]]*)\]", args)
    return _strings(m.group(1)) if m else None


def _dict_keys(args: str):
    return re.findall(r"""["'](\w+)["']\s*:""", args)


def expand_macro(name: str, args: str, schema: TagSchema):
    """Virtual lines (text, in_code, dirs) a macro renders, or None if unresolved."""
    out = []
    if name == "make_filename_template":
        dts = _kwarg_list(args, "datatypes") or []
        sfx = _kwarg_list(args, "suffixes")
        if not dts:
            return None
        for dt in dts:
            suffixes = sfx if sfx is not None else schema.file_rule_suffixes(dt)
            out.append((f"{dt}/", True, (dt,)))
            for s in suffixes:
                out.append((f"    sub-<label>_{s}", True, (dt,)))
        return out
    if name == "make_suffix_table":
        return [(f"`_{s}`", False, ()) for s in _strings(args)]
    if name in ("make_metadata_table", "make_columns_table") and "{" in args:
        group = "metadata" if name == "make_metadata_table" else "columns"
        out = []
        for k in _dict_keys(args):
            out.append((f"`{schema.object_name(group, k)}`", False, ()))
            out.extend((f'"{v}"', False, ()) for v in schema.object_values(group, k))
        return out
    if name in ("make_sidecar_table", "make_columns_table", "make_json_table", "make_subobject_table"):
        refs = _strings(args)
        if not refs:
            return None
        for ref in refs:
            if name == "make_sidecar_table":
                node, group, key = schema.resolve(ref, ["rules/sidecars", "rules"]), "metadata", "fields"
            elif name == "make_columns_table":
                node, group, key = schema.resolve(ref, ["rules/tabular_data", "rules"]), "columns", "columns"
            elif name == "make_json_table":
                node, group, key = schema.resolve(ref, ["rules"]), "metadata", "fields"
            else:
                node, group, key = schema.resolve(ref, ["objects"]), "metadata", "properties"
            if not isinstance(node, dict):
                return None
            items = node.get(key)
            if not isinstance(items, dict):
                return None
            for k in items:
                out.append((f"`{schema.object_name(group, k)}`", False, ()))
                out.extend((f'"{v}"', False, ()) for v in schema.object_values(group, k))
        return out
    return []  # other macros render nothing term-like that the literal text lacks


BRACKETED = re.compile(r"[A-Za-z0-9_]*(?:\\?\[[^\]\s]{1,40}?\\?\][A-Za-z0-9_]*)+")
GROUP = re.compile(r"\\?\[([^\]\s]{1,40}?)\\?\]")


def expand_brackets(token: str):
    """`MNI152NLin2009[a-c][Sym|Asym]` → every name the pattern stands for."""
    token = token.replace("\\|", "|")
    alts = [""]
    pos = 0
    for m in GROUP.finditer(token):
        body = m.group(1).replace("\\", "")
        if re.fullmatch(r"[a-z]-[a-z]|[0-9]-[0-9]|[A-Z]-[A-Z]", body):
            opts = [chr(c) for c in range(ord(body[0]), ord(body[2]) + 1)]
        elif "|" in body:
            opts = body.split("|")
        else:
            return []  # an optional part such as [.gz]: nothing new to name
        alts = [a + token[pos:m.start()] + o for a in alts for o in opts]
        pos = m.end()
        if len(alts) > 64:
            return []
    return [a + token[pos:] for a in alts]


@lru_cache(maxsize=None)
def load_tag(root: str, version: str) -> TagText:
    src = _tag_dir(root, version)
    tag = TagText("v" + version)
    schema = TagSchema(src)
    for rel in markdown_files(src):
        tag.files.add(rel)
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as fh:
            raw = fh.read().split("\n")
        section = ""
        in_code = False
        dirs: tuple = ()
        i = 0
        while i < len(raw):
            text = raw[i]
            if FENCE.match(text):
                in_code = not in_code
                dirs = ()
                i += 1
                continue
            if not in_code and TABLE_RULE.match(text):
                prev = next((x for x in reversed(tag.lines) if not x.via), None)
                if prev is not None and prev.file == rel and "|" in prev.text:
                    prev.header = True
            if not in_code:
                m = HEADING.match(text)
                if m:
                    section = clean_heading(m.group(2))
            else:
                d = re.match(r"^\s*([A-Za-z0-9]+)/\s*$", text)
                if d:
                    dirs = (d.group(1),)
            tag.lines.append(Line(text, rel, section, in_code, "", dirs))
            if "[" in text and ("|" in text or "-" in text):
                for tok in BRACKETED.findall(text):
                    names = expand_brackets(tok)
                    if len(names) > 1:
                        tag.lines.append(Line(" ".join(f"`{n}`" for n in names), rel, section, False, "pattern", ()))
            mm = MACRO_START.search(text)
            if mm:
                args, end = _macro_call(raw, i, mm.end())
                try:
                    virt = expand_macro(mm.group(1), args, schema)
                except Exception:
                    virt = None
                if virt is None:
                    tag.unresolved_macros.append(f"{rel}: {mm.group(1)}")
                else:
                    label = f"{mm.group(1)}"
                    for vt, vcode, vdirs in virt:
                        tag.lines.append(Line(vt, rel, section, vcode, label, vdirs))
                for k in range(i + 1, end + 1):
                    tag.lines.append(Line(raw[k], rel, section, in_code, "", dirs))
                i = end + 1
                continue
            i += 1
    return tag


# ---------------------------------------------------------------- matchers

BRAND_NAMES = {"StdVersion": "BIDSVersion", "std_uri": "bids_uri", ".stdignore": ".bidsignore"}


def text_name(name: str) -> str:
    """The name as the upstream text writes it (our tree writes the brand as Std)."""
    return BRAND_NAMES.get(name, name)


def _wb(term: str) -> str:
    return r"(?<![A-Za-z0-9_])" + re.escape(term) + r"(?![A-Za-z0-9_])"


def _strict(term: str) -> str:
    """A common word: only as code, a quoted value or a table cell."""
    t = re.escape(term)
    return (r"`" + t + r"`|\"" + t + r"\"|'" + t + r"'|(?:^|\|)[ \t]*\**" + t + r"\**[ \t]*(?=\|)")


# What stands before `_suffix` in a file name: an entity label (`-rest`), a placeholder
# (`<label>`, `*`, `[_run-<index>]`), or the start of the token (`_bold` as code). This
# keeps snake_case words (`status_description`, `dataset_description`) out.
FILE_PREFIX = r"(?:[*>\]`\"'(/ \t]|^|-[A-Za-z0-9+]+)"
COMMON_WORD = re.compile(r"^(?:[A-Z]?[a-z]+|[A-Z]{1,5})$")


@lru_cache(maxsize=None)
def matcher(kind: str, name: str):
    """(regex, needs_code) for a term of a kind; needs_code: only code lines/blocks count."""
    n = text_name(name)
    if kind == "datatype":
        return re.compile(r"(?<![\w.<-])" + re.escape(n) + r"/|\"" + re.escape(n) + r"\"[ \t]*:[ \t]*\{"), False
    if kind == "suffix-strong":
        return re.compile(FILE_PREFIX + r"_" + re.escape(n) + r"(?![A-Za-z0-9])", re.M), False
    if kind == "suffix":
        return re.compile(FILE_PREFIX + r"_" + re.escape(n) + r"(?![A-Za-z0-9])|`" + re.escape(n) + r"`|(?:^|\|)[ \t]*\**" + re.escape(n) + r"\**[ \t]*(?=\|)", re.M), False
    if kind == "entity":
        # `acq-<label>`, or a label that ends in a file-name position (`space-MNI305_`,
        # `` `run-1` ``): prose such as "space-delimited" is not an entity.
        return re.compile(r"(?<![A-Za-z0-9])" + re.escape(n)
                          + r"-(?:<|[A-Za-z0-9*+]+(?=[_/\]`\"')]|\.[A-Za-z]|$))", re.M), False
    if kind == "extension":
        return re.compile(re.escape(n.rstrip("/")) + r"(?![A-Za-z0-9])"), False
    if kind in ("metadata", "column"):
        if COMMON_WORD.match(n):
            return re.compile(_strict(n), re.M), False
        return re.compile(_wb(n)), False
    if kind == "value":
        return re.compile(_strict(n) + r"|(?<=[a-z]-)" + re.escape(n) + r"(?![A-Za-z0-9])", re.M), False
    if kind == "toplevel":
        if n.endswith("/"):
            return re.compile(r"(?<![\w.-])" + re.escape(n) + r"|`/?" + re.escape(n[:-1]) + r"/?`"), False
        return re.compile(_wb(n)), False
    raise ValueError(kind)


URL = re.compile(r"https?://[^\s)>\]]+")


class Index:
    """The lines of a tag joined into one text, to search with one regex call."""

    def __init__(self, lines):
        self.lines = lines
        self.starts = []
        pos = 0
        parts = []
        for ln in lines:
            self.starts.append(pos)
            parts.append(URL.sub(lambda m: " " * len(m.group(0)), ln.text))
            pos += len(ln.text) + 1
        self.blob = "\n".join(parts)

    def line_at(self, offset):
        return self.lines[bisect.bisect_right(self.starts, offset) - 1]

    def first(self, rx):
        m = rx.search(self.blob)
        return self.line_at(m.start()) if m else None

    def all(self, rx):
        seen = []
        for m in rx.finditer(self.blob):
            ln = self.line_at(m.start())
            if not seen or seen[-1] is not ln:
                seen.append(ln)
        return seen


@lru_cache(maxsize=None)
def indexes(root: str, version: str):
    tag = load_tag(root, version)
    return Index([l for l in tag.lines if not l.via]), Index([l for l in tag.lines if l.via])


@lru_cache(maxsize=None)
def folder_files(root: str, version: str, datatype: str):
    """Files of a tag that show the `datatype/` folder in a file tree or template."""
    lit, mac = indexes(root, version)
    return frozenset(ln.file for ln in lit.lines + mac.lines if ln.in_code and datatype in ln.dirs)


@lru_cache(maxsize=None)
def owner_sections(root: str, version: str, kind: str, name: str):
    """(file, section) pairs of a tag where a term is stated."""
    lit, mac = indexes(root, version)
    if kind == "entity":
        rx = matcher("entity", name)[0]
    else:
        rx = matcher(kind, name)[0]
    return frozenset((ln.file, ln.section) for ln in lit.all(rx) + mac.all(rx))


def find_term(root: str, version: str, kind: str, name: str, context=None):
    """(literal line, macro-rendered line) where the tag's text first states the term.

    `context` narrows the weak forms of a term: for a suffix, `{"datatype": [...]}` (a bare
    `T1w` counts only in a chapter showing one of those folders; `_T1w` counts anywhere);
    for a value, `{"metadata"|"column"|"entity": [...]}` (the value counts only in a section
    that also states one of its owners)."""
    lit, mac = indexes(root, version)
    if kind == "file":
        return find_combo(lit, *name.split("/_", 1)), find_combo(mac, *name.split("/_", 1))
    rx, _ = matcher(kind, name)
    if not context and not COMMON_WORD.match(text_name(name)):
        return lit.first(rx), mac.first(rx)
    ok = context_filter(root, version, kind, name, context)
    return (next((ln for ln in lit.all(rx) if ok(ln)), None),
            next((ln for ln in mac.all(rx) if ok(ln)), None))


def all_hits(root: str, version: str, kind: str, name: str, context=None):
    lit, mac = indexes(root, version)
    rx, _ = matcher(kind, name)
    hits = lit.all(rx) + mac.all(rx)
    if context or COMMON_WORD.match(text_name(name)):
        ok = context_filter(root, version, kind, name, context)
        hits = [ln for ln in hits if ok(ln)]
    return hits


def context_filter(root, version, kind, name, context):
    """Which hits count: not a common word in a table's header row, and within the context."""
    inner = _context_filter(root, version, kind, name, context) if context else (lambda ln: True)
    if COMMON_WORD.match(text_name(name)) and kind in ("metadata", "column", "value"):
        return lambda ln: not ln.header and inner(ln)
    return inner


def _context_filter(root, version, kind, name, context):
    if kind == "suffix":
        strong = matcher("suffix-strong", name)[0]
        files = set()
        for dt in context.get("datatype", []):
            files |= folder_files(root, version, dt)

        def ok(ln):
            return bool(strong.search(URL.sub("", ln.text))) or ln.file in files
    else:
        secs = set()
        for okind, names in context.items():
            for o in names:
                secs |= owner_sections(root, version, okind, o)

        def ok(ln):
            return (ln.file, ln.section) in secs
    return ok


def find_combo(index: Index, datatype: str, suffix: str):
    """A file name of `suffix` placed in the `datatype/` folder."""
    srx = matcher("suffix-strong", suffix)[0]
    inline = re.compile(r"(?<![\w-])" + re.escape(datatype) + r"/[^\s`]*_" + re.escape(suffix) + r"(?![A-Za-z0-9])")
    for ln in index.all(srx):
        if (ln.in_code and datatype in ln.dirs) or inline.search(ln.text):
            return ln
    return None


def combo_same_chapter(root: str, version: str, datatype: str, suffix: str):
    """Fallback for a pair: a chapter that shows the `datatype/` folder and names `_suffix`."""
    lit, mac = indexes(root, version)
    files = folder_files(root, version, datatype)
    srx = matcher("suffix-strong", suffix)[0]
    for ln in lit.all(srx) + mac.all(srx):
        if ln.file in files:
            return ln
    return None


def text_root(repo_root: str) -> str:
    return os.path.normpath(os.path.join(repo_root, "..", "shared", "spec-history"))
