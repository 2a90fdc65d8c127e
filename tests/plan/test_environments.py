"""Environments in one repository never mix (plan/scopes.py) and kustomize source trees
are what they are (read/kustomize.py), end to end through the CLI on a test repository
of real manifests (tests/fixtures/envs-repo/, see its SOURCES.md): the Kubernetes
website's MySQL example as dev/ and prod/ (same names, no namespaces; prod's ConfigMap
differs), and kustomize's helloWorld example as a base with two overlays (a partial
ConfigMap patch, a partial Deployment patch)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import ROOT, run_cmhash, tool

REPO = ROOT / "tests" / "fixtures" / "envs-repo"
KEY = "checksum/config"
WORKLOADS = {
    "environments/dev/mysql-statefulset.yaml": "environments/dev",
    "environments/prod/mysql-statefulset.yaml": "environments/prod",
    "kustomize/helloWorld/base/deployment.yaml": "kustomize/helloWorld/base",
}


def _checksums(text: str) -> dict[str, str | None]:
    out = {}
    for d in yaml.safe_load_all(text):
        if d and d.get("kind") in ("Deployment", "StatefulSet") and "template" in d["spec"]:
            ann = (d["spec"]["template"].get("metadata") or {}).get("annotations") or {}
            out[d["metadata"]["name"]] = ann.get(KEY)
    return out


def _copy(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    return repo


def test_repository_end_to_end(tmp_path: Path) -> None:
    """--check 1, -i, --check 0; every workload's checksum equals cmhash's on its
    environment alone; dev and prod differ; no duplicate warning, no patch hashed."""
    repo = _copy(tmp_path)
    alone = {}
    for wfile, env in WORKLOADS.items():
        res = run_cmhash(["--no-config", env], cwd=repo)
        assert res.code == 0, res.stderr
        alone[wfile] = _checksums(res.out)
    check = run_cmhash(["--no-config", "--check", "."], cwd=repo)
    assert check.code == 1, check.stderr
    assert "duplicate-object" not in check.stderr
    assert "kustomize build kustomize/helloWorld/overlays/staging | cmhash" in check.stderr
    for wfile in WORKLOADS:
        assert f"would update ./{wfile}" in check.stderr
    assert "no-template" not in check.stderr  # the production patch is not a workload
    fixed = run_cmhash(["--no-config", "-i", "."], cwd=repo)
    assert fixed.code == 0, fixed.stderr
    assert run_cmhash(["--no-config", "--check", "."], cwd=repo).code == 0
    for wfile in WORKLOADS:
        got = _checksums((repo / wfile).read_text())
        assert got == alone[wfile] and all(v and len(v) == 64 for v in got.values())
    dev = alone["environments/dev/mysql-statefulset.yaml"]["mysql"]
    prod = alone["environments/prod/mysql-statefulset.yaml"]["mysql"]
    assert dev != prod
    # the overlays' files are untouched
    for f in ("overlays/staging/map.yaml", "overlays/production/deployment.yaml"):
        rel = f"kustomize/helloWorld/{f}"
        assert (repo / rel).read_bytes() == (REPO / rel).read_bytes()


def test_a_change_in_one_environment_rolls_only_that_one(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    assert run_cmhash(["--no-config", "-i", "."], cwd=repo).code == 0
    before = {w: (repo / w).read_text() for w in WORKLOADS}
    cm = repo / "environments/prod/mysql-configmap.yaml"
    cm.write_text(cm.read_text().replace("max_connections=500", "max_connections=800"))
    check = run_cmhash(["--no-config", "--check", "."], cwd=repo)
    assert check.code == 1
    assert "would update ./environments/prod/mysql-statefulset.yaml" in check.stderr
    assert "environments/dev/mysql-statefulset.yaml" not in check.stderr
    assert run_cmhash(["--no-config", "-i", "."], cwd=repo).code == 0
    assert (repo / "environments/dev/mysql-statefulset.yaml").read_text() == before[
        "environments/dev/mysql-statefulset.yaml"
    ]


def test_a_tie_is_exit_2_naming_both_files(tmp_path: Path) -> None:
    """A workload above both environments: which ConfigMap it is deployed with cannot be
    told. Exit 2 at the reference, both files named, nothing written."""
    repo = _copy(tmp_path)
    sts = (REPO / "environments/dev/mysql-statefulset.yaml").read_text()
    (repo / "environments/mysql-statefulset.yaml").write_text(sts)
    res = run_cmhash(["--no-config", "-i", "."], cwd=repo)
    assert res.code == 2, res.stderr
    line = res.stderr.strip().splitlines()[-1]
    assert line.startswith("cmhash: ./environments/mysql-statefulset.yaml:")
    assert (
        "references ConfigMap 'mysql', which ./environments/dev/mysql-configmap.yaml and "
        "./environments/prod/mysql-configmap.yaml both define" in line
    )
    assert "scopes:" in line and "note:" not in line
    assert not [x for x in res.stderr.splitlines() if "note:" not in x and x != line]
    assert (repo / "environments/dev/mysql-statefulset.yaml").read_text() == sts


def test_shared_config_above_the_environments(tmp_path: Path) -> None:
    """A ConfigMap at the root is on every environment's way up: dev uses it; prod's own
    overrides it for prod; prod's never reaches dev."""
    repo = _copy(tmp_path)
    shutil.move(repo / "environments/dev/mysql-configmap.yaml", repo / "mysql-configmap.yaml")
    res = run_cmhash(["--no-config", "-i", "."], cwd=repo)
    assert res.code == 0, res.stderr
    got = _checksums((repo / "environments/dev/mysql-statefulset.yaml").read_text())
    shutil.copy(REPO / "environments/dev/mysql-configmap.yaml", tmp_path / "cm.yaml")
    shutil.copy(REPO / "environments/dev/mysql-statefulset.yaml", tmp_path / "sts.yaml")
    alone = run_cmhash(["--no-config", "cm.yaml", "sts.yaml"], cwd=tmp_path)
    assert got == _checksums(alone.out)
    prod = _checksums((repo / "environments/prod/mysql-statefulset.yaml").read_text())
    assert prod != got


SCOPES = "scopes:\n  - environments/*\n"


def test_scopes_keep_an_environment_to_itself(tmp_path: Path) -> None:
    """dev without its ConfigMap: by the nearest rule it would find prod's (the only
    one); with scopes: it finds none, and says so."""
    repo = _copy(tmp_path)
    (repo / "environments/dev/mysql-configmap.yaml").unlink()
    res = run_cmhash(["--no-config", "--check", "."], cwd=repo)
    assert "would update ./environments/dev/mysql-statefulset.yaml" in res.stderr
    (repo / ".cmhash.yaml").write_text(SCOPES)
    res = run_cmhash(["--check", "."], cwd=repo)
    assert "would update ./environments/dev/mysql-statefulset.yaml" not in res.stderr
    assert "environments/dev/mysql-statefulset.yaml" in res.stderr
    assert "[missing-reference]" in res.stderr
    assert "would update ./environments/prod/mysql-statefulset.yaml" in res.stderr


def test_scopes_resolve_a_tie_only_inside(tmp_path: Path) -> None:
    """Shared objects outside every scope stay visible inside one."""
    repo = _copy(tmp_path)
    (repo / ".cmhash.yaml").write_text(SCOPES)
    shutil.move(repo / "environments/dev/mysql-configmap.yaml", repo / "mysql-configmap.yaml")
    res = run_cmhash(["--check", "."], cwd=repo)
    assert res.code == 1, res.stderr
    assert "would update ./environments/dev/mysql-statefulset.yaml" in res.stderr


@pytest.mark.parametrize("bad", ["scopes: envs/*\n", "scopes: [5]\n", "scopes: ['']\n"])
def test_scopes_are_schema_checked(tmp_path: Path, bad: str) -> None:
    (tmp_path / ".cmhash.yaml").write_text(bad)
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    res = run_cmhash(["--check", "."], cwd=tmp_path)
    assert res.code == 2 and ".cmhash.yaml" in res.stderr and "scopes" in res.stderr


def test_kustomize_patches_are_not_objects(tmp_path: Path) -> None:
    """The staging overlay's map.yaml (a ConfigMap with two keys) is a patch: skipped in
    a walk with a note under -v; named in --check mode too (pre-commit); read as given
    when named in the stream mode."""
    repo = _copy(tmp_path)
    tree = "kustomize/helloWorld"
    res = run_cmhash(["--no-config", "-v", tree], cwd=repo)
    assert res.code == 0, res.stderr
    assert (
        f"skipped {tree}/overlays/staging/map.yaml: a kustomize patch of "
        f"{tree}/overlays/staging/kustomization.yaml, not an object" in res.stderr
    )
    assert "the-map" in res.out and "Have a pineapple" not in res.out
    named = f"{tree}/overlays/staging/map.yaml"
    res = run_cmhash(["--no-config", "--check", named, f"{tree}/base/deployment.yaml"], cwd=repo)
    assert "missing-reference" in res.stderr  # the base ConfigMap was not named; map is no object
    res = run_cmhash(["--no-config", named], cwd=repo)
    assert res.code == 0 and "Have a pineapple" in res.out


def test_generator_inputs_and_inline_patches(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [app.yaml]\n"
        "configMapGenerator:\n- name: gen\n  files: [conf=settings.yaml]\n  envs: [vars.env]\n"
        "patchesStrategicMerge:\n- |-\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n"
        "transformers: [labels.yaml]\n"
    )
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gen\ndata:\n  a: b\n"
    (tmp_path / "settings.yaml").write_text(cm)
    (tmp_path / "labels.yaml").write_text(
        "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {a: b}\n"
    )
    (tmp_path / "app.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        "        - configMapRef: {name: gen}\n"
    )
    res = run_cmhash(["--no-config", "-v", "--check", "."], cwd=tmp_path)
    assert "skipped ./settings.yaml: an input of a kustomize configMapGenerator" in res.stderr
    assert "skipped ./labels.yaml: a kustomize transformer's configuration" in res.stderr
    assert "would update" not in res.stderr  # gen is generated: not in the walk
    assert "kustomize build . | cmhash" in res.stderr


@pytest.mark.integration
def test_the_advised_route_with_the_real_kustomize(tmp_path: Path) -> None:
    """kustomize build OVERLAY | cmhash: the staging Deployment's checksum covers the
    patched ConfigMap (the pineapple greeting), differs from the base's and from
    production's, and changes when the overlay's patch changes; nothing but the
    annotation is added."""
    repo = _copy(tmp_path)
    tree = repo / "kustomize" / "helloWorld"

    def build(overlay: str) -> tuple[str, str]:
        built = subprocess.run(
            [tool("kustomize4"), "build", str(tree / "overlays" / overlay)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        res = run_cmhash(["--no-config", "-"], stdin=built.encode())
        assert res.code == 0, res.stderr
        return built, res.out

    built, out = build("staging")
    assert "Have a pineapple!" in built
    staging = _checksums(out)["staging-the-deployment"]
    assert staging and len(staging) == 64
    # nothing else changed
    strip = [d for d in yaml.safe_load_all(out) if d]
    for d in strip:
        if d["kind"] == "Deployment":
            del d["spec"]["template"]["metadata"]["annotations"][KEY]
    assert strip == [d for d in yaml.safe_load_all(built) if d]
    production = _checksums(build("production")[1])["production-the-deployment"]
    base = _checksums(run_cmhash(["--no-config", str(tree / "base")]).out)["the-deployment"]
    assert len({staging, production, base}) == 3
    patch = tree / "overlays" / "staging" / "map.yaml"
    patch.write_text(patch.read_text().replace("pineapple", "mango"))
    assert _checksums(build("staging")[1])["staging-the-deployment"] != staging


def test_split_by_kind_inside_environments(tmp_path: Path) -> None:
    """No directory on the way up defines it: the definition sharing the deepest common
    directory wins (dev/config over prod/config for dev/deploy)."""
    sts = (REPO / "environments/dev/mysql-statefulset.yaml").read_text()
    for env in ("dev", "prod"):
        (tmp_path / env / "config").mkdir(parents=True)
        (tmp_path / env / "deploy").mkdir()
        cm = (REPO / f"environments/{env}/mysql-configmap.yaml").read_text()
        (tmp_path / env / "config" / "cm.yaml").write_text(cm)
        (tmp_path / env / "deploy" / "sts.yaml").write_text(sts)
    alone = {
        env: _checksums(run_cmhash(["--no-config", env], cwd=tmp_path).out)
        for env in ("dev", "prod")
    }
    res = run_cmhash(["--no-config", "-i", "."], cwd=tmp_path)
    assert res.code == 0, res.stderr
    for env in ("dev", "prod"):
        assert _checksums((tmp_path / env / "deploy" / "sts.yaml").read_text()) == alone[env]
    assert alone["dev"] != alone["prod"]


def test_two_definitions_in_one_directory_are_still_duplicates(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    dev = repo / "environments" / "dev"
    shutil.copy(repo / "environments/prod/mysql-configmap.yaml", dev / "mysql-configmap-2.yaml")
    res = run_cmhash(["--no-config", "--check", "environments"], cwd=repo)
    dups = [x for x in res.stderr.splitlines() if x.endswith("[duplicate-object]")]
    assert len(dups) == 1 and "environments/dev/mysql-configmap.yaml:1" in dups[0]


def test_explain_shows_each_environment_its_own(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    res = run_cmhash(["explain", "--no-config", "environments"], cwd=repo)
    assert res.code == 0, res.stderr
    values = [x.split()[-1] for x in res.out.splitlines() if "checksum/config:" in x]
    assert len(values) == 2 and values[0] != values[1]
    assert "in-stream (environments/prod/mysql-configmap.yaml:1)" in res.out
    data = json.loads(
        run_cmhash(["explain", "--no-config", "--format", "json", "environments"], cwd=repo).out
    )
    schema = json.loads((ROOT / "src/cmhash/schemas/explain.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert [r["definedIn"] for w in data["workloads"] for r in w["references"]] == [
        "environments/dev/mysql-configmap.yaml:1",
        "environments/prod/mysql-configmap.yaml:1",
    ]
    assert len(data["configs"]) == 2
    graph = run_cmhash(["explain", "--no-config", "--format", "mermaid", "environments"], cwd=repo)
    edges = [x for x in graph.out.splitlines() if "-->" in x]
    assert len(edges) == 2 and len({x.split()[0] for x in edges}) == 2


def test_versioned_names_across_environments_are_refused(tmp_path: Path) -> None:
    """--versioned decides one new name per object id: two environments would share
    one. Exit 2 naming both files, nothing written; per environment it works."""
    repo = _copy(tmp_path)
    res = run_cmhash(["--no-config", "--versioned", "-i", "environments"], cwd=repo)
    assert res.code == 2
    assert "ConfigMap 'mysql' is defined in several directories" in res.stderr
    assert "environments/dev/mysql-configmap.yaml and " in res.stderr
    rel = "environments/dev/mysql-configmap.yaml"
    assert (repo / rel).read_bytes() == (REPO / rel).read_bytes()
    res = run_cmhash(["--no-config", "--versioned", "-i", "environments/dev"], cwd=repo)
    assert res.code == 0, res.stderr
    assert "name: mysql-" in (repo / rel).read_text()


def test_report_compares_one_environment_at_a_time(tmp_path: Path) -> None:
    old = _copy(tmp_path / "old")
    new = _copy(tmp_path / "new")
    cm = new / "environments/prod/mysql-configmap.yaml"
    cm.write_text(cm.read_text().replace("max_connections=500", "max_connections=800"))
    res = run_cmhash(
        ["report", "--no-config", str(old / "environments"), str(new / "environments")]
    )
    assert res.code == 2
    assert "ConfigMap 'mysql' is defined in several directories" in res.stderr
    res = run_cmhash(
        ["report", "--no-config", str(old / "environments/prod"), str(new / "environments/prod")]
    )
    assert res.code == 0, res.stderr
    assert "StatefulSet/mysql" in res.out


_RENDER = (
    "---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
    "  name: web-config\ndata:\n  LOG_LEVEL: {level}\n---\n# Source: demo/templates/dep.yaml\n"
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
    "    spec:\n      containers:\n      - name: app\n        image: nginx\n"
    "        envFrom:\n        - configMapRef:\n            name: web-config\n"
)


def test_helm_renders_defining_one_object_are_named_renders_not_directories(
    tmp_path: Path,
) -> None:
    """Two committed renders side by side (one directory) or two releases in one stream:
    the refusal says Helm renders and points at a render, not at 'each environment's
    directory', which is the directory that was just refused."""
    for side, level in (("old", "info"), ("new", "debug")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "a.yaml").write_text(_RENDER.format(level="info"))
        (tmp_path / side / "b.yaml").write_text(_RENDER.format(level=level))
    res = run_cmhash(["report", "--no-config", "old", "new"], cwd=tmp_path)
    assert res.code == 2
    assert "ConfigMap 'web-config' is defined in several Helm renders (old/a.yaml and" in (
        res.stderr
    )
    assert "run it on each Helm release's render (e.g. old/a.yaml)" in res.stderr
    assert "directory" not in res.stderr
    stream = _RENDER.format(level="info") + _RENDER.format(level="debug")
    res = run_cmhash(["--no-config", "--versioned", "-"], stdin=stream.encode())
    assert res.code == 2
    assert "ConfigMap 'web-config' is defined in several Helm renders" in res.stderr
    assert res.stderr.count("\n") == 1
    assert run_cmhash(["report", "--no-config", "old/b.yaml", "new/b.yaml"], cwd=tmp_path).code == 0


@pytest.mark.parametrize("link", ["file", "directory", "workload"])
def test_environments_sharing_files_through_links_are_refused(tmp_path: Path, link: str) -> None:
    """A file read once by its real path cannot say which environment it stands in: a
    linked ConfigMap would give prod dev's checksum, a linked workload one checksum for
    two environments. Refused (exit 2), nothing written."""
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  k: {v}\n"
    dep = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        image: i\n        envFrom:\n"
        "        - configMapRef: {name: cfg}\n"
    )
    for env in ("dev", "prod"):
        (tmp_path / "envs" / env).mkdir(parents=True)
    (tmp_path / "envs" / "dev" / "cm.yaml").write_text(cm.format(v="dev"))
    (tmp_path / "envs" / "dev" / "dep.yaml").write_text(dep)
    (tmp_path / "base" / "prod-config").mkdir(parents=True)
    (tmp_path / "base" / "prod-config" / "cm.yaml").write_text(cm.format(v="prod"))
    prod = tmp_path / "envs" / "prod"
    if link == "file":
        (prod / "cm.yaml").symlink_to("../../base/prod-config/cm.yaml")
        (prod / "dep.yaml").write_text(dep)
    elif link == "directory":
        (prod / "config").symlink_to("../../base/prod-config")
        (prod / "dep.yaml").write_text(dep)
    else:
        (prod / "cm.yaml").write_text(cm.format(v="prod"))
        (prod / "dep.yaml").symlink_to("../dev/dep.yaml")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.yaml") if p.is_file()}
    res = run_cmhash(["--no-config", "-i", "."], cwd=tmp_path)
    assert res.code == 2 and "reached through a symbolic link" in res.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_many_directories_defining_one_name_are_not_compared_pairwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory per application, each with ConfigMap app: each workload's nearest
    definition is found in time of its directory's depth. Every workload's directory
    was compared with every definition's before (quadratic: 3,000 directories took 20 s,
    2 s without the shared name)."""
    from cmhash.plan import scopes

    calls = 0
    real = scopes._parts

    def counted(path: str) -> tuple[str, ...]:
        nonlocal calls
        calls += 1
        return real(path)

    apps = 400
    for i in range(apps):
        d = tmp_path / f"env{i % 2}" / f"app{i}"
        d.mkdir(parents=True)
        (d / "cm.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: '{i}'\n"
        )
        (d / "dep.yaml").write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n"
            "  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
            "        - configMapRef: {name: app}\n"
        )
    monkeypatch.setattr(scopes, "_parts", counted)
    res = run_cmhash(["--no-config", "--diff", "."], cwd=tmp_path)
    assert res.code == 0, res.stderr
    assert len(set(res.out.split("checksum/config: ")[1:])) == apps  # each its own
    assert calls <= 4 * apps, calls


@pytest.mark.parametrize("command", [["--check"], ["explain"]])
def test_a_tie_a_link_made_is_said_as_the_link(tmp_path: Path, command: list[str]) -> None:
    """staging/cm.yaml links to prod's, and dev and prod have their own: the link is read
    once, at prod, so staging's workload tied dev's and prod's, and the tie error advised
    scopes:, which then gave the link refusal. The link refusal is said at once."""
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  k: {v}\n"
    dep = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        image: i\n        envFrom:\n"
        "        - configMapRef: {name: cfg}\n"
    )
    for env in ("dev", "prod", "staging"):
        (tmp_path / env).mkdir()
        (tmp_path / env / "dep.yaml").write_text(dep)
    (tmp_path / "dev" / "cm.yaml").write_text(cm.format(v="dev"))
    (tmp_path / "prod" / "cm.yaml").write_text(cm.format(v="prod"))
    (tmp_path / "staging" / "cm.yaml").symlink_to("../prod/cm.yaml")
    res = run_cmhash([*command, "--no-config", "."], cwd=tmp_path)
    assert res.code == 2
    assert res.stderr.startswith("cmhash: ./staging/cm.yaml is reached through a symbolic link")
    assert "equally near" not in res.stderr


def test_views_of_the_index_are_not_all_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory per application, each choosing its own ConfigMap app among 300 and
    with a ConfigMap of its own: each directory's view of the index is a copy of it, and
    every one was kept to the end (quadratic memory: 475 MB for 3,000 directories). Only
    the last few are kept now; the checksums are the same."""
    import weakref

    from cmhash.plan import index as index_module
    from cmhash.plan import scopes

    alive = peak = 0

    class Counted(index_module.ConfigIndex):
        def __init__(self) -> None:
            nonlocal alive, peak
            super().__init__()
            alive += 1
            peak = max(peak, alive)
            weakref.finalize(self, _gone)

    def _gone() -> None:
        nonlocal alive
        alive -= 1

    apps = 300
    for i in range(apps):
        d = tmp_path / f"env{i % 2}" / f"app{i}"
        d.mkdir(parents=True)
        (d / "cm.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: '{i}'\n---\n"
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own{i}\ndata:\n  v: '{i}'\n"
        )
        (d / "dep.yaml").write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n"
            "  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n"
            f"        - configMapRef: {{name: app}}\n        - configMapRef: {{name: own{i}}}\n"
        )
    monkeypatch.setattr(scopes, "ConfigIndex", Counted)
    res = run_cmhash(["--no-config", "--diff", "."], cwd=tmp_path)
    assert res.code == 0, res.stderr
    assert len(set(res.out.split("checksum/config: ")[1:])) == apps
    assert peak <= 16, peak
