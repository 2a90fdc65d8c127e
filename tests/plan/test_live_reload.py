"""What an operator's own config reloader applies without a restart is left out of the
checksum by default, with a note saying why (knowledge/operators.py ``live``;
plan/resolve.py; a ``live-reloaded`` finding), and ``--hash-live-reloaded`` (config:
``hashLiveReloaded: true``) puts it back.

On the real kube-prometheus manifests, a change to the Alertmanager's configuration
Secret rolled its pods, although the Prometheus operator's config-reloader applies it
live: the operator reads ``configSecret`` into ``alertmanager-<name>-generated``, a
watched directory, as it watches every ``spec.secrets``/``spec.configMaps`` mount
(pkg/alertmanager/statefulset.go); a Prometheus' ``additionalScrapeConfigs`` go into the
generated configuration, its ``spec.secrets`` and ``spec.configMaps`` are not watched
(they still roll); a ThanosRuler's configuration Secrets are not watched either."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import CORPUS, ROOT, SHARED_CORPUS, run_cmhash

from cmhash.knowledge.kinds import OPERATOR_KINDS

CASES = ROOT / "tests" / "cases"
KUBE_PROMETHEUS = CORPUS / "kube-prometheus" / "manifests"
CHECKSUM = re.compile(r'checksum/config: "([0-9a-f]{64})"')
ALERTMANAGER = (CASES / "op-alertmanager" / "input.yaml").read_text()


def _run(text: str, *args: str) -> tuple[list[str], str]:
    res = run_cmhash(["--no-config", *args, "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    return CHECKSUM.findall(res.out), res.stderr


def test_the_alertmanagers_configuration_does_not_roll_its_pods_by_default() -> None:
    changed = ALERTMANAGER.replace('"resolve_timeout": "5m"', '"resolve_timeout": "6m"')
    assert changed != ALERTMANAGER
    sums, said = _run(ALERTMANAGER)
    assert sums == [] and _run(changed)[0] == []
    assert said == (
        "<stdin>:4:1: info: Alertmanager/main -n monitoring does not roll on Secret "
        "'alertmanager-main' (spec.configSecret): the Prometheus operator reads it into the "
        "configuration it generates, which its config-reloader applies without a restart; "
        "left out of the checksum (--hash-live-reloaded hashes it) [live-reloaded]\n"
    )
    live, _ = _run(ALERTMANAGER, "--hash-live-reloaded")
    assert live and _run(changed, "--hash-live-reloaded")[0] != live


def test_the_setting_in_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "am.yaml").write_text(ALERTMANAGER)
    (tmp_path / ".cmhash.yaml").write_text("hashLiveReloaded: true\n")
    res = run_cmhash(["am.yaml"], cwd=tmp_path)
    assert res.code == 0 and CHECKSUM.findall(res.out), res.stderr
    assert "live-reloaded" not in res.stderr
    off = run_cmhash(["--no-hash-live-reloaded", "am.yaml"], cwd=tmp_path)
    assert not CHECKSUM.findall(off.out) and "[live-reloaded]" in off.stderr


def test_an_alertmanagers_watched_mounts_and_a_prometheus_unwatched_ones() -> None:
    """Alertmanager: every spec.secrets/spec.configMaps mount is a watched directory
    (left out); Prometheus: they are mounted into the prometheus container only (they
    roll), while its additional scrape configs are applied live (left out)."""
    am = ALERTMANAGER.replace("  secrets: []", "  secrets: [am-tls]\n  configMaps: [am-templates]")
    am += (
        "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: am-tls\n  namespace: monitoring\n"
        "stringData:\n  tls.crt: x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
        "  name: am-templates\n  namespace: monitoring\ndata:\n  a.tmpl: x\n"
    )
    sums, said = _run(am)
    assert sums == [] and said.count("[live-reloaded]") == 1  # one note for the workload
    for what in (
        "Secret 'am-tls' (spec.secrets[0])",
        "ConfigMap 'am-templates' (spec.configMaps[0])",
    ):
        assert what + ": the Prometheus operator's config-reloader watches its mount" in said
    prometheus = (CASES / "op-prometheus" / "input.yaml").read_text()
    before, said = _run(prometheus)
    assert len(before) == 1 and "Secret 'additional-scrape-configs'" in said
    assert "etcd-client-tls" not in said and "rules-extra" not in said
    rolled, _ = _run(prometheus.replace("Y2VydA==", "Y2VydDI="))  # spec.secrets: rolls
    assert rolled != before
    scrape = prometheus.replace("localhost:9090", "localhost:9091")  # applied live
    assert _run(scrape)[0] == before
    assert _run(scrape, "--hash-live-reloaded")[0] != _run(prometheus, "--hash-live-reloaded")[0]


def test_explain_says_why_it_does_not_count() -> None:
    res = run_cmhash(["explain", "--no-config", "-"], stdin=ALERTMANAGER.encode())
    assert (
        "Secret/alertmanager-main via spec.configSecret (all keys, optional): excluded (the "
        "Prometheus operator reads it into the configuration it generates, which its "
        "config-reloader applies without a restart; --hash-live-reloaded hashes it)"
    ) in res.out


KUBE_PROMETHEUS_DIRS = [KUBE_PROMETHEUS]
if (SHARED_CORPUS / "kube-prometheus" / "manifests").exists():
    KUBE_PROMETHEUS_DIRS.append(SHARED_CORPUS / "kube-prometheus" / "manifests")


@pytest.mark.parametrize("manifests", KUBE_PROMETHEUS_DIRS, ids=lambda p: p.parts[-3])
def test_kube_prometheus(manifests: Path, tmp_path: Path) -> None:
    """The real manifests, and the same with the Alertmanager's configuration changed:
    the same output but for that Secret's line (no pod rolls); with the setting, the
    Alertmanager's checksum moves (where its resource is in the input)."""
    import shutil

    tree = Path(shutil.copytree(manifests, tmp_path / "m"))
    secret = tree / "alertmanager-secret.yaml"
    before = run_cmhash(["--no-config", str(tree)])
    assert before.code == 0, before.stderr
    secret.write_text(
        secret.read_text().replace('"resolve_timeout": "5m"', '"resolve_timeout": "6m"')
    )
    after = run_cmhash(["--no-config", str(tree)])
    assert CHECKSUM.findall(after.out) == CHECKSUM.findall(before.out)
    if (tree / "alertmanager-alertmanager.yaml").exists():
        assert "[live-reloaded]" in before.stderr
        live = run_cmhash(["--no-config", "--hash-live-reloaded", str(tree)])
        assert len(CHECKSUM.findall(live.out)) == len(CHECKSUM.findall(before.out)) + 1


def test_every_live_field_is_a_field_of_its_profile() -> None:
    """A live row names a reference field the profile reads (a site's path, or a
    default's field); ThanosRuler has none (its reloader watches rule ConfigMaps only),
    nor do the VictoriaMetrics operator's kinds but VMAlertmanager and VMAgent."""
    for kind in OPERATOR_KINDS:
        fields = {".".join(s.path).removesuffix(".*") for s in kind.sites}
        fields |= {field for field, _, _ in kind.defaults}
        for field, how in kind.live:
            assert field in fields and how, (kind.kind, field)
    live = {k.kind for k in OPERATOR_KINDS if k.live}
    assert live == {"Prometheus", "PrometheusAgent", "Alertmanager", "VMAlertmanager", "VMAgent"}


VM = """\
apiVersion: v1
kind: Secret
metadata: {name: am-cfg, namespace: mon}
stringData:
  alertmanager.yaml: |
    route: {receiver: r}
    receivers: [{name: r}]
---
apiVersion: operator.victoriametrics.com/v1beta1
kind: VMAlertmanager
metadata: {name: am, namespace: mon}
spec:
  replicaCount: 3
  configSecret: am-cfg
---
apiVersion: v1
kind: Secret
metadata: {name: extra-scrape, namespace: mon}
stringData:
  s.yaml: "[]"
---
apiVersion: operator.victoriametrics.com/v1beta1
kind: VMAgent
metadata: {name: ag, namespace: mon}
spec:
  remoteWrite: [{url: "http://vm"}]
  additionalScrapeConfigs: {name: extra-scrape, key: s.yaml}
"""


def test_the_victoriametrics_operators_generated_configuration_is_live_too() -> None:
    """VMAlertmanager's configSecret and VMAgent's additionalScrapeConfigs go into the
    configuration the VictoriaMetrics operator generates, which its config-reloader
    applies, as the Prometheus operator's do: a three-replica VMAlertmanager rolled (and
    lost its cluster state) on every receiver edit."""
    sums, said = _run(VM)
    assert sums == [] and said.count("[live-reloaded]") == 2, said
    assert "VMAlertmanager/am -n mon does not roll on Secret 'am-cfg'" in said
    assert "VMAgent/ag -n mon does not roll on Secret 'extra-scrape'" in said
    assert len(_run(VM, "--hash-live-reloaded")[0]) == 2
