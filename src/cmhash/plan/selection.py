"""Selection without editing the objects: rules from ``.cmhash.yaml`` (or a KRM
functionConfig) that leave config objects out of every checksum, or leave workloads
out of (or restrict cmhash to) the annotated ones (docs/concepts/dependencies-and-selection.md
shows them). A rule matches an object by kind, name glob, namespace glob and label
selector, all optional (``fnmatch`` globs, case-sensitive; the namespace is the one the
object lands in: as written, else ``--namespace``, else ``""``).

Label selectors use Kubernetes' string syntax (``kubectl get -l``): comma-separated
requirements ``k``, ``!k``, ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``,
``k>1``, ``k<1``; all must hold.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

# (the patterns: compiled by re's cache when the configuration has a selector)
_KEY = (
    r"(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
)
_VALUE = r"(?:[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?"
# As apimachinery's lexer (pkg/labels/selector.go: isSpecialSymbol, scanIDOrKeyword): an
# identifier runs to whitespace or one of = ! ( ) , > <, and it is the keyword in/notin
# only when it is that word whole, so 'in-cluster=true' and '(in-review)' are identifiers
_TOKEN = r"\s*(!=|==|=|!|,|\(|\)|<|>|[^\s!=,()<>]+)"


class SelectorError(ValueError):
    """An invalid selector: ``column`` is 1-based within the selector text."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


class Requirement(NamedTuple):
    key: str
    op: str  # exists | !exists | = | != | in | notin | > | <
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        if self.op == "exists":
            return value is not None
        if self.op == "!exists":
            return value is None
        if self.op in ("=", "in"):
            return value in self.values
        if self.op in ("!=", "notin"):
            return value not in self.values  # as in Kubernetes: true when the label is absent
        if value is None or not re.fullmatch(r"-?[0-9]+", value):
            return False
        number = int(value)
        return number > int(self.values[0]) if self.op == ">" else number < int(self.values[0])


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, int]] = []
        pos = 0
        token = re.compile(_TOKEN)
        while pos < len(text):
            m = token.match(text, pos)
            if m is None or not m.group(1):
                if text[pos:].strip():
                    raise SelectorError("unexpected character", pos + 1)
                break
            self.items.append((m.group(1), m.start(1) + 1))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.items[self.i][0] if self.i < len(self.items) else None

    def column(self) -> int:
        return self.items[self.i][1] if self.i < len(self.items) else len(self.text) + 1

    def take(self) -> str:
        if self.i >= len(self.items):
            raise SelectorError("the selector ends too early", len(self.text) + 1)
        token = self.items[self.i][0]
        self.i += 1
        return token


def _key(tokens: _Tokens) -> str:
    column = tokens.column()
    key = tokens.take()
    if not re.fullmatch(_KEY, key):
        raise SelectorError(f"{key!r} is not a label key", column)
    return key


def _value(tokens: _Tokens) -> str:
    column = tokens.column()
    value = tokens.peek()
    if value is None or value in (",", ")", "("):
        return ""  # "k=" selects an empty value, as in Kubernetes
    tokens.take()
    if not re.fullmatch(_VALUE, value):
        raise SelectorError(f"{value!r} is not a label value", column)
    return value


def _set(tokens: _Tokens) -> tuple[str, ...]:
    if tokens.peek() != "(":
        raise SelectorError("expected '(' after in/notin", tokens.column())
    tokens.take()
    values = []
    while True:
        values.append(_value(tokens))
        column = tokens.column()
        token = tokens.take()
        if token == ")":
            return tuple(values)
        if token != ",":
            raise SelectorError("expected ',' or ')' in a value set", column)


def _requirement(tokens: _Tokens) -> Requirement:
    if tokens.peek() == "!":
        tokens.take()
        return Requirement(_key(tokens), "!exists")
    key = _key(tokens)
    op = tokens.peek()
    if op is None or op == ",":
        return Requirement(key, "exists")
    column = tokens.column()
    tokens.take()
    if op in ("=", "==", "!="):
        return Requirement(key, "!=" if op == "!=" else "=", (_value(tokens),))
    if op in ("in", "notin"):
        return Requirement(key, op, _set(tokens))
    if op in (">", "<"):
        number_column = tokens.column()
        number = tokens.take()
        if not re.fullmatch(r"-?[0-9]+", number):
            raise SelectorError(f"{op} needs an integer", number_column)
        return Requirement(key, op, (number,))
    raise SelectorError(f"unknown operator {op!r}", column)


def parse_selector(text: str) -> tuple[Requirement, ...]:
    """The requirements of a selector; SelectorError when it is not valid."""
    tokens = _Tokens(text)
    if tokens.peek() is None:
        return ()
    out = [_requirement(tokens)]
    while tokens.peek() is not None:
        column = tokens.column()
        if tokens.take() != ",":
            raise SelectorError("expected ',' between requirements", column)
        out.append(_requirement(tokens))
    return tuple(out)


class Rule(NamedTuple):
    """One entry of ``ignore.configs``, ``ignore.workloads`` or ``include.workloads``."""

    where: str  # e.g. "ignore.configs[0]": how explain and report name it
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    selector: tuple[Requirement, ...] = ()

    def matches(self, kind: str, namespace: str, name: str, labels: Mapping[str, str]) -> bool:
        return (
            (self.kind is None or fnmatchcase(kind, self.kind))
            and (self.name is None or fnmatchcase(name, self.name))
            and (self.namespace is None or fnmatchcase(namespace, self.namespace))
            and all(r.matches(labels) for r in self.selector)
        )


def first_match(
    rules: tuple[Rule, ...], kind: str, namespace: str, name: str, labels: Mapping[str, str]
) -> Rule | None:
    return next((r for r in rules if r.matches(kind, namespace, name, labels)), None)


def rules_from(data: Any, where: str) -> tuple[Rule, ...]:
    """Rules from validated config data (a list of mappings); SelectorError carries the
    index of the offending rule in ``.where``."""
    out = []
    for i, item in enumerate(data or ()):
        at = f"{where}[{i}]"
        try:
            selector = parse_selector(item.get("selector", ""))
        except SelectorError as exc:
            exc.where = f"{at}/selector"  # type: ignore[attr-defined]
            raise
        out.append(Rule(at, item.get("kind"), item.get("name"), item.get("namespace"), selector))
    return tuple(out)
