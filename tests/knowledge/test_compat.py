"""Reloader's and Wave's decision tables (knowledge/compat.py), each row against the
upstream code or test it mirrors: stakater/Reloader at 655a2b38 (pkg/common/common.go
ShouldReload; test/e2e/...), wave-k8s/wave at b4e8d70c (pkg/core)."""

from __future__ import annotations

import pytest
from conftest import run_cmhash
from test_declared import CM, DEP, ENV_FROM, SECRET, ann, checksums, stream

from cmhash.knowledge import compat
from cmhash.knowledge.compat import Case, ReloaderView, decide, go_parse_bool, split_wave

SECRET_REF = "        - secretRef: {{name: {target}}}\n"


def view(**kw: object) -> ReloaderView:
    base = {"kind": "ConfigMap", "auto": "", "typed_auto": "", "search": "", "excluded": ()}
    base.update(kw)
    return ReloaderView(field="metadata.annotations", **base)  # type: ignore[arg-type]


def case(v: ReloaderView, **kw: object) -> Case:
    base = {
        "name": "cm",
        "listed": False,
        "match": False,
        "ignored": False,
        "auto_reload_all": False,
    }
    base.update(kw)
    return Case(v, **base)  # type: ignore[arg-type]


# one row per rule, in ShouldReload's order: (case, the rule that decides, the upstream test)
ROWS = [
    # test/e2e/annotations/resource_ignore_test.go "should NOT reload when ConfigMap has
    # ignore=true annotation": before everything, even auto=true
    (case(view(auto="true"), ignored=True), "ignore", False),
    # test/e2e/annotations/combination_test.go "auto=true with exclude annotations":
    # "should NOT reload when excluded ConfigMap changes" (exclude before the list too)
    (case(view(auto="true", excluded=("cm",)), listed=True), "exclude", False),
    # test/e2e/advanced/regex_test.go "should reload when ConfigMap matching pattern
    # changes"; the list counts even with auto "false" (it is checked before auto)
    (case(view(auto="false"), listed=True), "reload-list", True),
    # test/e2e/annotations/search_match_test.go "should reload when workload has search
    # annotation and ConfigMap has match annotation"
    (case(view(search="true"), match=True), "search-match", True),
    # ... "should NOT reload when workload has search but ConfigMap has no match"
    (case(view(search="true")), "not-selected", False),
    # ... "should NOT reload when resource has match but no Deployment has search"
    (case(view(), match=True), "not-selected", False),
    # test/e2e/annotations/auto_reload_test.go "with reloader.stakater.com/auto=true"
    (case(view(auto="true")), "auto", True),
    # ... "with configmap.reloader.stakater.com/auto=true": ConfigMaps reload
    (case(view(typed_auto="true")), "auto", True),
    # ... and Secrets do not (their own typed auto is empty; Reloader's default mode)
    (case(view(kind="Secret")), "not-selected", False),
    # test/e2e/flags/auto_reload_all_test.go "should reload workloads without any
    # annotations when autoReloadAll is true"
    (case(view(), auto_reload_all=True), "auto-reload-all", True),
    # ... "should respect auto=false annotation even when autoReloadAll is true"
    (case(view(auto="false"), auto_reload_all=True), "not-selected", False),
    # test/e2e/core/workloads_test.go "should NOT reload with auto=false annotation"
    (case(view(auto="false")), "not-selected", False),
    # ShouldReload: a typed auto "false" also keeps --auto-reload-all from that kind
    (case(view(typed_auto="false"), auto_reload_all=True), "not-selected", False),
]


@pytest.mark.parametrize(("c", "rule", "reloads"), ROWS)
def test_reloader_rule_table(c: Case, rule: str, reloads: bool) -> None:
    got = decide(c)
    assert (got.name, got.reloads) == (rule, reloads)


def test_the_table_is_in_shouldreloads_order() -> None:
    assert [r.name for r in compat.RELOADER_RULES] == [
        "ignore",
        "exclude",
        "reload-list",
        "search-match",
        "auto",
        "auto-reload-all",
    ]
    assert all(r.upstream.startswith("pkg/common/common.go") for r in compat.RELOADER_RULES)


@pytest.mark.parametrize(
    ("text", "true"),
    [
        *[(t, True) for t in ("1", "t", "T", "TRUE", "true", "True")],
        *[(t, False) for t in ("yes", "tRue", " true", "", "0")],
    ],
)
def test_auto_is_read_with_gos_parse_bool(text: str, true: bool) -> None:
    """strconv.ParseBool, as ShouldReload reads auto and typed auto."""
    assert go_parse_bool(text) is true


@pytest.mark.parametrize(
    ("value", "used", "skipped"),
    [
        # wave pkg/core/children_test.go "returns ConfigMaps referenced in extra-configmaps
        # annotations": ns1/test-cm1, ns2/test-cm2 and local-cm1
        (
            "ns1/test-cm1,ns2/test-cm2,local-cm1",
            [("ns1", "test-cm1"), ("ns2", "test-cm2"), (None, "local-cm1")],
            [],
        ),
        # children.go: len(parts) is neither 1 nor 2: skipped without a word
        ("a/b/c,d", [(None, "d")], ["a/b/c"]),
        # not trimmed
        ("a, b", [(None, "a"), (None, " b")], []),
    ],
)
def test_wave_splits_as_children_go(
    value: str, used: list[tuple[str | None, str]], skipped: list[str]
) -> None:
    got_used, got_skipped = split_wave(value)
    assert [(i.namespace, i.name) for i in got_used] == used
    assert got_skipped == skipped


# ------------------------------------------------------------------ whole runs


def cm(name: str, value: str = "v1", meta: str = "") -> str:
    return CM.format(name=name, meta=meta, value=value)


def value_of(docs: list[str], *args: str) -> str | None:
    (v,) = checksums(stream(*docs), *args).values()
    return v


def moves(docs: list[str], name: str, *args: str) -> bool:
    """Whether a content change of ConfigMap/Secret ``name`` moves the checksum."""
    before = value_of(docs, *args)
    after = value_of(
        [d.replace("k: v1", "k: v2") if f"name: {name}\n" in d else d for d in docs], *args
    )
    return before != after


def test_explicit_reload_list_counts_with_auto_false() -> None:
    """ShouldReload checks the reload list before auto: auto "false" does not drop it."""
    dep = DEP.format(
        name="d",
        meta=ann(
            **{
                "reloader.stakater.com/auto": "false",
                "configmap.reloader.stakater.com/reload": "listed",
            }
        ),
        spec=ENV_FROM.format(target="used"),
    )
    docs = [cm("listed"), cm("used"), dep]
    assert moves(docs, "listed")
    assert not moves(docs, "used")  # auto "false": pod-spec references do not count
    assert moves(docs, "listed", "--opt-in")


def test_opt_in_is_a_reload_list_typed_auto_or_wave() -> None:
    spec = ENV_FROM.format(target="c")
    matched = ann(**{"reloader.stakater.com/match": "true"})
    for meta in (
        {"configmap.reloader.stakater.com/reload": "c"},
        {"configmap.reloader.stakater.com/auto": "true"},
        {"reloader.stakater.com/auto": "True"},
        {"reloader.stakater.com/search": "true"},
        {"wave.pusher.com/update-on-config-change": "true"},
        {"cmhash.io/enabled": "true"},
    ):
        docs = [cm("c", meta=matched), DEP.format(name="d", meta=ann(**meta), spec=spec)]
        assert value_of(docs, "--opt-in") is not None, meta
    for meta in (
        {"reloader.stakater.com/auto": "false"},
        {"reloader.stakater.com/search": "True"},  # search is compared with "true" exactly
        {"wave.pusher.com/update-on-config-change": "True"},  # requiredAnnotationValue
        {"wave.pusher.com/extra-configmaps": "c"},  # Wave acts on update-on-config-change
    ):
        docs = [cm("c", meta=matched), DEP.format(name="d", meta=ann(**meta), spec=spec)]
        assert value_of(docs, "--opt-in") is None, meta
    # a Secret reload list opts in; the ConfigMap the pod spec uses then counts only by
    # Reloader's rules (its own auto is empty: not under Reloader's default mode)
    listed = {"secret.reloader.stakater.com/reload": "s"}
    docs = [
        cm("c"),
        SECRET.format(name="s", value="v1"),
        DEP.format(name="d", meta=ann(**listed), spec=spec),
    ]
    res = run_cmhash(["explain", "--no-config", "--opt-in", "-"], stdin=stream(*docs))
    assert "selected by: secret.reloader.stakater.com/reload" in res.out, res.out
    assert "ConfigMap/c via envFrom (all keys): excluded (Reloader would not reload" in res.out


def test_cmhash_enabled_false_opts_out() -> None:
    docs = [
        cm("c"),
        DEP.format(
            name="d", meta=ann(**{"cmhash.io/enabled": "false"}), spec=ENV_FROM.format(target="c")
        ),
    ]
    assert value_of(docs) is None
    res = run_cmhash(["explain", "--no-config", "-"], stdin=stream(*docs))
    assert 'opted out (cmhash.io/enabled: "false")' in res.out


@pytest.mark.parametrize(
    ("kind", "exclude", "ref"),
    [
        ("ConfigMap", "configmaps.exclude.reloader.stakater.com/reload", ENV_FROM),
        ("Secret", "secrets.exclude.reloader.stakater.com/reload", SECRET_REF),
    ],
)
def test_exclude_lists(kind: str, exclude: str, ref: str) -> None:
    """test/e2e/annotations/exclude_test.go: "should NOT reload when excluded ConfigMap
    changes" / "should reload when non-excluded ConfigMap changes" (auto=true)."""
    obj = CM if kind == "ConfigMap" else SECRET
    objs = [obj.format(name=n, meta="", value="v1").replace('k: "v1"', "k: v1") for n in ("a", "b")]
    spec = "        envFrom:\n" + "".join(
        ref.format(target=n).replace("        envFrom:\n", "") for n in ("a", "b")
    )
    meta = {"reloader.stakater.com/auto": "true", exclude: " a , x"}
    docs = [*objs, DEP.format(name="d", meta=ann(**meta), spec=spec)]
    assert not moves(docs, "a")
    assert moves(docs, "b")


def test_exclude_beats_the_reload_list_and_is_read_from_metadata_only() -> None:
    listed = {
        "configmap.reloader.stakater.com/reload": "a,b",
        "configmaps.exclude.reloader.stakater.com/reload": "a",
    }
    docs = [cm("a"), cm("b"), DEP.format(name="d", meta=ann(**listed), spec="")]
    assert not moves(docs, "a") and moves(docs, "b")
    # exclude_test.go "Exclude annotation on pod template" is pending upstream: ShouldReload
    # reads the exclude lists before it may switch to the pod template's annotations
    on_template = DEP.format(name="d", meta="", spec="").replace(
        "  template:\n",
        "  template:\n    metadata:\n      annotations:\n"
        '        configmap.reloader.stakater.com/reload: "a,b"\n'
        '        configmaps.exclude.reloader.stakater.com/reload: "a"\n',
    )
    assert moves([cm("a"), cm("b"), on_template], "a")


def test_reloader_reads_metadata_or_else_the_pod_template_per_kind() -> None:
    """ShouldReload: the pod template's annotations only when none of the kind's reload
    list, auto, typed auto or search is on the workload's metadata."""
    dep = DEP.format(
        name="d",
        meta=ann(**{"secret.reloader.stakater.com/reload": "s"}),
        spec="",
    ).replace(
        "  template:\n",
        "  template:\n    metadata:\n      annotations:\n"
        '        configmap.reloader.stakater.com/reload: "c"\n'
        '        secret.reloader.stakater.com/reload: "t"\n',
    )
    secrets = [SECRET.format(name=n, value="v1").replace('"v1"', "v1") for n in ("s", "t")]
    docs = [cm("c"), *secrets, dep]
    assert moves(docs, "c")  # ConfigMaps: nothing on the metadata, the template's list
    assert moves(docs, "s")  # Secrets: the metadata's list
    assert not moves(docs, "t")  # ... and not the template's


def test_search_and_match_exactly_true() -> None:
    # (not "n": go-yaml v2 reads a plain n as false, which Kubernetes refuses as a name)
    spec = ENV_FROM.format(target="m") + "        - configMapRef: {name: nn}\n"
    meta = ann(**{"reloader.stakater.com/search": "true"})
    matched = cm("m", meta=ann(**{"reloader.stakater.com/match": "true"}))
    almost = cm("nn", meta=ann(**{"reloader.stakater.com/match": "True"}))
    docs = [matched, almost, DEP.format(name="d", meta=meta, spec=spec)]
    assert moves(docs, "m", "--opt-in")
    assert not moves(docs, "nn", "--opt-in")


def test_secret_provider_class_annotations() -> None:
    """secretproviderclass.reloader.stakater.com/{auto,reload} and the exclude list
    (flags.go; test/e2e/annotations/auto_reload_test.go "with secretproviderclass.
    reloader.stakater.com/auto=true annotation")."""
    spc = (
        "apiVersion: secrets-store.csi.x-k8s.io/v1\nkind: SecretProviderClass\nmetadata:\n"
        "  name: {n}\nspec:\n  provider: aws\n  parameters:\n    objects: v1\n"
    )
    csi = (
        "      volumes:\n      - name: s\n        csi:\n          driver: secrets-store.csi.k8s.io\n"
        "          volumeAttributes: {{secretProviderClass: {n}}}\n"
    )
    plain = DEP.format(name="d", meta="", spec="")
    spcs = [spc.format(n="p"), spc.format(n="q")]

    def dep(meta: dict[str, str], mount: str = "p") -> str:
        return DEP.format(name="d", meta=ann(**meta), spec="") + csi.format(n=mount)

    def changes(docs: list[str], name: str, *args: str) -> bool:
        before = value_of(docs, *args)
        after = value_of(
            [
                d.replace("objects: v1", "objects: v2") if f"name: {name}\n" in d else d
                for d in docs
            ],
            *args,
        )
        return before != after

    typed = [*spcs, dep({"secretproviderclass.reloader.stakater.com/auto": "true"})]
    assert changes(typed, "p", "--opt-in")
    listed = [*spcs, dep({"secretproviderclass.reloader.stakater.com/reload": "q"})]
    assert changes(listed, "q", "--opt-in") and not changes(listed, "p", "--opt-in")
    excluded = [
        *spcs,
        dep({"secretproviderclasses.exclude.reloader.stakater.com/reload": "p"}),
    ]
    assert value_of(excluded) is None
    assert plain  # (the workload without annotations is the plain DEP)


@pytest.mark.parametrize(
    ("source", "where"),
    [
        (
            "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: s\n"
            "spec:\n  encryptedData: {k: AgB1}\n  template:\n    metadata:\n"
            "      annotations: {ANN}\n",
            "SealedSecret spec.template.metadata",
        ),
        (
            "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: s\n"
            "spec:\n  secretStoreRef: {name: v, kind: ClusterSecretStore}\n  target:\n"
            "    template:\n      metadata:\n        annotations: {ANN}\n"
            "  data:\n  - secretKey: k\n    remoteRef: {key: k}\n",
            "ExternalSecret spec.target.template.metadata",
        ),
    ],
)
def test_match_and_ignore_in_a_sources_template_apply_to_its_secret(
    source: str, where: str
) -> None:
    spec = "        envFrom:\n" + SECRET_REF.format(target="s")
    search = DEP.format(name="d", meta=ann(**{"reloader.stakater.com/search": "true"}), spec=spec)
    matched = source.replace("{ANN}", '{"reloader.stakater.com/match": "true"}')
    unmatched = source.replace("{ANN}", "{}")
    assert value_of([matched, search], "--opt-in") is not None, where
    assert value_of([unmatched, search], "--opt-in") is None, where
    ignored = source.replace("{ANN}", '{"reloader.stakater.com/ignore": "true"}')
    plain = DEP.format(name="d", meta="", spec=spec)
    assert value_of([ignored, plain]) is None, where
    assert value_of([unmatched, plain]) is not None, where


def test_wave_reads_the_workload_metadata_only_and_never_aborts() -> None:
    extra = {"wave.pusher.com/extra-configmaps": "c,a/b/c,UPPER"}
    docs = [cm("c"), DEP.format(name="d", meta=ann(**extra), spec="")]
    res = run_cmhash(["--no-config", "-"], stdin=stream(*docs))
    assert res.code == 0 and res.stderr.count("[skipped-item]") == 2, res.stderr
    assert moves(docs, "c")
