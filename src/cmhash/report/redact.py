"""report: a Secret's value never shows, nor a hash of it in a Secret's name, not even
where the manifests copy it into text the report does show (a ConfigMap value, a plain
env value, a command-line argument: a chart that writes the database password into a
Secret and into a DATABASE_URL).

Every value of every Secret of either side (and every content field of what a Secret
source produces), and each line of a multi-line one, of at least ``MIN_CHARS``
characters, is replaced by ``***`` in the template causes' values and the ConfigMap
value diffs. Shorter ones would blank common words (``true``, ``admin``) all over the
report: a value that short is no secret worth the name. A Secret name with a content
hash suffix (kustomize's secretGenerator) is shown without it everywhere, as cmhash's
own --versioned names are (analyze/versioned_names.py ``shown``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cmhash.app.result import RunResult

MIN_CHARS = 6
MASK = "***"


def _pieces(value: bytes) -> Iterable[str]:
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return ()
    return (p.strip() for p in (text, *text.splitlines()))


def secret_texts(*runs: RunResult) -> re.Pattern[str] | None:
    """One pattern for every Secret value of ``runs`` (longest first), or None."""
    found: set[str] = set()
    for run in runs:
        objects = run.config_index.objects if run.config_index else {}
        for entry in objects.values():
            content = entry.info.content
            if content.kind != "Secret" and content.source is None:
                continue
            for value in content.entries.values():
                found.update(p for p in _pieces(value) if len(p) >= MIN_CHARS)
    if not found:
        return None
    return re.compile("|".join(re.escape(t) for t in sorted(found, key=len, reverse=True)))


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


def redact(data: dict[str, Any], secrets: re.Pattern[str] | None) -> None:
    """Mask ``secrets`` in the report's shown values, in place."""
    if secrets is None:
        return
    for group in ("restart", "notRestarting"):
        for workload in data[group]:
            for cause in workload["causes"]:
                for side in ("old", "new"):
                    if isinstance(cause.get(side), str):
                        cause[side] = secrets.sub(MASK, cause[side])
    for config in data["configs"]:
        diffs = config.get("valueDiffs")
        if diffs:
            config["valueDiffs"] = {k: secrets.sub(MASK, v) for k, v in diffs.items()}
