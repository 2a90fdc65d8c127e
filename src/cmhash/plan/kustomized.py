"""Names a kustomize ``configMapGenerator`` or ``secretGenerator`` already suffixed.

kustomize appends ``-`` and 10 characters of the SHA-256 of the object's content (the
same alphabet as cmhash's suffix) and rewrites the references it knows. Such an object
is already versioned: ``--versioned`` keeps its name (re-suffixing it would only churn
names and break the references kustomize rewrote outside pod specs).

The hash, as kustomize computes it (kubernetes-sigs/kustomize api/hasher/hasher.go:
``encodeConfigMap``/``encodeSecret`` marshal ``{"kind", "name", "data"[, "binaryData"]}``
and ``{"kind", "type", "name", "data"[, "stringData"]}`` with Go's ``json.Marshal``, then
``encode`` maps the first 10 hex digits ``0 1 3 a e`` to ``g h k m t``). Its ``name`` is
looked up with the path ``"metadata/name"`` as one field, which finds nothing, so it is
always ``""``: checked against kustomize 4.5.4's own output in tests/test_versioned_names.py.
"""

from __future__ import annotations

import base64

from cmhash.analyze.hashing import Content, sha256_hex

_ENCODE = str.maketrans("013ae", "ghkmt")
# Go's encoding/json escapes these in strings (encode.go: htmlSafeSet, and U+2028/9)
_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNICODE = frozenset("<>&\u2028\u2029")


def _go_string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif ch < " " or ch in _UNICODE:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _go_json(value: object) -> str:
    """``json.Marshal`` of strings and string-keyed maps (keys sorted, no spaces)."""
    if isinstance(value, str):
        return _go_string(value)
    assert isinstance(value, dict)
    inner = ",".join(f"{_go_string(k)}:{_go_json(v)}" for k, v in sorted(value.items()))
    return "{" + inner + "}"


def _hash(fields: dict[str, object]) -> str:
    return sha256_hex(_go_json(fields).encode("utf-8"))[:10].translate(_ENCODE)


def suffixes(content: Content) -> set[str]:
    """The suffix kustomize's generator would give this content (a set: the layout of
    the fields is not kept in ``Content``; each plausible one is tried)."""
    out: set[str] = set()
    if content.kind == "ConfigMap":
        text: dict[str, object] = {}
        binary: dict[str, object] = {}
        for key, value in content.entries.items():
            try:
                text[key] = value.decode("utf-8")  # the generator puts UTF-8 in data
            except UnicodeDecodeError:
                binary[key] = base64.b64encode(value).decode("ascii")
        for data in [text] if text else [text, ""]:  # "": no data field at all
            fields: dict[str, object] = {"kind": "ConfigMap", "name": "", "data": data}
            if binary:
                fields["binaryData"] = binary
            out.add(_hash(fields))
        return out
    data = {k: base64.b64encode(v).decode("ascii") for k, v in content.entries.items()}
    for d in [data] if data else [data, ""]:
        out.add(_hash({"kind": "Secret", "type": content.secret_type or "", "name": "", "data": d}))
    return out
