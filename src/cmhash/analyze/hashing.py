"""The canonical content hash (encoding version 1). See docs/hash-encoding.md.

What a workload's value covers, for each ConfigMap/Secret it references:

* ``kind`` and ``name`` of the object (namespace is implied: pod-spec references never
  cross namespaces; a declared dependency in another namespace adds ``namespace``);
* the *used* content: every key for whole-object references (``envFrom``,
  volumes without ``items``), only the named keys otherwise; a named key the
  object lacks is recorded as ``null`` so that adding it later changes the value;
* the bytes the pod sees, in standard base64: ConfigMap ``data`` as UTF-8 and
  ``binaryData`` decoded; Secret ``data`` decoded with ``stringData`` laid over it;
* for Secrets, the ``type`` (empty means ``Opaque``);
* an object that is not in the input (optional, or missing) as ``"absent": true``;
* an object produced by a source in the input (a SealedSecret, an ExternalSecret...):
  the source's content fields as ``data`` (every one, whatever keys the reference
  names) and ``"source": "<group>/<kind>"``.

The entries are sorted by (kind, name) and serialised as compact, key-sorted
JSON inside ``{"v": 1, "refs": [...]}``; the value is the SHA-256 of that UTF-8
text in lower-case hex. Metadata, key order, quoting and base64 line wrapping
never reach the encoding. With a secret key (``--secret-key-env``) each Secret
value is replaced by its HMAC-SHA256 before it enters the encoding.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from binascii import b2a_base64
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from hashlib import sha256
    from json.encoder import encode_basestring
else:
    try:  # the built-in module: importing hashlib loads OpenSSL, 5 ms of start-up
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - other Python builds
        from hashlib import sha256
    # the C escaper (json.dumps' with ensure_ascii=False), as json.encoder takes it, without
    # importing the json package (its decoder and scanner: 1 ms of start-up)
    try:
        from _json import encode_basestring
    except ImportError:  # pragma: no cover - other Python builds
        from json.encoder import encode_basestring

ENCODING_VERSION = 1


class Content(NamedTuple):
    """The effective content of a ConfigMap or Secret."""

    kind: str
    name: str
    entries: Mapping[str, bytes]
    secret_type: str | None = None  # Secrets only
    # produced by a source object (analyze/sources.py): its group/kind; the entries are
    # the source's content fields, and every reference uses all of them
    source: str | None = None


class Use(NamedTuple):
    """One referenced object as one workload uses it."""

    kind: str
    name: str
    content: Content | None  # None: not in the input
    keys: frozenset[str] | None  # None: every key
    namespace: str | None = None  # another namespace than the workload's (declared)


def _b64(data: bytes) -> str:
    return b2a_base64(data, newline=False).decode("ascii")  # (base64.b64encode, in C)


def entry(use: Use, secret_key: bytes | None = None) -> dict[str, object]:
    out: dict[str, object] = {"kind": use.kind, "name": use.name}
    if use.namespace is not None:
        out["namespace"] = use.namespace
    c = use.content
    if c is None:
        out["absent"] = True
        return out
    whole = use.keys is None or c.source is not None  # a source is always used whole
    wanted = sorted(c.entries) if whole else sorted(use.keys or ())
    data: dict[str, str | None] = {}
    for key in wanted:
        value = c.entries.get(key)
        if value is not None and secret_key is not None and c.kind == "Secret":
            import hmac

            value = hmac.new(secret_key, value, sha256).digest()
        data[key] = None if value is None else _b64(value)
    out["data"] = data
    if c.secret_type is not None:
        out["type"] = c.secret_type
    if c.source is not None:
        out["source"] = c.source
    return out


def merge_uses(uses: Iterable[Use]) -> list[Use]:
    """One Use per object: the union of keys; any whole-object use wins. Sorted by
    (kind, name), an object of another namespace after the workload's own."""
    merged: dict[tuple[str, str, str], Use] = {}
    for u in uses:
        key = (u.kind, u.name, u.namespace or "")
        prev = merged.get(key)
        if prev is None:
            merged[key] = u
        elif prev.keys is not None:
            keys = None if u.keys is None else prev.keys | u.keys
            merged[key] = prev._replace(keys=keys)
    return [merged[k] for k in sorted(merged)]


def py_canonical(uses: Iterable[Use], secret_key: bytes | None = None) -> str:
    """The encoding by its definition: ``entry`` dicts through ``json.dumps`` (the
    reference for ``canonical``)."""
    import json

    refs = [entry(u, secret_key) for u in merge_uses(uses)]
    return json.dumps(
        {"v": ENCODING_VERSION, "refs": refs},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def _entry_json(use: Use, secret_key: bytes | None) -> str:
    """``entry(use)`` as ``json.dumps`` writes it: keys in sorted order (absent, data,
    kind, name, namespace, source, type), compact, not ASCII-escaped."""
    q = encode_basestring  # a JSON string, as json.dumps(ensure_ascii=False) writes it
    who = f'"kind":{q(use.kind)},"name":{q(use.name)}'
    if use.namespace is not None:
        who += f',"namespace":{q(use.namespace)}'
    c = use.content
    if c is None:
        return f'{{"absent":true,{who}}}'
    whole = use.keys is None or c.source is not None  # a source is always used whole
    data = []
    for key in sorted(c.entries) if whole else sorted(use.keys or ()):
        value = c.entries.get(key)
        if value is None:
            data.append(f"{q(key)}:null")
            continue
        if secret_key is not None and c.kind == "Secret":
            import hmac

            value = hmac.new(secret_key, value, sha256).digest()
        data.append(f'{q(key)}:"{_b64(value)}"')  # (base64 needs no escaping)
    tail = f',"source":{q(c.source)}' if c.source is not None else ""
    if c.secret_type is not None:
        tail += f',"type":{q(c.secret_type)}'
    return f'{{"data":{{{",".join(data)}}},{who}{tail}}}'


def canonical(uses: Iterable[Use], secret_key: bytes | None = None) -> str:
    """The encoded text (``py_canonical``'s, written directly: no dicts, no encoder)."""
    refs = ",".join(_entry_json(u, secret_key) for u in merge_uses(uses))
    return f'{{"refs":[{refs}],"v":{ENCODING_VERSION}}}'


def sha256_hex(data: bytes) -> str:
    return str(sha256(data).hexdigest())


def digest(uses: list[Use], secret_key: bytes | None = None) -> str:
    return str(sha256(canonical(uses, secret_key).encode("utf-8")).hexdigest())
