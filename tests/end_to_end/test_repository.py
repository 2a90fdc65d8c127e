"""cmhash dropped into a repository-shaped tree: rendered apps from the corpus, each with
a kustomization.yaml, a Helm chart source, CI files and dotfiles. ``--check`` finds the
work, ``-i`` annotates every manifest exactly as a run over the manifests alone would,
``--check`` is then clean, and every file that is not a manifest stays byte-identical."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT, run_cmhash

CORPUS = ROOT / "tests" / "corpus"
APPS = {  # app directory -> a rendered stream from the corpus
    "istio-grafana": "istio/samples/addons/grafana.yaml",
    "istio-loki": "istio/samples/addons/loki.yaml",
    "spire": "istio/samples/security/spire/spire-quickstart.yaml",
    "bookinfo-mysql": "istio/samples/bookinfo/platform/kube/bookinfo-mysql.yaml",
    "wordpress": "kustomize-rendered/kustomize-examples-wordpress.yaml",
}
NOT_MANIFESTS = {
    "apps/{app}/kustomization.yaml": "resources:\n- rendered.yaml\n",
    "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    "charts/web/values.yaml": "replicas: 2\nconfig:\n  logLevel: info\n",
    "charts/web/templates/deployment.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n"
        "spec:\n  replicas: {{ .Values.replicas }}\n  template:\n    metadata:\n"
        "      annotations:\n        checksum/config: {{ include (print $.Template.BasePath "
        '"/cm.yaml") . | sha256sum }}\n'
    ),
    "charts/web/templates/_helpers.tpl": '{{- define "web.name" -}}web{{- end }}\n',
    ".gitlab-ci.yml": "stages: [render, deploy]\nrender:\n  script: [helm template x charts/web]\n",
    "ci/deploy.yml": "deploy:\n  stage: deploy\n  script:\n    - kubectl apply -f rendered/\n",
    "docker-compose.yml": "services:\n  web:\n    image: nginx\n",
    "mkdocs.yml": "site_name: platform\nnav:\n  - index.md\n",
    "renovate.json": '{"extends": ["config:recommended"]}\n',
    ".pre-commit-config.yaml": "repos: []\n",
    ".github/workflows/ci.yml": "on: push\njobs: {}\n",
    "docs/notes.yaml": "# just notes\n- one\n- two\n",
    "README.md": "# platform\n",
}
# a kustomization that does carry apiVersion/kind is a (passed-through) object
KUSTOMIZATION_WITH_KIND = (
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
    "resources:\n- rendered.yaml\n"
)


def build(root: Path, *, with_noise: bool) -> dict[str, bytes]:
    """The tree; returns every file's bytes (relative path -> bytes)."""
    for app, source in APPS.items():
        d = root / "apps" / app
        d.mkdir(parents=True)
        shutil.copyfile(CORPUS / source, d / "rendered.yaml")
    if with_noise:
        for rel, text in NOT_MANIFESTS.items():
            for app in APPS if "{app}" in rel else [""]:
                path = root / rel.format(app=app)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        (root / "apps" / "istio-loki" / "kustomization.yaml").write_text(KUSTOMIZATION_WITH_KIND)
    return snapshot(root)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_repository_check_fix_check(tmp_path: Path) -> None:
    repo, bare = tmp_path / "repo", tmp_path / "bare"
    before = build(repo, with_noise=True)
    build(bare, with_noise=False)
    check = run_cmhash(["--no-config", "--check", "."], cwd=repo)
    assert check.code == 1, check.stderr
    assert "document has no 'kind'" not in check.stderr
    fix = run_cmhash(["--no-config", "-i", "-v", "."], cwd=repo)
    assert fix.code == 0, fix.stderr
    # the manifests alone, in a tree with nothing else: the same result
    assert run_cmhash(["--no-config", "-i", "."], cwd=bare).code == 0
    after, expected = snapshot(repo), snapshot(bare)
    for rel in expected:
        assert after[rel] == expected[rel], rel
    changed = [rel for rel in expected if after[rel] != before[rel]]
    assert len(changed) == len(APPS)  # every app has a workload using in-stream config
    for rel in before:
        if rel not in expected:
            assert after[rel] == before[rel], f"{rel} is not a manifest and must not change"
    assert run_cmhash(["--no-config", "--check", "."], cwd=repo).code == 0
    notes = fix.stderr
    assert "cmhash: note: skipped ./charts/web/: a Helm chart source" in notes
    assert "cmhash: note: skipped ./ci/deploy.yml: not a Kubernetes manifest" in notes
    assert "cmhash: note: skipped ./apps/wordpress/kustomization.yaml: not a Kubernetes" in notes
    # with its apiVersion and kind too: kustomize's build file, never an object
    assert "skipped ./apps/istio-loki/kustomization.yaml: kustomize's build file" in notes
    assert ".github" not in notes and ".gitlab-ci.yml" not in notes  # hidden: no note


def test_broken_manifest_is_still_an_error(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    build(repo, with_noise=True)
    (repo / "apps" / "broken.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {a: b\n"
    )
    res = run_cmhash(["--no-config", "--check", "."], cwd=repo)
    assert res.code == 2
    # where the unclosed { opens, not the end of the file
    assert res.stderr.startswith("cmhash: ./apps/broken.yaml:5:7: YAML syntax error")


@pytest.mark.parametrize(
    ("patterns", "gone"),
    [
        (["apps/spire/"], "apps/spire/rendered.yaml"),
        (["spire"], "apps/spire/rendered.yaml"),
        (["*/wordpress/*.yaml"], "apps/wordpress/rendered.yaml"),
        (
            ["apps/**/rendered.yaml", "!apps/istio-loki/rendered.yaml"],
            "apps/istio-grafana/rendered.yaml",
        ),
    ],
)
def test_exclude_patterns(tmp_path: Path, patterns: list[str], gone: str) -> None:
    repo = tmp_path / "repo"
    before = build(repo, with_noise=True)
    args = [a for p in patterns for a in ("--exclude", p)]
    res = run_cmhash(["--no-config", "-i", "-v", *args, "."], cwd=repo)
    assert res.code == 0, res.stderr
    after = snapshot(repo)
    assert after[gone] == before[gone]
    assert "excluded" in res.stderr
    assert any(after[rel] != before[rel] for rel in before)  # the rest was processed
    # the same patterns from .cmhash.yaml
    again = tmp_path / "again"
    build(again, with_noise=True)
    (again / ".cmhash.yaml").write_text("exclude:\n" + "".join(f"- '{p}'\n" for p in patterns))
    res = run_cmhash(["-i", "."], cwd=again)
    assert res.code == 0, res.stderr
    assert snapshot(again)[gone] == before[gone]


def test_exclude_relative_to_the_walked_directory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    before = build(repo, with_noise=False)
    res = run_cmhash(["--no-config", "-i", "--exclude", "/spire/", "apps"], cwd=repo)
    assert res.code == 0, res.stderr
    after = snapshot(repo)
    assert after["apps/spire/rendered.yaml"] == before["apps/spire/rendered.yaml"]
    assert after["apps/wordpress/rendered.yaml"] != before["apps/wordpress/rendered.yaml"]


def test_named_files_follow_the_rules_in_file_modes(tmp_path: Path) -> None:
    """pre-commit with pass_filenames: true names every changed YAML file: the ones that
    are not manifests are skipped by --check/-i; a plain run reads a named file as is."""
    repo = tmp_path / "repo"
    build(repo, with_noise=True)
    files = [
        "charts/web/templates/deployment.yaml",
        "ci/deploy.yml",
        "mkdocs.yml",
        "apps/spire/kustomization.yaml",
        "apps/spire/rendered.yaml",
    ]
    res = run_cmhash(["--no-config", "--check", *files], cwd=repo)
    assert res.code == 1, res.stderr
    assert "would update apps/spire/rendered.yaml" in res.stderr
    res = run_cmhash(["--no-config", "--check", "mkdocs.yml"], cwd=repo)
    assert res.code == 0, res.stderr  # nothing to check is not a failure for a hook
    res = run_cmhash(["--no-config", "mkdocs.yml"], cwd=repo)
    assert res.code == 2 and "document has no 'kind'" in res.stderr


def test_invalid_exclude_config(tmp_path: Path) -> None:
    (tmp_path / ".cmhash.yaml").write_text("exclude: charts/\n")
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    res = run_cmhash(["--check", "."], cwd=tmp_path)
    assert res.code == 2
    assert "invalid configuration at exclude" in res.stderr


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ("strict: true\nbogus: 1\n", ":2:1: invalid configuration at (top level)"),
        (
            "workloadKinds:\n  - group: example.com\n    kind: Worker\n"
            "    templatePath: spec.template\n    podSpec: spec\n",
            ":5:5: invalid configuration at workloadKinds/0",
        ),
        (
            "ignore:\n  configs:\n    - {name: a, labels: {}}\n",
            ":3:17: invalid configuration at ignore/configs/0",
        ),
    ],
)
def test_an_unknown_config_key_is_pointed_at(tmp_path: Path, config: str, where: str) -> None:
    """docs/reference/config.md: an error names the line and column of the offending key
    (for a key the schema does not know: that key, not the mapping that holds it)."""
    (tmp_path / ".cmhash.yaml").write_text(config)
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    res = run_cmhash(["a.yaml"], cwd=tmp_path)
    assert res.code == 2
    assert res.stderr.startswith(f"cmhash: {tmp_path / '.cmhash.yaml'}{where}: "), res.stderr
    assert "was unexpected" in res.stderr


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ("strict: true\n---\nbogus: 1\n", ":3:1: "),
        ("---\n---\nstrict: true\n", ":3:1: "),
    ],
)
def test_a_config_file_of_several_documents_is_refused(
    tmp_path: Path, config: str, where: str
) -> None:
    """A later document's settings would be lost without a word: refused at it. An empty
    one (a trailing ``---``) holds none and is read as nothing."""
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    (tmp_path / ".cmhash.yaml").write_text(config)
    res = run_cmhash(["a.yaml"], cwd=tmp_path)
    assert (res.code, res.stderr) == (
        2,
        f"cmhash: {tmp_path / '.cmhash.yaml'}{where}a config file is one YAML document: "
        "join this one to the first or remove it\n",
    )
    (tmp_path / ".cmhash.yaml").write_text("strict: true\n---\n")
    assert run_cmhash(["a.yaml"], cwd=tmp_path).code == 0
