"""Kustomize Components in a repository walk (read/kustomize.py, read/kustfile.py), on
kustomize's own components example (tests/fixtures/kustomize-components: a base, three
``kind: Component`` directories and three overlays that list them under
``components:``), checked against the real ``kustomize`` (4.5.4) and ``kubectl
kustomize`` (v5):

* no advice ever names a component to build: built alone, each fails with both;
* the kustomizations that list components are named instead (they deploy what the
  components change), and each of them builds with both;
* a component's patch names the kustomizations that list it (directly or through
  another component), or no build at all when none in the walk does."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, TOOLS_BIN, run_cmhash, tool, tool_env, write_tree

TREE = ROOT / "tests" / "fixtures" / "kustomize-components"
COMPONENTS = ("components/external_db", "components/ldap", "components/recaptcha")
OVERLAYS = ("overlays/community", "overlays/dev", "overlays/enterprise")
ADVICE = re.compile(r"kustomize build (\S+) \| cmhash")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TREE, tmp_path / "repo"))


def _advised(tree: Path, *args: str) -> tuple[set[str], str]:
    res = run_cmhash(["--check", "-v", *args, "."], cwd=tree)
    assert res.code == 0, res.stderr
    return set(ADVICE.findall(res.stderr)), res.stderr


def _kustomize4() -> str:
    """The standalone kustomize 4.5.4: ``kustomize4`` where both majors are installed,
    else ``kustomize``."""
    found = shutil.which("kustomize4") or shutil.which("kustomize4", path=str(TOOLS_BIN))
    return found or tool("kustomize")


def _build(binary: str, tree: Path, directory: str) -> subprocess.CompletedProcess[str]:
    argv = [_kustomize4(), "build"] if binary == "kustomize" else [tool("kubectl"), "kustomize"]
    return subprocess.run(
        [*argv, directory], cwd=tree, capture_output=True, text=True, env=tool_env(), check=False
    )


def test_no_component_is_advised_and_every_user_is(tree: Path) -> None:
    advised, _ = _advised(tree)
    assert not advised & set(COMPONENTS), advised
    assert advised == {"base", *OVERLAYS}


@pytest.mark.parametrize("binary", ["kustomize", "kubectl"])
def test_what_is_advised_builds_and_the_components_do_not(tree: Path, binary: str) -> None:
    """The premise, with the real tools: each advised directory builds, and its output
    through cmhash is a real run; each component alone fails (its patches' targets are
    in the base)."""
    advised, _ = _advised(tree)
    for directory in sorted(advised):
        built = _build(binary, tree, directory)
        assert built.returncode == 0, (directory, built.stderr)
        res = run_cmhash(["-"], stdin=built.stdout.encode(), cwd=tree)
        assert res.code == 0, (directory, res.stderr)
    for directory in COMPONENTS:
        assert _build(binary, tree, directory).returncode != 0, directory


def test_a_components_patch_names_the_kustomizations_that_list_it(tree: Path) -> None:
    _, said = _advised(tree)
    assert (
        "skipped ./components/ldap/configmap.yaml: a kustomize patch of "
        "components/ldap/kustomization.yaml, not an object (a kustomize Component: build "
        "a kustomization that lists it, kustomize build overlays/enterprise | cmhash)"
    ) in said
    assert (
        "components/external_db/configmap.yaml: a kustomize patch of "
        "components/external_db/kustomization.yaml, not an object (a kustomize Component: "
        "build a kustomization that lists it, kustomize build overlays/community | cmhash, "
        "or overlays/dev, or overlays/enterprise)"
    ) in said


def test_a_component_nothing_lists_advises_no_build(tree: Path) -> None:
    for overlay in OVERLAYS:
        shutil.rmtree(tree / overlay)
    advised, said = _advised(tree)
    assert advised == {"base"}
    assert (
        "components/ldap/configmap.yaml: a kustomize patch of components/ldap/"
        "kustomization.yaml, not an object (a kustomize Component: built only by the "
        "kustomizations that list it)"
    ) in said


def test_a_component_listed_through_another_component_names_its_user(tree: Path) -> None:
    """A component may list components; the kustomization that lists the outer one
    builds both (checked with the real tools)."""
    bundle = tree / "components" / "bundle"
    bundle.mkdir()
    (bundle / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncomponents:\n  - ../ldap\n"
    )
    text = (tree / "overlays" / "enterprise" / "kustomization.yaml").read_text()
    text = text.replace("../../components/ldap", "../../components/bundle")
    (tree / "overlays" / "enterprise" / "kustomization.yaml").write_text(text)
    advised, said = _advised(tree)
    assert "components/bundle" not in advised and "overlays/enterprise" in advised
    assert "(a kustomize Component: build a kustomization that lists it, kustomize build " in said
    assert (
        "components/ldap/kustomization.yaml, not an object (a kustomize Component: build " in said
    )
    for binary in ("kustomize", "kubectl"):
        built = _build(binary, tree, "overlays/enterprise")
        assert built.returncode == 0 and "ldappass" in built.stdout, built.stderr


def test_components_must_be_a_list_of_names(tree: Path) -> None:
    """A ``components:`` kustomize refuses (a string) is a broken kustomization, at its
    position, as the other fields cmhash reads: a warning when no file read is in its
    directory, exit 2 when one is (it could be a patch)."""
    path = tree / "overlays" / "dev" / "kustomization.yaml"
    path.write_text("resources:\n  - ../../base\ncomponents: ../../components/ldap\n")
    said = "overlays/dev/kustomization.yaml:3:13: warning: kustomization file: components must"
    assert said in run_cmhash(["--check", "."], cwd=tree).stderr
    (path.parent / "map.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    res = run_cmhash(["--check", "."], cwd=tree)
    assert res.code == 2
    assert res.stderr.startswith(
        "cmhash: overlays/dev/kustomization.yaml:3:13: kustomization file: components must "
        "be a list of strings"
    ), res.stderr
    assert _build("kustomize", tree, "overlays/dev").returncode != 0
    assert _build("kubectl", tree, "overlays/dev").returncode != 0


def test_the_build_advice_is_a_shell_command(tmp_path: Path) -> None:
    """A directory with a space is quoted (pasted unquoted, it built two directories)."""
    write_tree(
        tmp_path,
        {
            "overlays/my overlay/kustomization.yaml": "resources: [../../base]\npatches:\n- path: p.yaml\n",
            "overlays/my overlay/p.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            "base/kustomization.yaml": "resources: [cm.yaml]\n",
            "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n",
        },
    )
    res = run_cmhash(["-v", "."], cwd=tmp_path)
    assert "kustomize build 'overlays/my overlay' | cmhash" in res.stderr, res.stderr
    assert "kustomize build overlays/my overlay" not in res.stderr


def test_an_overlay_listing_a_component_as_a_resource_is_not_advised(tmp_path: Path) -> None:
    """kustomize refuses that build ("expected kind != 'Component'"): said, not advised."""
    write_tree(
        tmp_path,
        {
            "ovl/kustomization.yaml": "resources: [../comp]\npatches:\n- path: p.yaml\n",
            "ovl/p.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            "comp/kustomization.yaml": (
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                "patches:\n- path: q.yaml\n"
            ),
            "comp/q.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: {a: b}\n",
        },
    )
    res = run_cmhash(["-v", "."], cwd=tmp_path)
    assert "lists the kustomize Component comp under resources" in res.stderr, res.stderr
    assert "is a kustomization that patches" not in res.stderr
