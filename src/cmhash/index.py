"""The ConfigMap/Secret index: (kind, namespace, name) -> effective content."""

from __future__ import annotations

from dataclasses import dataclass

from cmhash.errors import NodeError
from cmhash.findings import CODES, Finding
from cmhash.hashing import Content
from cmhash.resources import Resource, config_content, is_immutable
from cmhash.settings import Settings

ObjectKey = tuple[str, str, str]  # (kind, namespace or "", name)


@dataclass
class ConfigEntry:
    resource: Resource
    content: Content
    immutable: bool
    skipped: bool  # cmhash.io/skip: left out of every checksum


class ConfigIndex:
    def __init__(self) -> None:
        self.objects: dict[ObjectKey, ConfigEntry] = {}
        self.namespaces: dict[tuple[str, str], set[str]] = {}  # (kind, name) -> namespaces

    def get(self, key: ObjectKey) -> ConfigEntry | None:
        return self.objects.get(key)

    def other_namespaces(self, kind: str, name: str, ns: str) -> set[str]:
        return self.namespaces.get((kind, name), set()) - {ns}


def effective_namespace(res: Resource, settings: Settings) -> str:
    return res.namespace or settings.namespace or ""


def finding_at(res: Resource, offset: int, code: str, message: str, *,
               level: str | None = None, workload: str | None = None) -> Finding:
    line, col = res.source.position(offset)
    return Finding(res.source.display, line, col, level or CODES[code][0], code, message,
                   workload)


def build_index(resources: list[Resource], settings: Settings,
                findings: list[Finding]) -> ConfigIndex:
    index = ConfigIndex()
    for res in resources:
        if res.group != "" or res.kind not in ("ConfigMap", "Secret"):
            continue
        try:
            content = config_content(res)
            entry = ConfigEntry(res, content, is_immutable(res), res.skipped)
        except NodeError as exc:
            raise res.source.error(exc.message, exc.offset) from None
        ns = effective_namespace(res, settings)
        key = (res.kind, ns, content.name)
        prev = index.objects.get(key)
        if prev is not None:
            pline = prev.resource.source.position(prev.resource.node.start)[0]
            findings.append(finding_at(
                res, res.node.start, "duplicate-object",
                f"{res.kind} {content.name!r} is also defined at "
                f"{prev.resource.source.display}:{pline}; this later definition is used"))
        index.objects[key] = entry
        index.namespaces.setdefault((res.kind, content.name), set()).add(ns)
    return index
