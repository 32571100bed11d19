"""Runs each case of cases/ against `nidos lsp` (see conftest.py and README.md)."""
import asyncio
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import nidos_bin

# How long a step waits for the server's diagnostics to come to what it expects.
WAIT_S = 20.0


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[nidos_bin(), "lsp"]))
async def client(lsp_client: LanguageClient, case):
    _, root = case
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="dataset")],
        )
    )
    yield
    await lsp_client.shutdown_session()


class Session:
    def __init__(self, client: LanguageClient, root):
        self.client = client
        self.root = root
        self.texts = {}
        self.versions = {}

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def text(self, rel: str) -> str:
        if rel not in self.texts:
            self.texts[rel] = (self.root / rel).read_text()
        return self.texts[rel]

    def position(self, rel: str, at) -> types.Position:
        """`at`: a text of the document (the position one character into its first
        occurrence), or {after: text} (just after it)."""
        text = self.text(rel)
        if isinstance(at, dict):
            needle = at["after"]
            offset = text.index(needle) + len(needle)
        else:
            offset = text.index(at) + 1
        line = text.count("\n", 0, offset)
        col = offset - (text.rfind("\n", 0, offset) + 1)
        return types.Position(line=line, character=len(text[offset - col:offset].encode("utf-16-le")) // 2)

    def range_text(self, rel: str, r: types.Range) -> str:
        lines = self.text(rel).split("\n")
        if r.start.line == r.end.line:
            return lines[r.start.line][r.start.character:r.end.character]
        return "\n".join(
            [lines[r.start.line][r.start.character:]]
            + lines[r.start.line + 1:r.end.line]
            + [lines[r.end.line][:r.end.character]]
        )

    def open(self, rel: str):
        self.versions[rel] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=self.uri(rel), language_id=language(rel), version=1, text=self.text(rel)
                )
            )
        )

    def edit(self, rel: str, spec: dict):
        if "text" in spec:
            new = spec["text"]
        else:
            old, repl = spec["replace"]
            assert old in self.text(rel), f"{old!r} is not in {rel}"
            new = self.text(rel).replace(old, repl, 1)
        self.texts[rel] = new
        self.versions[rel] = self.versions.get(rel, 1) + 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri(rel), version=self.versions[rel]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)],
            )
        )
        return time.monotonic()

    async def diagnostics(self, spec: dict, since: float):
        """Waits until the file's published diagnostics have every `has` entry and no
        `lacks` code; fails with what was published after WAIT_S."""
        rel = spec["file"]
        uri = self.uri(rel)
        deadline = time.monotonic() + WAIT_S
        while True:
            got = self.client.diagnostics.get(uri, [])
            problems = self.check(rel, got, spec)
            if not problems:
                return time.monotonic() - since
            if time.monotonic() > deadline:
                shown = [(d.code, self.range_text(rel, d.range) if rel.endswith((".json", ".tsv")) else "", d.message) for d in got]
                pytest.fail(f"diagnostics of {rel}: {problems}; published: {shown}")
            await asyncio.sleep(0.02)

    def check(self, rel, got, spec):
        problems = []
        for want in spec.get("has", []):
            ok = [
                d for d in got
                if d.code == want["code"]
                and ("at" not in want or self.range_text(rel, d.range) == want["at"])
                and ("message_contains" not in want or want["message_contains"] in d.message)
            ]
            if not ok:
                problems.append(f"missing {want}")
        for code in spec.get("lacks", []):
            if any(d.code == code for d in got):
                problems.append(f"still has {code}")
        if "count" in spec and len(got) != spec["count"]:
            problems.append(f"{len(got)} diagnostics, expected {spec['count']}")
        return problems


def language(rel: str) -> str:
    return "json" if rel.endswith(".json") else "plaintext"


@pytest.mark.asyncio
async def test_case(client: LanguageClient, case):
    spec, root = case
    s = Session(client, root)
    since = time.monotonic()
    for step in spec["steps"]:
        (kind, arg), = step.items()
        if kind == "open":
            s.open(arg)
        elif kind == "edit":
            since = s.edit(arg["file"], arg)
        elif kind == "diagnostics":
            took = await s.diagnostics(arg, since)
            if "within_ms" in arg:
                assert took * 1000 <= arg["within_ms"], f"diagnostics took {took * 1000:.0f} ms"
        elif kind == "hover":
            h = await client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=s.uri(arg["file"])),
                    position=s.position(arg["file"], arg["at"]),
                )
            )
            assert h is not None, f"no hover at {arg['at']!r}"
            for want in arg.get("contains", []):
                assert want in h.contents.value, f"{want!r} not in hover {h.contents.value!r}"
        elif kind == "completion":
            c = await client.text_document_completion_async(
                types.CompletionParams(
                    text_document=types.TextDocumentIdentifier(uri=s.uri(arg["file"])),
                    position=s.position(arg["file"], arg["at"]),
                )
            )
            items = c.items if hasattr(c, "items") else (c or [])
            ranked = [i.label for i in sorted(items, key=lambda i: i.sort_text or i.label)]
            for want in arg.get("includes", []):
                assert want in ranked, f"{want!r} not offered: {ranked[:40]}"
            for not_want in arg.get("excludes", []):
                assert not_want not in ranked, f"{not_want!r} offered"
            if "first" in arg:
                assert ranked[: len(arg["first"])] == arg["first"], ranked[:10]
        elif kind == "code_action":
            rel = arg["file"]
            acts = await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=s.uri(rel)),
                    range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                    context=types.CodeActionContext(diagnostics=client.diagnostics.get(s.uri(rel), [])),
                )
            )
            titles = [a.title for a in acts or []]
            match = [a for a in acts or [] if arg["title_contains"] in a.title]
            assert match, f"no action with {arg['title_contains']!r}: {titles}"
            edits = match[0].edit.changes[s.uri(rel)]
            new = apply_edits(s.text(rel), edits)
            for want in arg.get("result_contains", []):
                assert want in new, f"{want!r} not in the edited text {new!r}"
            if arg.get("apply"):
                s.texts[rel] = new
                s.versions[rel] += 1
                client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(uri=s.uri(rel), version=s.versions[rel]),
                        content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)],
                    )
                )
                since = time.monotonic()
        else:
            raise AssertionError(f"unknown step {kind}")


def apply_edits(text: str, edits) -> str:
    lines = text.split("\n")
    starts = [0]
    for l in lines[:-1]:
        starts.append(starts[-1] + len(l) + 1)

    def off(p):
        line = lines[p.line]
        # UTF-16 columns → code points (ASCII in these cases).
        return starts[p.line] + len(line.encode("utf-16-le")[: p.character * 2].decode("utf-16-le"))

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: off(e.range.start)] + e.new_text + text[off(e.range.end):]
    return text
