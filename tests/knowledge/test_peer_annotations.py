"""The peers' versioning annotations on a ConfigMap/Secret, each read as its tool reads
it (knowledge/versioning.py PEER_ANNOTATIONS): kustomize needs-hash ("true" only; kustomize
api/resource/resource.go NeedHashSuffix), kapp versioned (any value, "Value is ignored":
carvel-dev/kapp pkg/kapp/diff/change_set_with_versioned_rs.go), Spinnaker versioned
("true" only: homedepot/go-clouddriver pkg/kubernetes IsVersioned), and kapp
versioned-keep-original (an original-named copy cmhash cannot write: not renamed, with a
not-versioned finding)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_cmhash

from cmhash.analyze.annotations import Annotations
from cmhash.analyze.versioned import peer_keep_original, versioned_flag
from cmhash.knowledge.versioning import PEER_ANNOTATIONS

DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n"
    "        envFrom: [{configMapRef: {name: app}}]\n"
)


def cm(annotations: dict[str, str]) -> str:
    lines = "".join(f'    {k}: "{v}"\n' for k, v in annotations.items())
    head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"
    return head + ("  annotations:\n" + lines if lines else "") + "data:\n  k: v\n"


def run(annotations: dict[str, str], *flags: str) -> tuple[int, str, str]:
    res = run_cmhash(["--no-config", *flags, "-"], stdin=(cm(annotations) + "---\n" + DEP).encode())
    return res.code, res.out, res.stderr


def renamed(out: str) -> bool:
    return re.search(r"name: app-[2456789bcdfghkmt]{10}\n", out) is not None


def flag(values: dict[str, str]) -> bool | None:
    return versioned_flag(
        Annotations("metadata.annotations", {k: (v, 0) for k, v in values.items()}, {})
    )


# (annotations, as the tool reads them: versioned?)
CASES = [
    ({"kustomize.config.k8s.io/needs-hash": "true"}, True),
    ({"kustomize.config.k8s.io/needs-hash": "false"}, False),
    ({"kustomize.config.k8s.io/needs-hash": "yes"}, False),  # only "true" hashes
    ({"kapp.k14s.io/versioned": ""}, True),  # the value is ignored
    ({"kapp.k14s.io/versioned": "false"}, True),
    ({"strategy.spinnaker.io/versioned": "true"}, True),
    ({"strategy.spinnaker.io/versioned": "false"}, False),
    ({"kapp.k14s.io/versioned": "", "kapp.k14s.io/versioned-keep-original": ""}, False),
    # cmhash's own annotation decides over any peer's
    ({"cmhash.io/versioned": "false", "kapp.k14s.io/versioned": ""}, False),
    ({"cmhash.io/versioned": "true", "strategy.spinnaker.io/versioned": "false"}, True),
    ({"cmhash.io/versioned": "true", "kapp.k14s.io/versioned-keep-original": ""}, True),
    ({}, None),
]


@pytest.mark.parametrize(("annotations", "expected"), CASES)
def test_each_annotation_is_read_as_its_tool_reads_it(
    annotations: dict[str, str], expected: bool | None
) -> None:
    assert flag(annotations) is expected


def test_every_row_has_a_case() -> None:
    covered = {k for a, _ in CASES for k in a}
    assert {row.annotation for row in PEER_ANNOTATIONS} <= covered


@pytest.mark.parametrize(
    "annotation",
    [
        ("kustomize.config.k8s.io/needs-hash", "true"),
        ("kapp.k14s.io/versioned", ""),
        ("strategy.spinnaker.io/versioned", "true"),
    ],
)
def test_an_opt_in_renames_without_versioned(annotation: tuple[str, str]) -> None:
    """Like cmhash.io/versioned: "true": versioned without --versioned, references follow
    (a plain ConfigMap with needs-hash, which kustomize itself ignores: kustomize#4833)."""
    code, out, err = run(dict([annotation]))
    assert code == 0, err
    assert renamed(out)
    new = re.search(r"name: (app-[2456789bcdfghkmt]{10})\n", out)
    assert new is not None and f"configMapRef: {{name: {new.group(1)}}}" in out
    again = run_cmhash(["--no-config", "-"], stdin=out.encode())  # idempotent
    assert again.out == out


@pytest.mark.parametrize(
    "annotation",
    [("kustomize.config.k8s.io/needs-hash", "false"), ("strategy.spinnaker.io/versioned", "false")],
)
def test_an_opt_out_keeps_the_name_under_versioned(annotation: tuple[str, str]) -> None:
    code, out, err = run(dict([annotation]), "--versioned")
    assert code == 0, err
    assert not renamed(out)
    assert "checksum/config" in out  # its users still roll


def test_keep_original_keeps_the_name_with_a_finding() -> None:
    both = {"kapp.k14s.io/versioned": "", "kapp.k14s.io/versioned-keep-original": ""}
    code, out, err = run(both, "--versioned")
    assert code == 0, err
    assert not renamed(out)
    assert "checksum/config" in out
    assert "not-versioned" in err and "kapp.k14s.io/versioned-keep-original" in err
    assert (
        peer_keep_original(
            Annotations(
                "metadata.annotations", {"kapp.k14s.io/versioned-keep-original": ("", 0)}, {}
            )
        )
        == "kapp.k14s.io/versioned-keep-original"
    )


# --- kapp num-versions / Spinnaker max-version-history: --keep-versions for that object

WCM = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: shop\n"
    '  annotations:\n    {ann}: "{n}"\ndata:\n  v: "{v}"\n'
)
WDEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  namespace: shop\nspec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n"
    "        envFrom: [{configMapRef: {name: kapp}}, {configMapRef: {name: spin}}, "
    "{configMapRef: {name: plain}}]\n"
)


def wrender(v: int, kapp: str = "3", spin: str = "1") -> bytes:
    plain = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n  namespace: shop\n"
        f'data:\n  v: "{v}"\n'
    )
    return "---\n".join(
        (
            WCM.format(name="kapp", ann="kapp.k14s.io/num-versions", n=kapp, v=v),
            WCM.format(name="spin", ann="strategy.spinnaker.io/max-version-history", n=spin, v=v),
            plain,
            WDEP,
        )
    ).encode()


def keep_run(tmp_path: Path, data: bytes, prev: bytes) -> tuple[int, bytes, str]:
    (tmp_path / "prev.yaml").write_bytes(prev)
    args = ["--no-config", "--versioned", "--keep-versions", "2"]
    res = run_cmhash([*args, "--previous", str(tmp_path / "prev.yaml"), "-"], stdin=data)
    return res.code, res.stdout, res.stderr


def kept(out: bytes) -> list[str]:
    return re.findall(r"(?m)^# cmhash\.io/kept-version: (\d+ ConfigMap shop/\S+)$", out.decode())


def test_an_objects_own_window_overrides_keep_versions(tmp_path: Path) -> None:
    """num-versions: 3 keeps two earlier versions, max-version-history: 1 none, the
    object without either --keep-versions 2 (one earlier)."""
    out = b""
    for v in (1, 2, 3, 4):
        code, out, err = keep_run(tmp_path, wrender(v), out)
        assert code == 0, err
    assert sorted(kept(out)) == [
        "1 ConfigMap shop/kapp",
        "1 ConfigMap shop/plain",
        "2 ConfigMap shop/kapp",
    ]
    assert "older than its strategy.spinnaker.io/max-version-history: 1" in err
    assert "older than its kapp.k14s.io/num-versions: 3" in err
    assert "older than --keep-versions 2" in err
    # idempotent: its own output as PREV adds nothing
    assert keep_run(tmp_path, wrender(4), out)[1] == out


@pytest.mark.parametrize("bad", ["0", "two", "-1", ""])
def test_a_window_that_is_not_a_count_is_refused_only_with_keep_versions(
    tmp_path: Path, bad: str
) -> None:
    code, _, err = keep_run(tmp_path, wrender(1, kapp=bad), b"")
    assert code == 2
    assert re.search(r":7:32: kapp\.k14s\.io/num-versions must be a whole number", err)
    plain = run_cmhash(["--no-config", "--versioned", "-"], stdin=wrender(1, kapp=bad))
    assert plain.code == 0, plain.stderr  # without --keep-versions it is not read


def test_flagger_config_tracking_disabled_changes_nothing() -> None:
    """flagger.app/config-tracking: disabled on a ConfigMap/Secret: Flagger uses the same
    object for the primary instead of a -primary copy (fluxcd/flagger
    pkg/canary/config_tracker.go configTrackingDisabledAnnotationKey; docs "If you annotate
    your ConfigMap or Secret ... Flagger will use the same object for the primary").
    cmhash hashes and versions it as any other: a versioned name is what keeps the
    primary on the old content until promotion, which the -primary copy did."""
    flagger = {"flagger.app/config-tracking": "disabled"}
    code, out, err = run(flagger)
    assert code == 0, err
    assert "checksum/config" in out and not renamed(out)
    code, out, err = run(flagger, "--versioned")
    assert code == 0, err
    assert renamed(out)
