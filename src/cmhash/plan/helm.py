"""The release namespace of Helm output.

Objects without ``metadata.namespace`` land in the release namespace, but Helm does not
tell a post-renderer which one it is (Helm 4 gives a ``postrenderer/v1`` plugin only
``HELM_PLUGIN_NAME``, ``HELM_PLUGINS`` and ``HELM_PLUGIN_DIR``; Helm 3 passes nothing).
So, for input that is Helm output (``# Source:`` comments, or Helm 4's
``postrenderer.helm.sh/postrender-filename`` annotations), when some ConfigMap, Secret or
workload names no namespace and ``-n`` / ``namespace:`` is not given:

1. ``HELM_NAMESPACE``, when the user exported it (``helm -n`` itself does not set it);
2. else the one namespace that every object naming a namespace names (a chart that
   writes ``namespace: {{ .Release.Namespace }}`` on some objects and nothing on others);
3. else (no object names one, or several are named) nothing: references between objects
   with and without a namespace stay unmatched, with the usual warning. Never a guess.

What was inferred, and from what, is said in one note line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from cmhash.read.source import SourceText

_HELM_MARKS = re.compile(r"^# Source: |postrenderer\.helm\.sh/postrender-filename", re.MULTILINE)
_METADATA = re.compile(r"^metadata:[ \t]*(?:#.*)?\r?\n", re.MULTILINE)
_KEY_LINE = re.compile(r"([ \t]+)([A-Za-z0-9_.-]+):[ \t]*(.*?)[ \t]*(?:#.*)?\r?$")
ENV = "HELM_NAMESPACE"


def is_helm_output(texts: Iterable[str]) -> bool:
    return any(_HELM_MARKS.search(t) is not None for t in texts)


def is_helm_source(src: SourceText) -> bool:
    """``is_helm_output`` of one source, computed once."""
    if src.helm_output is None:
        src.helm_output = is_helm_output([src.text])
    return src.helm_output


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def named_namespaces(text: str) -> set[str]:
    """``metadata.namespace`` of every block-style top-level object in ``text`` (Helm
    writes block style), found without parsing: the documents cmhash passes through
    unread (Services, RBAC...) count too."""
    found: set[str] = set()
    for m in _METADATA.finditer(text):
        indent = None
        for line in text[m.end() :].splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key = _KEY_LINE.fullmatch(line)
            if key is None:
                if not line[:1].isspace():
                    break  # the next top-level key: metadata ended
                continue
            if indent is None:
                indent = key.group(1)
            if key.group(1) == indent and key.group(2) == "namespace":
                value = _unquote(key.group(3))
                if value:
                    found.add(value)
                break
            if len(key.group(1)) < len(indent):
                break
    return found


class Inferred(NamedTuple):
    namespace: str
    note: str


def infer(
    texts: list[str], env: Mapping[str, str] | None = None, parsed: Iterable[str] = ()
) -> Inferred | None:
    """The release namespace for Helm output (rules in the module docstring), or None.
    ``parsed``: namespaces of the objects cmhash parsed (List items among them), on top
    of those the text names at the top level of each document."""
    if not is_helm_output(texts):
        return None
    exported = (os.environ if env is None else env).get(ENV)
    if exported:
        return Inferred(
            exported,
            f"Helm output: objects without a namespace are in "
            f"{exported!r} (from {ENV}; -n overrides)",
        )
    named: set[str] = set(parsed)
    for t in texts:
        named |= named_namespaces(t)
    if len(named) != 1:
        return None
    (ns,) = named
    return Inferred(
        ns,
        f"Helm output: objects without a namespace are taken to be in "
        f"{ns!r}, the only namespace the other objects name (the release "
        "namespace; -n overrides)",
    )
