"""Which files of a directory walk (and of ``--check``/``--diff``/``-i``) are manifests:
a file none of whose documents has a top-level ``apiVersion`` or ``kind`` is skipped
(docs/concepts/repositories.md), everything else is read."""

from __future__ import annotations

import re

_MANIFEST_KEY = r'^(?:apiVersion|kind)[ \t]*:|"(?:apiVersion|kind)"\s*:'
# a line that may start a document in flow style: ``{`` or ``[`` first, after indentation,
# ``---`` and node properties (``!!map {``, ``&a {``, ``--- !!map {``)
_FLOW_DOCUMENT = r"^[ \t]*(?:---[ \t]+)?(?:[!&][^\s{\[]*[ \t]*)*[{\[]"


def is_manifest_text(text: str) -> bool:
    """Whether some document has a top-level ``apiVersion`` or ``kind``. A JSON text
    is decided by its top-level keys (a Grafana dashboard, a JSON schema, cmhash's own
    report.json hold ``"kind"`` deeper down); one that is not JSON after all (a JSON
    stream, broken JSON) by the patterns, so a broken manifest stays an error."""
    head = text.lstrip(" \t\r\n")
    if head[:1] in ("{", "["):
        import json  # (a JSON text in a directory walk)

        try:
            data = json.loads(head)
        except (ValueError, RecursionError):
            pass
        else:
            return isinstance(data, dict) and ("apiVersion" in data or "kind" in data)
    if re.search(_MANIFEST_KEY, text, re.MULTILINE) is not None:
        return True
    if re.search(_FLOW_DOCUMENT, text, re.MULTILINE) is None:
        return False
    return _flow_manifest(text)


def _flow_manifest(text: str) -> bool:
    """A text with a document in flow style (``{apiVersion: v1, kind: ConfigMap, ...}``
    after a comment or ``---``: kubectl and kustomize read it): decided by its documents'
    top-level keys; a text the YAML parser refuses, by the keys anywhere (so a broken
    manifest stays an error)."""
    import yaml  # (only for such a text in a directory walk or under --check)

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return any(
            isinstance(d, dict) and ("apiVersion" in d or "kind" in d)
            for d in yaml.load_all(text, Loader=loader)
        )
    except (yaml.YAMLError, ValueError, RecursionError):
        return re.search(r"\b(?:apiVersion|kind)[\"']?\s*:", text) is not None
