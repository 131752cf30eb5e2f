"""The one YAML loader for files the CLI and the server read: plan files, array-in-service files,
workload files (``arrayplan simulate --workload FILE.yaml``) and CapacityPlan specs.

These files are untrusted (a CI job plans whatever a pull request wrote), so the loader is
PyYAML's safe loader with bounds checked while the document is composed, before anything is
built from it. A document past a bound is refused with a ``YamlLimitError`` naming the file,
the line and the limit with its value; it never hangs, never grows without bound and never
ends in a traceback (docs/service.md, "Limits on input files"):

======================  ==========  =================================================================
limit                   value       what it bounds
======================  ==========  =================================================================
``MAX_YAML_BYTES``      1 MiB       the document's size in UTF-8 bytes
``MAX_YAML_DEPTH``      32          nesting of mappings and lists, aliases expanded
``MAX_YAML_ALIASES``    100         alias uses (``*name``) in one document
``MAX_YAML_NODES``      100,000     nodes (keys, values, items) once every alias is expanded: an
                                    alias counts all the nodes of what it names, so a
                                    "billion laughs" of a few hundred bytes is refused at once
``MAX_YAML_INT_DIGITS`` 40          digits of an integer, in any base YAML 1.1 reads (int64 needs
                                    19; Python refuses ints of over 4,300 digits with an error of
                                    its own, and sexagesimal 1:2:3:... costs quadratic time)
======================  ==========  =================================================================

Also refused, each with its line: merge keys (``<<: *defaults``; YAML 1.1 only, gone from
YAML 1.2: write the fields out), an alias to a node that contains it, a key that is a mapping or a
list, a key given twice, more than one document, and any value PyYAML cannot construct (an
unknown ``!tag``, a date like 2024-13-45). Every error is a ``YamlError`` (``YamlLimitError`` for
the bounds) carrying ``path``, ``line`` (1-based, None when unknown) and ``reason``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_YAML_BYTES = 1 << 20
MAX_YAML_DEPTH = 32
MAX_YAML_ALIASES = 100
MAX_YAML_NODES = 100_000
MAX_YAML_INT_DIGITS = 40

_MERGE_TAG = "tag:yaml.org,2002:merge"
_INT_TAG = "tag:yaml.org,2002:int"


class YamlError(ValueError):
    """A YAML document that cannot be read: ``path``, ``line`` (1-based or None), ``reason`` and,
    when the problem is one key's (given twice), ``field``, its dotted path."""

    def __init__(self, path: str, line: int | None, reason: str, field: str = "") -> None:
        super().__init__(f"{path}:{line or '?'}: {field + ': ' if field else ''}{reason}")
        self.path = path
        self.line = line
        self.reason = reason
        self.field = field


class YamlLimitError(YamlError):
    """A document past one of the loader's bounds: ``limit`` names it (``MAX_YAML_NODES``) and
    ``limit_value`` is its value."""

    def __init__(self, path: str, line: int | None, reason: str, limit: str, limit_value: int) -> None:
        super().__init__(path, line, reason)
        self.limit = limit
        self.limit_value = limit_value


@dataclass(frozen=True, slots=True, kw_only=True)
class YamlDocument:
    """A loaded document: plain Python ``data`` (dicts, lists, scalars) and the 1-based line of
    every key and item, by its path of keys and list indices (``("workload", "io_size_mix", 0)``;
    ``()`` is the document)."""

    data: Any
    lines: dict[tuple[Any, ...], int]


def _line(node_or_mark: Any) -> int:
    mark = getattr(node_or_mark, "start_mark", node_or_mark)
    return int(mark.line) + 1


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader whose composer counts as it goes: depth, alias uses, nodes with aliases expanded
    (each node's expanded size and height are kept so an alias adds its target's at once)."""

    def __init__(self, text: str, path: str) -> None:
        super().__init__(text)
        self.path = path
        self.depth = 0
        self.aliases = 0
        self.nodes = 0
        self.size: dict[int, int] = {}  # id(node) -> nodes in it, aliases expanded
        self.height: dict[int, int] = {}  # id(node) -> nesting levels in it, aliases expanded

    def limit(self, line: int, reason: str, name: str, value: int) -> YamlLimitError:
        return YamlLimitError(self.path, line, f"{reason} (limit {name} = {value:,})", name, value)

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            line = _line(event)
            node = super().compose_node(parent, index)
            assert node is not None
            self.aliases += 1
            if self.aliases > MAX_YAML_ALIASES:
                raise self.limit(line, f"more than {MAX_YAML_ALIASES} alias uses (*{event.anchor})",
                                 "MAX_YAML_ALIASES", MAX_YAML_ALIASES)
            size = self.size.get(id(node))
            if size is None:
                raise YamlError(self.path, line, f"alias *{event.anchor} refers to a node that contains it (a recursive alias)")
            self.nodes += size
            if self.nodes > MAX_YAML_NODES:
                raise self.limit(line, f"alias *{event.anchor} expands to {size:,} nodes: the document holds over "
                                       f"{MAX_YAML_NODES:,} nodes once its aliases are expanded", "MAX_YAML_NODES", MAX_YAML_NODES)
            if self.depth + self.height[id(node)] > MAX_YAML_DEPTH:
                raise self.limit(line, f"alias *{event.anchor} nests the document over {MAX_YAML_DEPTH} levels deep",
                                 "MAX_YAML_DEPTH", MAX_YAML_DEPTH)
            return node
        event = self.peek_event()  # type: ignore[no-untyped-call]
        collection = isinstance(event, (SequenceStartEvent, MappingStartEvent))
        self.nodes += 1
        if self.nodes > MAX_YAML_NODES:
            raise self.limit(_line(event), f"the document holds over {MAX_YAML_NODES:,} nodes", "MAX_YAML_NODES", MAX_YAML_NODES)
        if collection:
            self.depth += 1
            if self.depth > MAX_YAML_DEPTH:
                raise self.limit(_line(event), f"mappings and lists nested over {MAX_YAML_DEPTH} levels deep",
                                 "MAX_YAML_DEPTH", MAX_YAML_DEPTH)
        node = super().compose_node(parent, index)
        assert node is not None
        if collection:
            self.depth -= 1
        if isinstance(node, ScalarNode):
            self._check_scalar(node)
            self.size[id(node)], self.height[id(node)] = 1, 0
        else:
            children = [c for pair in node.value for c in pair] if isinstance(node, MappingNode) else list(node.value)
            self.size[id(node)] = 1 + sum(self.size[id(c)] for c in children)
            self.height[id(node)] = 1 + max((self.height[id(c)] for c in children), default=0)
        return node

    def _check_scalar(self, node: ScalarNode) -> None:
        if node.tag == _MERGE_TAG:
            raise YamlError(self.path, _line(node), "merge keys ('<<') are not supported: write the fields out "
                                                    "(or quote '<<' if it is text)")
        if node.tag == _INT_TAG:  # digits in any base (0x.., 0o.., sexagesimal 1:30:00); floats need no bound
            digits = sum(ch.isalnum() for ch in node.value)
            if digits > MAX_YAML_INT_DIGITS:
                raise self.limit(_line(node), f"an integer of {digits:,} digits, over {MAX_YAML_INT_DIGITS}",
                                 "MAX_YAML_INT_DIGITS", MAX_YAML_INT_DIGITS)


def _syntax_error(exc: yaml.YAMLError, text: str, path: str) -> YamlError:
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, max(0, exc.position)) + 1
        return YamlError(path, line, f"not valid YAML: {exc.reason} (character #x{exc.character:04x})"
                         if isinstance(exc.character, int) else f"not valid YAML: {exc.reason}")
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or type(exc).__name__
    return YamlError(path, _line(mark) if mark is not None else None, f"not valid YAML: {problem}")


def compose(text: str, path: str) -> tuple[Node | None, _BoundedLoader]:
    """The document's node graph, every bound checked; None for an empty document."""
    # A character is at least one UTF-8 byte: a longer text is over without encoding it.
    if len(text) > MAX_YAML_BYTES or len(text.encode("utf-8", errors="surrogatepass")) > MAX_YAML_BYTES:
        line = text.count("\n", 0, MAX_YAML_BYTES) + 1
        raise YamlLimitError(path, line, f"the document is over {MAX_YAML_BYTES:,} bytes (limit MAX_YAML_BYTES = {MAX_YAML_BYTES:,})",
                             "MAX_YAML_BYTES", MAX_YAML_BYTES)
    try:
        loader = _BoundedLoader(text, path)  # the reader refuses non-printable characters here
        try:
            return loader.get_single_node(), loader
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, text, path) from None


def load_document(text: str, path: str) -> YamlDocument | None:
    """Load one YAML document with the line of every key and item (``YamlDocument``); None when
    the document is empty. Raises ``YamlError`` (``YamlLimitError`` past a bound)."""
    root, loader = compose(text, path)
    if root is None:
        return None
    lines: dict[tuple[Any, ...], int] = {}

    def scalar(n: ScalarNode) -> Any:
        try:
            return loader.construct_object(n, deep=True)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
            why = getattr(exc, "problem", None) or str(exc).splitlines()[0][:120] or type(exc).__name__
            raise YamlError(path, _line(n), f"cannot read this value ({n.tag.rsplit(':', 1)[-1]}): {why}") from None

    def build(n: Node, at: tuple[Any, ...]) -> Any:
        lines.setdefault(at, _line(n))  # a key's own line (set by its mapping) wins over its value's, an alias's anchor
        if isinstance(n, MappingNode):
            out: dict[Any, Any] = {}
            for k, v in n.value:
                if not isinstance(k, ScalarNode):
                    raise YamlError(path, _line(k), "a key must be a plain value (text or a number), not a mapping or a list")
                key = scalar(k)
                if key in out:
                    raise YamlError(path, _line(k), "appears twice", field=_dotted(at + (key,)))
                lines[at + (key,)] = _line(k)
                out[key] = build(v, at + (key,))
            return out
        if isinstance(n, SequenceNode):
            return [build(item, at + (i,)) for i, item in enumerate(n.value)]
        assert isinstance(n, ScalarNode)
        return scalar(n)

    return YamlDocument(data=build(root, ()), lines=lines)


def load_data(text: str, path: str) -> Any:
    """The document's plain data (None when empty), bounded as ``load_document``."""
    doc = load_document(text, path)
    return None if doc is None else doc.data


def _dotted(at: tuple[Any, ...]) -> str:
    """A field path for messages. A key that does not look like a field name (a line of some other
    file read as YAML, a 500,000-character key) is shown as ``<key>``: the error's line number
    says where it is, and no line of an input file is echoed (``redaction.shown_key``)."""
    from ..redaction import shown_key

    out = ""
    for p in at:
        if isinstance(p, int) and not isinstance(p, bool):
            out += f"[{p}]"
            continue
        name = shown_key(p)
        name = name if name is not None else "<key>"
        out += f".{name}" if out else name
    return out
