"""The suffix rule of versioned names.

The suffix: 10 characters of ``2456789bcdfghkmt`` (no vowels: no words) from the
SHA-256 of the object's canonical entry (hashing.py: kind, base name, every key's bytes,
a Secret's type; with ``--secret-key-env`` Secret values are HMACed first). Same data,
same name; a data change, a new name; metadata never matters. A name that already ends
in ``-`` and 10 such characters is taken as versioned: its base is the part before, so a
second run never stacks suffixes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cmhash.analyze.hashing import Content, Use, entry_json, sha256_hex
from cmhash.model import ResourceId

ALPHABET = "2456789bcdfghkmt"
SUFFIX_LEN = 10
MAX_NAME = 253
_VERSIONED = re.compile(rf"(.+)-([{ALPHABET}]{{{SUFFIX_LEN}}})")
_TRANSLATE = str.maketrans("0123456789abcdef", ALPHABET)
VERSIONABLE = frozenset(("ConfigMap", "Secret"))


def shown(kind: str, name: str) -> str:
    """A name as messages and reports show it: a versioned Secret's suffix is derived
    from its values, so it is left out (``db-…``)."""
    return f"{base_name(name)}-…" if kind == "Secret" and base_name(name) != name else name


def base_name(name: str) -> str:
    """The name without a version suffix (itself when it has none)."""
    m = _VERSIONED.fullmatch(name)
    return m.group(1) if m else name


def own_names(keys: Iterable[ResourceId]) -> set[ResourceId]:
    """Objects whose name only looks versioned: ``app-config-bbbbbbbbbb`` beside an
    ``app-config`` of the same kind and namespace is a name of its own, not a version of
    the other (two objects, each renamed after its own name)."""
    present = {(k.kind, k.namespace, k.name) for k in keys}
    return {
        ResourceId.config(kind, ns, name)
        for kind, ns, name in present
        if (base := base_name(name)) != name and (kind, ns, base) in present
    }


def suffix(content: Content, base: str, secret_key: bytes | None) -> str:
    """The version suffix of an object of ``content`` under ``base``."""
    return hashed(entry_json(Use(content.kind, base, content, None), secret_key))


def hashed(text: str) -> str:
    """``SUFFIX_LEN`` characters of ``ALPHABET`` from the SHA-256 of ``text``."""
    return sha256_hex(text.encode("utf-8"))[:SUFFIX_LEN].translate(_TRANSLATE)
