"""Reloader's reload-list patterns as Reloader reads them: Go regexp (RE2) of
``"^" + item + "$"`` (stakater/Reloader pkg/common/common.go ShouldReload), in linear
time, refusals at the annotation's position."""

from __future__ import annotations

import random
import time

import pytest
from conftest import run_cmhash
from test_declared import CM, DEP, ENV_FROM, ann, checksums, stream

from cmhash.analyze import patterns


@pytest.mark.parametrize(
    ("item", "selected", "not_selected"),
    [
        # the anchors bind to the outer alternatives only, as "^" + item + "$" does in Go
        ("web|db", ["web-frontend", "mongodb", "web", "db"], ["x-web-y", "dbx"]),
        ("app-config", ["app-config"], ["app-config-2", "my-app-config"]),
        ("app-.*", ["app-a", "app-"], ["xapp-a"]),
        # RE2 syntax Python's re refuses or misreads
        ("[[:alpha:]]+-cm", ["abc-cm"], ["a1-cm"]),
        ("app\\z", ["app"], ["app-1"]),
        ("\\Qa.b\\E", ["a.b"], ["axb"]),
        ("\\pL+", ["config", "конфиг"], ["cm-1"]),
        ("app-(?i)CONFIG", ["app-config", "app-CoNfIg"], ["APP-config"]),
        ("[^-]+", ["abc"], ["a-b"]),
        ("a{2,3}", ["aa", "aaa"], ["a", "aaaa"]),
    ],
)
def test_go_regexp_semantics(item: str, selected: list[str], not_selected: list[str]) -> None:
    for name in selected:
        assert patterns.matches(item, name), (item, name)
    for name in not_selected:
        assert not patterns.matches(item, name), (item, name)
    got = patterns.match_all([item], [*selected, *not_selected])
    assert got == {item: selected}


@pytest.mark.parametrize(
    "item",
    [
        "(?=a)b",  # lookahead
        "(?!a)b",
        "(?<=a)b",  # lookbehind
        "(a)\\1",  # backreference
        "(?P<n>a)(?P=n)",
        "a{1001}",  # Go's and RE2's repeat limit is 1000
        "a{2000000000}",  # (Python's re: exit 3, an OverflowError)
        "app-(",
        "[z-a]",
        "a**",
        "\\C",  # RE2 accepts it, Go's regexp/syntax does not
        "x*+",
    ],
)
def test_what_go_refuses_is_refused(item: str) -> None:
    with pytest.raises(patterns.PatternError):
        patterns.check(item)


def test_refused_pattern_is_exit_2_at_the_annotation() -> None:
    for item in ("(?=a)b", "(a)\\1", "a{1001}", "a{99999999999}"):
        data = stream(
            DEP.format(name="d", meta=ann(**{"secret.reloader.stakater.com/reload": item}), spec="")
        )
        res = run_cmhash(["--no-config", "-"], stdin=data)
        assert res.code == 2 and res.stdout == b"", (item, res.stderr)
        assert res.stderr.startswith("cmhash: <stdin>:6:42: secret.reloader.stakater.com/reload: ")
        assert "Go regexp" in res.stderr and "Traceback" not in res.stderr
        assert res.stderr.count("\n") == 1  # one line, nothing RE2 logs of its own


def test_re2_syntax_in_a_chart_no_warning_reaches_the_user() -> None:
    """Python's re warned 'Possible nested set' (a FutureWarning with a source path) on
    POSIX classes; RE2 reads them."""
    data = stream(
        CM.format(name="abc-cm", meta="", value="v1"),
        DEP.format(
            name="d",
            meta=ann(**{"configmap.reloader.stakater.com/reload": "[[:alpha:]]+-cm"}),
            spec="",
        ),
    )
    res = run_cmhash(["--no-config", "-"], stdin=data)
    assert res.code == 0 and res.stderr == "", res.stderr
    assert "checksum/config" in res.out


def test_alternation_as_reloader_reads_it_in_a_run() -> None:
    objs = [CM.format(name=n, meta="", value="v1") for n in ("web-a", "mongodb", "x-web-y")]
    dep = DEP.format(
        name="d", meta=ann(**{"configmap.reloader.stakater.com/reload": "web|db"}), spec=""
    )
    base = checksums(stream(*objs, dep))["d"]
    changed = [o.replace("k: v1", "k: v2") if "x-web-y" in o else o for o in objs]
    assert checksums(stream(*changed, dep))["d"] == base  # x-web-y is not selected
    changed = [o.replace("k: v1", "k: v2") if "mongodb" in o else o for o in objs]
    assert checksums(stream(*changed, dep))["d"] != base  # "db$" selects mongodb


@pytest.mark.parametrize(
    "item", ["(a+)+", "([a-z0-9]+-?)*config", "(x+x+)+y", "(.*a){20}", "(a|aa)*b"]
)
def test_hostile_patterns_take_linear_time(item: str) -> None:
    """Each would backtrack for minutes in Python's re on these names."""
    names = ["a" * 60 + "!", "app-" * 40 + "x", "x" * 80, "a" * 200]
    start = time.process_time()
    for name in names:
        patterns.matches(item, name)
    patterns.match_all([item], names)
    assert time.process_time() - start < 0.5


def test_hostile_pattern_in_a_run_finishes() -> None:
    objs = [CM.format(name="a" * 60 + "b", meta="", value="v1")]
    dep = DEP.format(
        name="d",
        meta=ann(**{"configmap.reloader.stakater.com/reload": "(a+)+,([a-z0-9]+-?)*config"}),
        spec=ENV_FROM.format(target="a" * 60 + "b"),
    )
    res = run_cmhash(["--no-config", "-"], stdin=stream(*objs, dep))
    assert res.code == 0, res.stderr


def test_set_and_one_by_one_agree() -> None:
    rng = random.Random(26)
    items = ["(a+)+", "app-.*", "web|db", "[[:digit:]]+", ".*-config-[0-9]", "x{2,}", "(?i)APP.*"]
    names = [
        "".join(rng.choice("apx-0129bdwe") for _ in range(rng.randrange(1, 14)))
        for _ in range(2000)
    ]
    got = patterns.match_all(items, names)
    for item in items:
        assert got[item] == [n for n in names if patterns.matches(item, n)]


def test_a_set_that_cannot_decide_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """RE2's Set reports no match at all when its DFA runs out of memory; the sentinel
    makes that visible and each item is tried alone."""

    class Failing:
        def Match(self, name: str) -> None:
            return None

    monkeypatch.setattr(patterns, "_set", lambda items: patterns._Batch(items, Failing()))
    assert patterns.match_all(["app-.*", "db"], ["app-1", "db", "x"]) == {
        "app-.*": ["app-1"],
        "db": ["db"],
    }


def test_versioning_reads_the_pattern_as_reloader_does() -> None:
    """``cfg|other`` is ``^cfg|other$`` to Reloader: it still selects the versioned
    ``cfg-<hash>``, so --versioned has nothing to refuse (Python's fullmatch refused it).
    (The pod spec mounts it too: an object only declared is read by name and keeps it.)"""
    data = stream(
        CM.format(name="cfg", meta="", value="v1"),
        DEP.format(
            name="d",
            meta=ann(**{"configmap.reloader.stakater.com/reload": "cfg|other"}),
            spec=ENV_FROM.format(target="cfg"),
        ),
    )
    res = run_cmhash(["--no-config", "--versioned", "-"], stdin=data)
    assert res.code == 0, res.stderr
    assert "name: cfg-" in res.out
