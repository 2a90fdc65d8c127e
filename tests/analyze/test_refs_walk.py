"""The reference sites (knowledge/podspec.py) are found in one walk over a trie of their
paths (analyze/refs.py); it must find exactly what walking each site's path alone finds, in
the same order, on every pod spec of the corpus and of generated streams."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import CORPUS
from hypothesis import HealthCheck, given, settings
from manifests import Stream, Style, render, streams, styles

from cmhash.analyze import refs
from cmhash.errors import NodeError
from cmhash.knowledge import podspec
from cmhash.knowledge.kinds import DEFAULT_TABLE
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import document_resources, pod_template
from cmhash.parse.tree import Node, get, items, scalar
from cmhash.read.source import SourceText
from cmhash.read.split import split_chunks


def _pod_specs(text: str) -> list[Node]:
    src = SourceText("x", text)
    out = []
    for index, chunk in enumerate(split_chunks(text)):
        try:
            roots = parse_chunk(text[chunk.start : chunk.end], chunk.start, backend("fast"))
            resources = list(document_resources(src, index, roots))
        except NodeError:
            continue
        for res in resources:
            wk = DEFAULT_TABLE.lookup(res.api_version, res.kind)
            if wk is not None:
                spec = get(pod_template(res, wk)[0], "spec")
                if spec is not None:
                    out.append(spec)
    return out


def _same(spec: Node) -> None:
    def ids(found: list[tuple[Node, str]]) -> list[tuple[int, str]]:
        return [(id(n), f) for n, f in found]

    got = refs._matches(spec, refs._POD_TRIE, "spec", len(podspec.POD_SITES))
    assert [ids(g) for g in got] == [
        ids(refs.walk(spec, s.path, "spec")) for s in podspec.POD_SITES
    ]
    for volume in items(get(spec, "volumes")):  # subPath mounts: what backs each volume
        want_targets = [
            (site.target, name)
            for site in podspec.POD_SITES
            if site.how in podspec.FILE_SITES
            for node, _ in refs.walk(volume, site.path[2:], "")
            if (name := scalar(get(node, site.name_field)))
        ]
        assert refs._volume_targets(volume) == tuple(want_targets)
    for container in items(get(spec, "containers")) + items(get(spec, "initContainers")):
        got = refs._matches(container, refs._CONTAINER_TRIE, "c", len(podspec.CONTAINER_SITES))
        want = [refs.walk(container, s.path, "c") for s in podspec.CONTAINER_SITES]
        assert [ids(g) for g in got] == [ids(w) for w in want]


def test_corpus_pod_specs() -> None:
    specs = [s for f in sorted(CORPUS.rglob("*.yaml")) for s in _pod_specs(f.read_text())]
    assert len(specs) > 50
    found = 0
    for spec in specs:
        _same(spec)
        found += len(refs.find_references(spec, "spec"))
    assert found > 50  # the corpus really has references to find


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
@given(streams(), styles)
def test_generated_pod_specs(stream: Stream, style: Style) -> None:
    for spec in _pod_specs(render(stream, style).decode("utf-8")):
        _same(spec)


def _per_site(spec: Node) -> list[refs.Reference]:
    """What find_references gave before the trie: one walk per site."""
    out = []
    for i, container in enumerate(items(get(spec, "containers"))):
        for site in podspec.CONTAINER_SITES:
            found = refs.walk(container, site.path, f"spec.containers[{i}]")
            out += refs._py_site_refs(site, found, scalar(get(container, "name")))
    for site in podspec.POD_SITES:
        out += refs._py_site_refs(site, refs.walk(spec, site.path, "spec"), None)
    return out


def _outcome(f: Callable[[], object]) -> object:
    try:
        return f()
    except NodeError as exc:
        return (exc.message, exc.offset)


@pytest.mark.parametrize(
    "spec",
    [
        # two malformed mappings: the same one is reported as by the per-site walk
        "containers:\n- name: c\n  env:\n  - name: A\n    valueFrom:\n      secretKeyRef: {name: s}\n"
        "      secretKeyRef: {name: t}\n  - name: B\n    name: C\n",
        "containers:\n- name: c\n  envFrom:\n  - configMapRef: {name: a, name: b}\n  env:\n"
        "  - name: A\n    name: B\n",
        "containers:\n- name: c\n  env:\n  - valueFrom: {configMapKeyRef: {name: [x]}}\n"
        "  envFrom:\n  - {secretRef: {name: s}, secretRef: {name: t}}\n",
        "volumes:\n- name: v\n  '*': {configMap: {name: x}}\n  configMap: {name: z}\n",
        "volumes:\n- {name: v, secret: {secretName: s}, secret: {secretName: t}}\n"
        "containers:\n- {name: c, env: [{name: a, name: b}]}\n",
    ],
)
def test_errors_and_odd_keys_as_before(spec: str) -> None:
    text = "spec:\n" + "".join("  " + line + "\n" for line in spec.splitlines())
    root = parse_chunk(text, 0, backend("fast"))[0]
    node = get(root, "spec")
    assert node is not None
    assert _outcome(lambda: refs.find_references(node, "spec")) == _outcome(lambda: _per_site(node))


# ---------------------------------------- the site walk and the References, in find_refs
# (native/_ctree.c's collect and site_ref: find_refs' own steps; anything either hands
# back makes the whole pod spec refs.py's)


@pytest.mark.parametrize(
    ("spec", "c_makes"),
    [
        ("volumes:\n- {name: v, configMap: {name: x}}\n", True),
        ("volumes:\n- &v {name: v, configMap: {name: x}}\n- *v\n", False),  # an alias
        ("volumes:\n- name: v\n  <<: {configMap: {name: x}}\n", False),  # a merge
        ("volumes:\n- {name: v, configMap: {name: x}, configMap: {name: y}}\n", False),
        ("volumes:\n- name: v\n  '*': {configMap: {name: x}}\n  configMap: {name: z}\n", True),
        ("volumes: {'*': {configMap: {name: x}}}\n", True),  # '*' fans out over lists only
        ("volumes: [[{configMap: {name: x}}]]\n", True),
        ("volumes: x\n", True),
        (
            "volumes:\n- projected:\n    sources:\n    - secret: {name: a}\n    - secret: {name: b}\n",
            True,
        ),
        ("volumes:\n- {name: v, configMap: {name: x, optional: yes}}\n", True),
        ("volumes:\n- {name: v, configMap: {name: x, optional: Off}}\n", True),
        ("volumes:\n- {name: v, configMap: {name: x, optional: ~}}\n", True),
        ("volumes:\n- {name: v, configMap: {name: x, optional: 'true'}}\n", False),  # refused
        ("volumes:\n- {name: v, configMap: {name: x, optional: maybe}}\n", False),  # refused
        ("volumes:\n- {name: v, configMap: {name: x, optional: [1]}}\n", False),  # refused
        ("volumes:\n- {name: v, configMap: {name: x, optional: !!bool true}}\n", False),
        ("volumes:\n- {name: v, configMap: {name: ~}}\n", True),  # names nothing
        ("volumes:\n- {name: v, configMap: {name: ''}}\n", True),
        ("volumes:\n- {name: v, configMap: {}}\n", True),
        ("volumes:\n- {name: v, configMap: x}\n", True),
        ("volumes:\n- {name: v, configMap: {name: [x]}}\n", False),  # refused
        ("volumes:\n- {name: v, configMap: {name: !!str x}}\n", False),  # a tag
        ("volumes:\n- {name: v, configMap: {name: &n x}}\n", False),  # an anchor: a problem
        (
            "volumes:\n- {name: v, configMap: {name: &n x}}\n- {name: w, configMap: {name: *n}}\n",
            False,
        ),
        ("volumes:\n- name: v\n  configMap:\n    name: |\n      x\n", False),  # a block name
        (
            "volumes:\n- {name: v, configMap: {name: 'x', items: [{key: b}, {key: a}, {key: b}]}}\n",
            True,
        ),
        ("volumes:\n- {name: v, configMap: {name: x, items: []}}\n", True),
        ("volumes:\n- {name: v, configMap: {name: x, items: ~}}\n", True),
        ("volumes:\n- {name: v, configMap: {name: x, items: {key: a}}}\n", True),
        (
            "volumes:\n- {name: v, configMap: {name: x, items: [a, [b], {key: ~}, {key: [c]}, {}]}}\n",
            True,
        ),
        ("volumes:\n- {name: v, configMap: {name: x, items: [{key: !!str a}]}}\n", False),
        ("volumes:\n- {name: v, configMap: {name: x, items: [{key: a, key: b}]}}\n", False),
        ("volumes:\n- {name: v, configMap: {name: x, items: [{<<: {key: a}}]}}\n", False),
        ("imagePullSecrets:\n- {name: r}\n- r2\n- {name: ~}\n", True),
        (
            "containers:\n- {name: c, env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: k}}}]}\n",
            True,
        ),
        (
            "containers:\n- {name: c, env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: ~}}}]}\n",
            True,
        ),
        (
            "containers:\n- {name: c, env: [{name: A, valueFrom: {secretKeyRef: {name: s}}}]}\n",
            True,
        ),
        (
            "containers:\n- {name: c, env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: [k]}}}]}\n",
            False,
        ),
        ("containers:\n- {name: '', envFrom: [{configMapRef: {name: a}}]}\n", True),
        ("containers:\n- {name: ~, envFrom: [{configMapRef: {name: 'ä'}}]}\n", True),
    ],
)
def test_the_c_walk_and_references_hand_back_what_they_do_not_make(
    spec: str, c_makes: bool
) -> None:
    _c_find()
    text = "spec:\n" + "".join("  " + line + "\n" for line in spec.splitlines())
    made = []
    for pull in (False, True):  # each on a fresh tree (entries() caches what it reads)
        node = get(parse_chunk(text, 0, backend("fast"))[0], "spec")
        assert node is not None
        made.append(_same_found(node, pull))
    assert made == [c_makes, c_makes]


# ------------------------------------------------------------------ find_references in C


def _c_find() -> Callable[..., object]:
    if refs._C_FIND is None:
        pytest.skip("without the C extension")
    return refs._C_FIND


def _same_found(spec: Node, pull: bool) -> bool:
    """C's result is the Python body's (same References), or None; find_references
    gives the Python outcome either way. True when C made them."""
    got = _c_find()(spec, "spec", pull)
    want = _outcome(lambda: refs._py_find_references(spec, "spec", image_pull_secrets=pull))
    if got is not None:
        assert got == want
    assert _outcome(lambda: refs.find_references(spec, "spec", image_pull_secrets=pull)) == want
    return got is not None


def test_the_c_find_is_the_python_find_on_the_corpus() -> None:
    made = 0
    for f in sorted(CORPUS.rglob("*.yaml")):
        for spec in _pod_specs(f.read_text()):
            for pull in (False, True):
                made += _same_found(spec, pull)
    assert made > 100


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
@given(streams(), styles)
def test_the_c_find_on_generated_pod_specs(stream: Stream, style: Style) -> None:
    _c_find()
    for spec in _pod_specs(render(stream, style).decode("utf-8")):
        for pull in (False, True):
            _same_found(spec, pull)


@pytest.mark.parametrize(
    ("spec", "c_makes"),
    [
        ("containers:\n- {name: c, envFrom: [{configMapRef: {name: a}}]}\n", True),
        (
            "initContainers:\n- {name: i, envFrom: [{secretRef: {name: s}}]}\n"
            "containers:\n- {name: c, envFrom: [{configMapRef: {name: a}}]}\n",
            True,
        ),
        ("containers: ~\nvolumes: x\n", True),
        ("containers: {a: b}\n", True),
        (
            "containers:\n- just a string\n- [a, list]\n- {envFrom: [{configMapRef: {name: a}}]}\n",
            True,
        ),
        ("containers:\n- {name: ~, envFrom: [{configMapRef: {name: a}}]}\n", True),
        ("containers:\n- {name: [x], envFrom: [{configMapRef: {name: a}}]}\n", True),
        ("containers:\n- {name: !!str c, envFrom: [{configMapRef: {name: a}}]}\n", False),
        ("containers:\n- &c {name: c, envFrom: [{configMapRef: {name: a}}]}\n- *c\n", False),
        ("containers: &cs\n- {name: c}\ninitContainers: *cs\n", False),
        ("containers:\n- {name: c, name: d}\n", False),  # a duplicate key: refs.py raises
        ("containers:\n- <<: {name: c}\n  envFrom: [{configMapRef: {name: a}}]\n", False),
        ("imagePullSecrets: [{name: r}, {name: ~}, r2]\n", True),
        ("imagePullSecrets: [{name: !!str r}]\n", False),
        ("volumes:\n- {name: v, configMap: {name: x, optional: maybe}}\n", False),  # refused
        ("<<: {containers: [{name: c}]}\n", False),
    ],
)
def test_the_c_find_hands_back_what_it_does_not_make(spec: str, c_makes: bool) -> None:
    _c_find()
    text = "spec:\n" + "".join("  " + line + "\n" for line in spec.splitlines())
    made = []
    for pull in (False, True):  # each on a fresh tree (entries() caches what it reads)
        node = get(parse_chunk(text, 0, backend("fast"))[0], "spec")
        assert node is not None
        made.append(_same_found(node, pull))
    assert made == [c_makes, c_makes]


def test_the_c_find_hands_back_trees_of_the_python_parser() -> None:
    text = "spec:\n  containers:\n  - {name: c, envFrom: [{configMapRef: {name: a}}]}\n"
    node = get(parse_chunk(text, 0, backend("exact"))[0], "spec")
    assert node is not None
    assert _c_find()(node, "spec", False) is None
    assert refs.find_references(node, "spec") == refs._py_find_references(node, "spec")


@pytest.mark.parametrize("field", ["", "spec", "spéc.tëmplate", "s\U0001d11e"])
def test_the_c_find_writes_field_paths_as_python(field: str) -> None:
    """Field paths are made in C without a format string: the same text for any field
    (empty, or wider than ASCII) as the Python body's f-strings."""
    text = (
        "spec:\n  initContainers:\n  - {name: i, env: [{name: A, valueFrom: {secretKeyRef: "
        "{name: s, key: k}}}]}\n  containers:\n  - {name: c, envFrom: [{configMapRef: {name: a}}]}\n"
        "  volumes:\n  - {name: v, projected: {sources: [{secret: {name: p}}]}}\n"
    )
    node = get(parse_chunk(text, 0, backend("fast"))[0], "spec")
    assert node is not None
    got = _c_find()(node, field, True)
    assert got is not None
    assert got == refs._py_find_references(node, field, image_pull_secrets=True)
    assert got[0].field == f"{field}.initContainers[0].env[0].valueFrom.secretKeyRef"


def test_the_c_references_read_a_block_style_by_its_value() -> None:
    """A name in block style has a spot with a problem: C hands it back whatever str
    object holds the style (compared by value, not by identity)."""

    class Style(str):
        pass

    for style in ("|", ">", Style("|"), Style(">")):
        text = "spec:\n  volumes:\n  - {name: v, configMap: {name: cfg}}\n"
        node = get(parse_chunk(text, 0, backend("fast"))[0], "spec")
        name = get(get(items(get(node, "volumes"))[0], "configMap"), "name")
        assert node is not None and name is not None
        name.style = style
        assert _c_find()(node, "spec", False) is None
        got = refs.find_references(node, "spec")
        assert got == refs._py_find_references(node, "spec")
        assert got[0].spot is not None and got[0].spot.problem is not None
