"""The canonical content hash (encoding version 1), as docs/hash-encoding.md pins it and
tests/test_hashing.py holds it (known answers: a change rolls every user's pods).

Per referenced object an entry: its kind and name (and namespace, for a declared
dependency in another one), the bytes the pod sees of the keys it uses (every key for a
whole-object reference, a source's every content field; a missing key as ``null``) in
standard base64, a Secret's type; ``"absent": true`` for an object not in the input. The
entries sorted by (kind, name), as compact key-sorted JSON in ``{"v": 1, "refs": [...]}``;
the value is its SHA-256 in lower-case hex. With a secret key (``--secret-key-env``) each
Secret value is its HMAC-SHA256 first. What Git cannot show enters beside ``refs``, only
when there is some (plan/lock.py): ``lock``, the fingerprints a lock file gives the
objects the workload uses, and ``restart``, the restarts asked for; without them the
text is what it always was.
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


def canonical_json(value: object) -> str:
    """Compact, key-sorted JSON, not ASCII-escaped: the text every digest here hashes."""
    import json  # (source objects, versioned names, renamed Jobs: a plain run has none)

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def entry_json(use: Use, secret_key: bytes | None = None) -> str:
    """One object's entry, as ``json.dumps`` writes it: keys in sorted order (absent,
    data, kind, name, namespace, source, type), compact, not ASCII-escaped."""
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


Extra = Mapping[str, object]  # fields beside "refs": "lock", "restart" (sorted before "v")


def canonical(
    uses: Iterable[Use], secret_key: bytes | None = None, extra: Extra | None = None
) -> str:
    """The encoded text: ``{"v": 1, "refs": [entry, ...]}`` as ``canonical_json`` writes it
    (tests/test_hashing.py holds the two equal), written directly: no dicts, no encoder;
    ``extra``'s fields (JSON values) beside ``refs``, in key order, when given."""
    refs = ",".join(entry_json(u, secret_key) for u in merge_uses(uses))
    if not extra:
        return f'{{"refs":[{refs}],"v":{ENCODING_VERSION}}}'
    assert all(k < "v" and k != "refs" for k in extra)
    q = encode_basestring
    fields = [f"{q(k)}:{canonical_json(v)}" for k, v in extra.items()]
    fields.append(f'"refs":[{refs}]')
    fields.sort()  # (each field starts with its key: "lock" < "refs" < "restart")
    return "{" + ",".join(fields) + f',"v":{ENCODING_VERSION}}}'


def sha256_hex(data: bytes) -> str:
    return str(sha256(data).hexdigest())


def digest(uses: list[Use], secret_key: bytes | None = None, extra: Extra | None = None) -> str:
    return str(sha256(canonical(uses, secret_key, extra).encode("utf-8")).hexdigest())
