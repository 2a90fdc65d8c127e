"""KindTable.reads (which documents need a parser at all, read/split.py) decides each
(apiVersion, kind) once: the same answer as the rows themselves give, every time, and
per table (a table with a config file's kinds reads them; the built-in one does not)."""

from __future__ import annotations

from cmhash.knowledge.kinds import DEFAULT_TABLE, KindTable, WorkloadKind, is_list


def _reference(table: KindTable, api_version: str, kind: str) -> bool:
    """What read/split.py decided for every document before the answers were kept."""
    return (
        is_list(api_version, kind)
        or (api_version == "v1" and kind in ("ConfigMap", "Secret"))
        or table.lookup(api_version, kind) is not None
        or table.source(api_version, kind) is not None
    )


def _pairs(table: KindTable) -> list[tuple[str, str]]:
    kinds = sorted({k for (_, k) in table._groups} | {s.kind for s in table.sources})
    groups = sorted({g for (g, _) in table._groups} | {s.group for s in table.sources})
    apis = ["v1", "v2", "", *(f"{g}/{v}" for g in groups if g for v in ("v1", "v1beta1", "v9"))]
    extra = ["ConfigMap", "Secret", "Service", "List", "ConfigMapList", "ResourceList"]
    return [(api, kind) for api in apis for kind in [*kinds, *extra]]


def test_reads_as_the_rows_say() -> None:
    pairs = _pairs(DEFAULT_TABLE)
    assert any(DEFAULT_TABLE.reads(a, k) for a, k in pairs)
    assert not all(DEFAULT_TABLE.reads(a, k) for a, k in pairs)
    for _ in range(2):  # decided, then remembered: the same answers
        for api, kind in pairs:
            assert DEFAULT_TABLE.reads(api, kind) is _reference(DEFAULT_TABLE, api, kind)


def test_each_table_decides_for_itself() -> None:
    assert not DEFAULT_TABLE.reads("example.com/v1", "Widget")
    table = DEFAULT_TABLE.with_extra((WorkloadKind("example.com", "Widget", ("spec", "template")),))
    assert table.reads("example.com/v1", "Widget")
    assert not DEFAULT_TABLE.reads("example.com/v1", "Widget")
    for api, kind in _pairs(table):
        assert table.reads(api, kind) is _reference(table, api, kind)
