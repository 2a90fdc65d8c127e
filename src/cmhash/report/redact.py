"""report: a Secret's value never shows, nor a hash of it in a Secret's name, not even
where the manifests copy it into text the report does show (a ConfigMap value, a plain
env value, a command-line argument: a chart that writes the database password into a
Secret and into a DATABASE_URL).

Every value of every Secret of either side (and every content field of what a Secret
source produces), in every form a reader could decode back to it (``forms``: its plain
text, each line of a multi-line one, each of those as the report escapes it before it is
masked (JSON, a quoted name, control characters made visible), its standard and URL-safe
base64 with and without padding, and the lines of those wrapped at 76 or 64 columns, as
a Secret's ``data:`` holds a value a chart copied elsewhere), of at least ``MIN_CHARS``
characters, is replaced by ``***`` everywhere the report shows text from the input
(``redact``): values, how and why, restart reasons, ConfigMap keys, the names of objects
and namespaces, findings, file names. A name keeps its other characters (``app-***``);
cmhash's own words (kinds, codes, outcomes) are left as they are: masking them would
only tell which word a value is. Shorter values would blank common words (``true``,
``admin``) all over the report: a value that short is no secret worth the name. A Secret
name with a content hash suffix (kustomize's secretGenerator) is shown without it
everywhere, as cmhash's own --versioned names are (analyze/versioned_names.py ``shown``).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from cmhash.report.changes import MAX_LINE

if TYPE_CHECKING:
    from cmhash.app.result import RunResult

MIN_CHARS = 6
MASK = "***"
WRAPS = (76, 64)  # base64 as MIME (RFC 2045) and PEM (RFC 7468) wrap it


def _pieces(value: bytes) -> Iterable[str]:
    """The plain text of a value and of each of its lines."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return ()
    return (p.strip() for p in (text, *text.splitlines()))


def _escaped(text: str) -> Iterable[str]:
    """``text`` as the report may have escaped it before masking sees it: in JSON (a
    list or object value shown as compact JSON, ASCII-only or not: ``p\\u00e4ss``,
    ``sec\\"ret``), as a Python literal (a name quoted in a message), with control
    characters made visible, and with its line breaks as ``\\n``."""
    from cmhash.visible import visible

    yield json.dumps(text)[1:-1]
    yield json.dumps(text, ensure_ascii=False)[1:-1]
    yield repr(text)[1:-1]
    yield visible(text)
    yield text.replace("\r", "\\r").replace("\n", "\\n")


def _encoded(value: bytes) -> Iterable[str]:
    """Every base64 form a reader could decode back to ``value``: standard and URL-safe,
    with and without padding, whole and as the lines of a wrapped one."""
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(value).decode("ascii")
        yield text
        yield text.rstrip("=")
        for width in WRAPS:
            if len(text) > width:
                yield from (text[i : i + width] for i in range(0, len(text), width))


def forms(value: bytes) -> set[str]:
    """What ``value`` may show as: its plain text, each line of it, each of those
    escaped (``_escaped``), and its base64 forms (``MIN_CHARS`` or longer; a value under
    that is no secret worth the name)."""
    out = {p for p in _pieces(value) if len(p) >= MIN_CHARS}
    out.update(e for p in list(out) for e in _escaped(p))
    if len(value) >= MIN_CHARS or out:
        out.update(e for e in _encoded(value) if len(e) >= MIN_CHARS)
    return out


class Masker:
    """Replaces every known form with ``***``, longest first at the leftmost place (as
    one alternation of them would), found through an index of their first
    ``MIN_CHARS`` characters: linear in the text, however many values there are."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._by_head: dict[str, list[str]] = {}
        for t in sorted(set(texts), key=len, reverse=True):
            self._by_head.setdefault(t[:MIN_CHARS], []).append(t)

    def __bool__(self) -> bool:
        return bool(self._by_head)

    def sub(self, text: str) -> str:
        out: list[str] = []
        i = done = 0
        while i <= len(text) - MIN_CHARS:
            found = next(
                (
                    t
                    for t in self._by_head.get(text[i : i + MIN_CHARS], ())
                    if text.startswith(t, i)
                ),
                None,
            )
            if found is None:
                i += 1
                continue
            out.append(text[done:i])
            out.append(MASK)
            i = done = i + len(found)
        out.append(text[done:])
        return "".join(out)


def secret_texts(*runs: RunResult) -> Masker | None:
    """Every form (``forms``) of every Secret value of ``runs`` (and of every content
    field of what a Secret source produces), or None when there is none."""
    found: set[str] = set()
    for run in runs:
        objects = run.config_index.objects if run.config_index else {}
        for entry in objects.values():
            content = entry.info.content
            if content.kind != "Secret" and content.source is None:
                continue
            for value in content.entries.values():
                found.update(forms(value))
    return Masker(found) if found else None


def secret_names(*runs: RunResult) -> dict[str, str]:
    """Secret names with a content-hash suffix (kustomize's secretGenerator, cmhash's
    --versioned: ``creds-5f46k2f562``) -> as the report shows them (``creds-…``): the
    suffix is a hash of the Secret's values."""
    from cmhash.analyze.versioned_names import shown

    names: set[str] = set()
    for run in runs:
        objects = run.config_index.objects if run.config_index else {}
        names.update(k.name for k in objects if k.kind == "Secret")
        for plan in run.plans:
            names.update(
                plan.target(r.ref).name
                for r in plan.resolved
                if plan.target(r.ref).kind == "Secret"
            )
    return {n: shown("Secret", n) for n in names if shown("Secret", n) != n}


_NAME = "a-z0-9.-"  # what a Kubernetes name is made of


def _mask_names(value: Any, pattern: re.Pattern[str], names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(lambda m: names[m.group()], value)
    if isinstance(value, dict):
        return {
            _mask_names(k, pattern, names): _mask_names(v, pattern, names) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_mask_names(v, pattern, names) for v in value]
    return value


def mask_names(data: dict[str, Any], names: dict[str, str]) -> None:
    """Every Secret name of ``names`` in the report's text shown as its mapped form
    (in place): causes, objects, template values, findings."""
    if not names:
        return
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    pattern = re.compile(f"(?<![{_NAME}])(?:{alternatives})(?![{_NAME}])")
    for key, value in list(data.items()):
        data[key] = _mask_names(value, pattern, names)


MAX_VALUE = 120  # characters of a value shown in a cause


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bound(data: dict[str, Any]) -> None:
    """The causes' values cut to ``MAX_VALUE`` characters and each line of a value diff
    to ``MAX_LINE`` (after its -/+ mark), in place: once masked, so that a cut never
    leaves the first characters of a Secret's value (``redact``) or of a name's hash
    suffix (``mask_names``) it went through."""
    for group in ("restart", "notRestarting"):
        for workload in data[group]:
            for cause in workload["causes"]:
                for side in ("old", "new"):
                    if isinstance(cause.get(side), str):
                        cause[side] = _cut(cause[side], MAX_VALUE)
    for config in data["configs"]:
        diffs = config.get("valueDiffs")
        if diffs:
            config["valueDiffs"] = {
                k: "\n".join(_cut(ln, MAX_LINE + 1) for ln in v.split("\n"))
                for k, v in diffs.items()
            }


# fields whose value is cmhash's own word, never text from the input: masking one would
# only tell which word a Secret's value is
_OWN = frozenset(
    {"version", "kind", "apiVersion", "type", "outcome", "rule", "level", "code"}
    | {"fingerprint", "immutableViolation", "annotationKey"}
)
_OWN_CHANGES = frozenset(
    {"added", "removed", "changed", "newly referenced", "no longer referenced"}
    | {"references changed"}
)
# objects keyed by text from the input: namespaces, a ConfigMap's keys
_KEYED = frozenset({"restartByNamespace", "valueDiffs"})


def _masked(value: Any, secrets: Masker, field: str | None = None) -> Any:
    if isinstance(value, str):
        own = field in _OWN or (field == "change" and value in _OWN_CHANGES)
        return value if own else secrets.sub(value)
    if isinstance(value, list | tuple):
        return type(value)(_masked(v, secrets, field) for v in value)
    if not isinstance(value, dict):
        return value
    if field not in _KEYED:
        return {k: _masked(v, secrets, k) for k, v in value.items()}
    out: dict[str, Any] = {}
    for k, v in value.items():
        name, v = secrets.sub(k), _masked(v, secrets)
        if name in out and isinstance(v, int) and isinstance(out[name], int):
            out[name] += v  # two namespaces masked alike: one count, never fewer
            continue
        n = 1
        while name in out:  # two ConfigMap keys masked alike: both shown
            n += 1
            name = f"{secrets.sub(k)} ({n})"
        out[name] = v
    return out


def redact(data: dict[str, Any], secrets: Masker | None) -> None:
    """Mask ``secrets`` everywhere in the report, in place: in every text it shows that
    comes from the input (values, how and why, restart reasons, names of objects,
    ConfigMap keys and namespaces, findings' messages, file names), and in the keys of
    the objects keyed by such text; not in the fields that hold cmhash's own words
    (``_OWN``: kinds, codes, outcomes)."""
    if secrets is None:
        return
    for key, value in list(data.items()):
        data[key] = _masked(value, secrets, key)
