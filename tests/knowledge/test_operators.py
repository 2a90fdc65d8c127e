"""Operators' resources (knowledge/operators.py): every built-in profile's fields checked
against the operator's published CRD schema (tests/crds, vendored and attributed), what
rolls and what does not (metamorphic), user profiles from .cmhash.yaml, and the C paths
(workers, both parsers) agreeing."""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, SHARED_CORPUS, run_cmhash

from cmhash.knowledge.kinds import OPERATOR_KINDS
from cmhash.knowledge.podspec import Site

CRDS = ROOT / "tests" / "crds"
CASES = ROOT / "tests" / "cases"


class _Loader(yaml.CSafeLoader):
    """PyYAML's safe loader (libyaml's: the CRDs are 20 MB of YAML, 10 s in pure Python),
    reading a plain ``=`` as the string it is to Kubernetes (the AlertmanagerConfig CRD
    has a property named ``=``: YAML 1.1's value tag)."""


_Loader.add_constructor("tag:yaml.org,2002:value", yaml.SafeLoader.construct_yaml_str)


@cache
def _crds() -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(group, kind) -> the openAPIV3Schema of each served version."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for path in sorted(CRDS.glob("*.yaml.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for doc in yaml.load_all(fh, Loader=_Loader):
                if not doc or doc.get("kind") != "CustomResourceDefinition":
                    continue
                key = (doc["spec"]["group"], doc["spec"]["names"]["kind"])
                out[key] = [
                    v["schema"]["openAPIV3Schema"] for v in doc["spec"]["versions"] if v["served"]
                ]
    return out


PRESERVED = {"preserved": True}


def _at(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    """The schema at ``path``; PRESERVED below a node that keeps unknown fields (the
    VictoriaMetrics CRD's extraEnvs items are corev1.EnvVar, api/operator/v1beta1/
    vmextra_types.go, but its schema lists only name and value: the API server keeps
    valueFrom as written, and the operator reads it)."""
    node: dict[str, Any] | None = schema
    for step in path:
        if node is None or node is PRESERVED:
            return node
        if step == "*":
            node = node.get("items") if node.get("type") == "array" else None
        else:
            found = (node.get("properties") or {}).get(step)
            if found is None and node.get("x-kubernetes-preserve-unknown-fields"):
                return PRESERVED
            node = found
    return node


def _is_string_map(node: dict[str, Any] | None) -> bool:
    return (
        bool(node)
        and node.get("type") == "object"
        and (node.get("additionalProperties", {}).get("type") == "string")
    )


def _site_holds(schema: dict[str, Any], site: Site) -> bool:
    node = _at(schema, site.path)
    if node is None:
        return False
    if node is PRESERVED:
        return True
    if not site.name_field:  # a name: a string (an item of a list of names)
        return node.get("type") == "string"
    props = node.get("properties") or {}
    if props.get(site.name_field, {}).get("type") != "string":
        return False
    return site.key_field is None or props.get(site.key_field, {}).get("type") == "string"


PROFILE_IDS = [
    f"{k.group}/{k.kind}" + (f"/{k.component}" if k.component else "") for k in OPERATOR_KINDS
]


@pytest.mark.parametrize("kind", OPERATOR_KINDS, ids=PROFILE_IDS)
def test_profile_fields_are_in_the_published_crd(kind: Any) -> None:
    """Every served version of the CRD has the annotations map, the pod-spec-like block
    (its volumes; its containers, or env sites where the containers are kept apart) and
    each reference field, with the shape the profile reads."""
    schemas = _crds().get((kind.group, kind.kind))
    assert schemas, f"no vendored CRD for {kind.group}/{kind.kind}"
    for schema in schemas:
        assert _is_string_map(_at(schema, (*kind.template_path, *kind.level))), kind.level
        pod = _at(schema, kind.pod_spec_path)
        assert pod is not None and "volumes" in pod["properties"]
        if not {"containers", "initContainers"} & set(pod["properties"]):
            # a block without containers (Strimzi's spec.template.pod): their env are sites
            assert any(site.how == "env" for site in kind.sites), kind.pod_spec_path
        for site in kind.sites:
            assert _site_holds(schema, site), site.path
        for field, _target, _name in kind.defaults:
            assert (_at(schema, tuple(field.split("."))) or {}).get("type") == "string"


def test_the_crd_check_can_fail() -> None:
    """(the check above is not vacuous: a wrong field or shape is caught)"""
    schema = _crds()[("monitoring.coreos.com", "Prometheus")][0]
    assert not _site_holds(schema, Site(("spec", "secretz", "*"), "Secret", "operator", ""))
    assert not _site_holds(schema, Site(("spec", "secrets"), "Secret", "operator", ""))
    assert _site_holds(schema, Site(("spec", "secrets", "*"), "Secret", "operator", ""))
    vmcluster = _crds()[("operator.victoriametrics.com", "VMCluster")][0]
    assert _at(vmcluster, ("spec", "vmagent", "podMetadata", "annotations")) is None
    assert _is_string_map(_at(vmcluster, ("spec", "vminsert", "podMetadata", "annotations")))
    assert not _site_holds(
        vmcluster, Site(("spec", "vminsert", "vmBackup", "credentialsSecret"), "Secret", "x")
    )


# -- what rolls ------------------------------------------------------------------------

CHECKSUM = re.compile(r'checksum/config: "([0-9a-f]{64})"')


def _checksum(text: str, *args: str) -> str | None:
    res = run_cmhash(["--no-config", *args, "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    found = CHECKSUM.findall(res.out)
    return found[0] if found else None


LIVE = "--hash-live-reloaded"
METAMORPHIC = [
    # (case, a change that must roll the pods, a change that must not, the options: what
    # the operator's own reloader applies counts only with --hash-live-reloaded)
    ("op-prometheus", ("Y2VydA==", "Y2VydDI="), ("not read by this Prometheus", "changed"), ()),
    ("op-prometheus", ('"groups: []"', '"groups: [x]"'), ("team: frontend", "team: backend"), ()),
    (
        "op-prometheus",
        ('targets: ["localhost:9090"]', 'targets: ["localhost:9091"]'),
        ("replicas: 2", "replicas: 3"),
        (LIVE,),
    ),
    (
        "op-thanosruler",
        ("thanos-query.default", "thanos-query.other"),
        ("role: thanos-example", "role: x"),
        (),
    ),
    (
        "op-alertmanager",
        ('"resolve_timeout": "5m"', '"resolve_timeout": "6m"'),
        ("replicas: 3", "replicas: 1"),
        (LIVE,),
    ),
    ("op-vmagent", ('"- action: keep"', '"- action: drop"'), ("token_test", "token_other"), ()),
    ("op-otelcol", ("s3cr3t-token", "n3w-token"), ("other: not read", "other: changed"), ()),
    ("op-otelcol", ('"x: 1"', '"x: 2"'), ("value1", "value9"), ()),
    (
        "op-kafkaconnect",
        ("QUtJQVhYWFhYWFhYWFhYWFg=", "QUtJQVlZWVlZWVlZWVlZWVk="),
        ("bm90IHJlYWQgYnkgdGhpcyBjbHVzdGVy", "Y2hhbmdlZA=="),
        (),
    ),
    # the cluster CA's Secret (spec.tls.trustedCertificates) is Strimzi's to roll on
    (
        "op-kafkaconnect",
        ('topics: "orders"', 'topics: "payments"'),
        ("bm90IGEgcmVhbCBjZXJ0aWZpY2F0ZQ==", "YW5vdGhlciBjZXJ0aWZpY2F0ZQ=="),
        (),
    ),
]


@pytest.mark.parametrize(
    ("case", "rolls", "stays", "args"), METAMORPHIC, ids=[m[0] for m in METAMORPHIC]
)
def test_a_listed_object_rolls_and_an_unlisted_change_does_not(
    case: str, rolls: tuple[str, str], stays: tuple[str, str], args: tuple[str, ...]
) -> None:
    text = (CASES / case / "input.yaml").read_text()
    assert rolls[0] in text and stays[0] in text
    before = _checksum(text, *args)
    assert before is not None
    assert _checksum(text.replace(*rolls), *args) != before
    assert _checksum(text.replace(*stays), *args) == before


def test_alertmanager_names_its_config_secret_or_the_default() -> None:
    text = (CASES / "op-alertmanager" / "input.yaml").read_text()
    named = text.replace("  replicas: 3", "  configSecret: am-config\n  replicas: 3", 1)
    res = run_cmhash(["explain", "--no-config", "-"], stdin=named.encode())
    assert "Secret/am-config via spec.configSecret (all keys): missing" in res.out
    res = run_cmhash(["explain", "--no-config", LIVE, "-"], stdin=text.encode())
    assert (
        "Secret/alertmanager-main via spec.configSecret (all keys, optional): in-stream" in res.out
    )


def test_explain_json_says_how_and_through_whom() -> None:
    import json

    import jsonschema

    res = run_cmhash(
        ["explain", "--no-config", "--format", "json", str(CASES / "op-prometheus" / "input.yaml")]
    )
    data = json.loads(res.out)
    schema = json.loads((ROOT / "src/cmhash/schemas/explain.schema.json").read_text())
    jsonschema.validate(data, schema)
    (w,) = data["workloads"]
    assert w["rollsThrough"].startswith("the Prometheus operator, which copies spec.podMetadata")
    assert [(r["how"], r["field"], r["keys"]) for r in w["references"]] == [
        ("operator", "spec.secrets[0]", None),
        ("operator", "spec.configMaps[0]", None),
        ("operator", "spec.additionalScrapeConfigs", ["prometheus-additional.yaml"]),
    ]


# -- user profiles ---------------------------------------------------------------------


def test_a_user_profile_error_points_at_the_config(tmp_path: Path) -> None:
    config = tmp_path / ".cmhash.yaml"
    config.write_text(
        "workloadKinds:\n  - apiVersion: example.com/v1\n    kind: Database\n"
        "    annotationPath: spec.pod.annotations\n    references:\n"
        "      - {path: spec.credentials, kind: Secret, form: selector}\n"
    )
    res = run_cmhash(["--config", str(config), str(CASES / "op-custom-profile" / "input.yaml")])
    assert res.code == 2
    assert f"{config}:6:" in res.stderr and "form" in res.stderr


def test_template_path_and_annotation_path_exclude_each_other(tmp_path: Path) -> None:
    config = tmp_path / ".cmhash.yaml"
    config.write_text(
        "workloadKinds:\n  - {group: example.com, kind: Database, templatePath: spec.t,"
        " annotationPath: spec.pod.annotations}\n"
    )
    res = run_cmhash(["--config", str(config), str(CASES / "op-custom-profile" / "input.yaml")])
    assert res.code == 2 and str(config) in res.stderr


# -- every path agrees -----------------------------------------------------------------


def _stream(copies: int) -> str:
    texts = [
        (CASES / case / "input.yaml").read_text()
        for case in ("op-prometheus", "op-otelcol", "op-vmagent", "op-alertmanager", "op-vmcluster")
    ]
    return "".join(
        f"---\n# copy {i}\n" + re.sub(r"(?m)^  name: (\S+)", rf"  name: \1-{i}", text)
        for text in texts
        for i in range(copies)
    )


@pytest.mark.slow
def test_workers_and_parsers_agree_on_operator_resources() -> None:
    """Forked workers carry the profiles' rows back (transport), and the exact parser
    writes the same bytes."""
    text = _stream(1200)
    assert len(text) > 4 << 20
    one = run_cmhash(["--no-config", "--workers", "1", "-"], stdin=text.encode())
    two = run_cmhash(["--no-config", "--workers", "2", "-"], stdin=text.encode())
    exact = run_cmhash(["--no-config", "--parser", "exact", "-"], stdin=text.encode())
    assert one.code == two.code == exact.code == 0
    assert one.stdout == two.stdout == exact.stdout
    assert one.out.count("checksum/config:") >= 1200


@pytest.mark.shared("corpus", "kube-prometheus", "manifests")
def test_kube_prometheus_operator_resources() -> None:
    """The real kube-prometheus manifests: with --hash-live-reloaded the Alertmanager
    rolls on its configuration Secret (alertmanager-main, by default; without it the
    operator's reloader applies it live: tests/plan/test_live_reload.py); the Prometheus
    lists nothing of the input."""
    manifests = SHARED_CORPUS / "kube-prometheus" / "manifests"
    res = run_cmhash(["explain", "--no-config", LIVE, str(manifests)])
    assert res.code == 0, res.stderr
    assert "Alertmanager/main -n monitoring" in res.out
    block = res.out.split("Alertmanager/main -n monitoring", 1)[1].split("\n\n")[0]
    assert "restarts through the Prometheus operator" in block
    assert "Secret/alertmanager-main via spec.configSecret" in block


def test_vendored_crds_are_the_upstream_files() -> None:
    """Each vendored CRD is listed in tests/crds/SOURCES.md with the SHA-256 of the file
    as published (a file edited by accident fails)."""
    import hashlib

    sources = (CRDS / "SOURCES.md").read_text()
    for path in sorted(CRDS.glob("*.yaml.gz")):
        digest = hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest()
        assert f"| `{path.name}` |" in sources and digest in sources, path.name


def test_versioned_keeps_what_an_operator_mounts_by_name() -> None:
    """The Prometheus operator mounts spec.secrets at /etc/prometheus/secrets/<name>/:
    --versioned keeps those names (not-versioned, saying why), checks the document with
    the annotation at spec.podMetadata.annotations, and a second run changes nothing."""
    text = (ROOT / "examples" / "prometheus-operator.yaml").read_text()
    res = run_cmhash(["--no-config", "--versioned", "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    out = res.out
    assert "secrets: [etcd-client-tls]" in out and "  - rules-extra\n" in out
    assert "name: additional-scrape-configs\n    key:" in out
    assert "Prometheus/prometheus spec.secrets[0] names it" in res.stderr  # at the field
    assert "  podMetadata:\n    annotations:\n      checksum/config:" in out
    again = run_cmhash(["--no-config", "--versioned", "-"], stdin=res.stdout)
    assert again.code == 0 and again.stdout == res.stdout


@pytest.mark.parametrize("value", ["null", '""'])
def test_alertmanager_empty_config_secret_is_the_default(value: str) -> None:
    text = (CASES / "op-alertmanager" / "input.yaml").read_text()
    text = text.replace("  replicas: 3", f"  configSecret: {value}\n  replicas: 3", 1)
    res = run_cmhash(["explain", "--no-config", "-"], stdin=text.encode())
    assert "Secret/alertmanager-main via spec.configSecret" in res.out


@pytest.mark.parametrize(
    ("row", "where"),
    [
        ("{group: apps, kind: Deployment, templatePath: spec.template}", "apps/Deployment"),
        ("{apiVersion: batch/v1, kind: Job, templatePath: spec.template}", "batch/Job"),
        ("{apiVersion: v1, kind: Pod, templatePath: spec}", "Pod is a built-in"),
        ("{apiVersion: argoproj.io/v1alpha1, kind: Rollout}", "argoproj.io/Rollout"),
    ],
)
def test_a_profile_cannot_replace_a_built_in_kind(tmp_path: Path, row: str, where: str) -> None:
    """Before, the user's row silently replaced the built-in one (a Job lost its
    immutable-template policy, a Rollout its workloadRef rule)."""
    config = tmp_path / ".cmhash.yaml"
    config.write_text(f"annotationKey: x/y\nworkloadKinds:\n  - {row}\n")
    res = run_cmhash(["--config", str(config), str(CASES / "op-prometheus" / "input.yaml")])
    assert res.code == 2, res.stderr
    column = 5 + row.index("kind:") + len("kind: ")
    assert res.stderr.startswith(f"cmhash: {config}:3:{column}: "), res.stderr
    assert where in res.stderr and "built-in kind" in res.stderr


def test_two_profiles_for_one_kind_are_refused(tmp_path: Path) -> None:
    config = tmp_path / ".cmhash.yaml"
    config.write_text(
        "workloadKinds:\n  - {group: x.io, kind: A, templatePath: spec.t}\n"
        "  - apiVersion: x.io/v1\n    kind: A\n    templatePath: spec.u\n"
    )
    res = run_cmhash(["--config", str(config), str(CASES / "op-prometheus" / "input.yaml")])
    assert res.code == 2 and f"{config}:4:11:" in res.stderr
    assert "x.io/A is already profiled by workloadKinds/0" in res.stderr


def test_a_profile_may_replace_an_operator_profile_and_says_so(tmp_path: Path) -> None:
    """A user's Prometheus profile is the one read (here: only spec.secrets counts), and
    -v notes that it replaces the built-in one; without -v nothing is said."""
    config = tmp_path / ".cmhash.yaml"
    config.write_text(
        "workloadKinds:\n  - apiVersion: monitoring.coreos.com/v1\n    kind: Prometheus\n"
        "    annotationPath: spec.podMetadata.annotations\n    references:\n"
        "      - {path: spec.secrets, kind: Secret, form: names}\n"
    )
    case = str(CASES / "op-prometheus" / "input.yaml")
    res = run_cmhash(["explain", "-v", "--config", str(config), case])
    assert res.code == 0, res.stderr
    assert (
        f"note: {config}: workloadKinds/0 replaces the built-in profile of "
        "monitoring.coreos.com/Prometheus (the Prometheus operator)" in res.stderr
    )
    assert (
        "Secret/etcd-client-tls via spec.secrets" in res.out
        and "spec.additionalScrapeConfigs" not in res.out
    )
    quiet = run_cmhash(["explain", "--config", str(config), case])
    assert "replaces the built-in" not in quiet.stderr
    builtin = run_cmhash(["explain", "--no-config", case])
    assert "spec.additionalScrapeConfigs" in builtin.out


# -- reference fields in the wrong shape -------------------------------------------------

SHAPE_CASE = CASES / "op-reference-shape" / "input.yaml"


def test_a_misshapen_reference_is_an_error_under_strict() -> None:
    """Before, a field in the wrong shape was dropped without a word (op-reference-shape
    pins the warnings); --strict makes each an error, exit 2, nothing written."""
    res = run_cmhash(["--no-config", "--strict", str(SHAPE_CASE)])
    assert res.code == 2 and res.out == ""
    assert res.stderr.count("error: ") == 7 and "[reference-shape]" in res.stderr
    assert "input.yaml:28:28: error: Prometheus/k8s: spec.additionalScrapeConfigs is a " in (
        res.stderr
    )


SHAPES = ["x", "[x]", "{name: x}", "[[x]]", "[{name: x, key: k}]", "~", "1", "[~, 2, {}]", "{}"]


@pytest.mark.parametrize("value", SHAPES)
@pytest.mark.parametrize("kind", OPERATOR_KINDS, ids=PROFILE_IDS)
def test_any_shape_in_any_reference_field_is_never_a_crash(kind: Any, value: str) -> None:
    """Every reference field of every built-in profile, written in every shape: exit 0,
    and a reference-shape finding exactly where the shape is not the one the site reads."""
    from cmhash.analyze.workload import misshapen
    from cmhash.parse.events import backend, parse_chunk

    for site in kind.sites:
        fields = [p for p in site.path if p != "*"]
        body = value
        for field in reversed(fields[1:]):
            body = "{" + f"{field}: {body}" + "}"
        doc = (
            f"apiVersion: {kind.group}/v1\nkind: {kind.kind}\nmetadata: {{name: r}}\n"
            f"{fields[0]}: {body}\n"
        )
        res = run_cmhash(["--no-config", "-"], stdin=doc.encode())
        assert res.code == 0 and "Traceback" not in res.stderr, (doc, res.stderr)
        (root,) = parse_chunk(doc, 0, backend("fast"))
        found = misshapen(root, (site,), kind.operator)
        assert res.stderr.count("[reference-shape]") == len(found), (doc, res.stderr)
        if value == "{}" and not site.name_field and site.path[-1] == "*":
            assert len(found) == 1  # a mapping where a list of names is expected
    assert kind.sites or kind.defaults


# -- a resource with several pod groups (VMCluster) ------------------------------------

VMCLUSTER = CASES / "op-vmcluster" / "input.yaml"
CLUSTER_CASES = [
    ("op-vmcluster", {"vminsert", "vmselect", "vmstorage"}),
    ("op-vlcluster", {"vlinsert", "vlselect"}),
    ("op-vtcluster", {"insert", "select"}),
]
GROUP_SUM = re.compile(
    r'  (\w+):\n    podMetadata:\n      annotations:\n        checksum/config: "(\w+)"'
)


@pytest.mark.parametrize(("case", "groups"), CLUSTER_CASES)
def test_a_cluster_rolls_only_the_group_that_lists_the_object(case: str, groups: set[str]) -> None:
    """VictoriaLogs' and VictoriaTraces' clusters too: the query ConfigMap moves the
    select group's checksum only, the ingest token the insert group's only (a group that
    uses nothing of the input carries no checksum)."""
    text = (CASES / case / "input.yaml").read_text()
    before = _group_sums(text)
    assert set(before) == groups
    if case == "op-vmcluster":
        return  # (test_each_pod_group_has_its_own_checksum)
    select = next(g for g in groups if g.endswith("select"))
    insert = next(g for g in groups if g.endswith("insert"))
    for change, moved in (
        (("-search.maxQueryDuration=30s", "-search.maxQueryDuration=1m"), select),
        (("not a real token", "another token"), insert),
    ):
        after = _group_sums(text.replace(*change))
        assert {g for g in before if before[g] != after[g]} == {moved}


def _group_sums(text: str) -> dict[str, str]:
    res = run_cmhash(["--no-config", "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    return dict(GROUP_SUM.findall(res.out))


@pytest.mark.parametrize(
    ("change", "moved"),
    [
        (
            ('"-search.maxUniqueTimeseries=1000000"', '"-search.maxUniqueTimeseries=1"'),
            {"vmselect"},
        ),
        (('"not a real certificate"', '"another certificate"'), {"vmselect"}),
        (('"not a real token"', '"another token"'), {"vminsert"}),
        (('"project_id": "project-id"', '"project_id": "other"'), {"vmstorage"}),
        (('"not read: vmBackup reads credentials.json only"', '"changed"'), set()),
        (('retentionPeriod: "4"', 'retentionPeriod: "5"'), set()),
    ],
)
def test_each_pod_group_has_its_own_checksum(change: tuple[str, str], moved: set[str]) -> None:
    """Three checksums, each of what that group uses: a change to an object one group
    lists moves that group's checksum only; a key vmBackup does not read, or a field of
    the resource, moves none."""
    text = VMCLUSTER.read_text()
    assert change[0] in text
    before = _group_sums(text)
    assert set(before) == {"vminsert", "vmselect", "vmstorage"}
    after = _group_sums(text.replace(*change))
    assert {g for g in before if before[g] != after[g]} == moved


def test_a_group_the_resource_does_not_run_is_not_a_workload() -> None:
    """A VMCluster without vmselect (or with vmselect: null) has two pod groups."""
    text = VMCLUSTER.read_text()
    start = text.index("  vmselect:\n")
    end = text.index("  vminsert:\n")
    for without in (text[:start] + text[end:], text[:start] + "  vmselect: null\n" + text[end:]):
        res = run_cmhash(
            ["explain", "--no-config", "--format", "json", "-"], stdin=without.encode()
        )
        assert res.code == 0, res.stderr
        import json

        groups = [w.get("component") for w in json.loads(res.out)["workloads"]]
        assert groups == ["vminsert", "vmstorage"]


def test_explain_and_report_name_the_group(tmp_path: Path) -> None:
    import json

    import jsonschema

    res = run_cmhash(["explain", "--no-config", "--format", "json", str(VMCLUSTER)])
    data = json.loads(res.out)
    schema = json.loads((ROOT / "src/cmhash/schemas/explain.schema.json").read_text())
    jsonschema.validate(data, schema)
    by_group = {w["component"]: w for w in data["workloads"]}
    assert by_group["vmstorage"]["rollsThrough"] == (
        "the VictoriaMetrics operator, which copies spec.vmstorage.podMetadata.annotations "
        "to its pods"
    )
    assert [(r["field"], r["keys"]) for r in by_group["vmstorage"]["references"]] == [
        ("spec.vmstorage.vmBackup.credentialsSecret", ["credentials.json"])
    ]
    text = run_cmhash(["explain", "--no-config", str(VMCLUSTER)]).out
    assert "VMCluster/example-persistent (vmselect)  (" in text
    old = tmp_path / "old.yaml"
    new = tmp_path / "new.yaml"
    old.write_text(VMCLUSTER.read_text())
    new.write_text(VMCLUSTER.read_text().replace("not a real token", "another token"))
    rep = run_cmhash(["report", "--no-config", "--format", "json", str(old), str(new)])
    restarts = json.loads(rep.out)["restart"]
    assert [(w["kind"], w.get("component")) for w in restarts] == [("VMCluster", "vminsert")]
    schema = json.loads((ROOT / "src/cmhash/schemas/report.schema.json").read_text())
    jsonschema.validate(json.loads(rep.out), schema)
    txt = run_cmhash(["report", "--no-config", str(old), str(new)]).out
    assert "VMCluster/example-persistent (vminsert)" in txt
    assert "(vmselect)" not in txt and "(vmstorage)" not in txt


def test_a_user_profile_replaces_every_group_of_the_kind(tmp_path: Path) -> None:
    config = tmp_path / ".cmhash.yaml"
    config.write_text(
        "workloadKinds:\n  - apiVersion: operator.victoriametrics.com/v1beta1\n"
        "    kind: VMCluster\n    annotationPath: spec.vmselect.podMetadata.annotations\n"
        "    podSpecPath: spec.vmselect\n    references:\n"
        "      - {path: spec.vmselect.configMaps, kind: ConfigMap, form: names}\n"
    )
    res = run_cmhash(["--config", str(config), str(VMCLUSTER)])
    assert res.code == 0, res.stderr
    assert res.out.count("checksum/config") == 1
    assert "  vmselect:\n    podMetadata:\n      annotations:\n        checksum/config" in res.out


def test_the_docs_table_lists_every_built_in_profile() -> None:
    """docs/concepts/operators.md's table names each profile's kind, its pod group and
    every field of each reference site down to its first list (``template``,
    ``connectContainer`` and ``env`` for ``spec.template.connectContainer.env[*]...``, in
    one row; the table is written by hand)."""
    page = (ROOT / "docs" / "concepts" / "operators.md").read_text()
    section = page.split("## Built-in profiles", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| ")]
    for kind in OPERATOR_KINDS:
        rows = [line for line in table if kind.kind in line.split("|")[1]]
        assert rows, kind.kind
        if kind.component:
            assert any(f"`{kind.component}`" in r for r in rows), kind.component
        for site in kind.sites:
            fields = [p for p in site.path[1:] if p != kind.component]
            named = fields[: fields.index("*")] if "*" in fields else fields
            assert any(all(f in r for f in named) for r in rows), (kind.kind, site.path)


def test_a_user_profile_with_pod_groups(tmp_path: Path) -> None:
    """workloadKinds rows with a component: one workload per group, each with its own
    checksum at its own annotationPath; a second row for a group, or a row without a
    component beside them, is refused at its kind."""
    config = tmp_path / ".cmhash.yaml"
    rows = (
        "workloadKinds:\n"
        "  - apiVersion: example.com/v1\n    kind: Pair\n    component: reader\n"
        "    annotationPath: spec.reader.pod.annotations\n    podSpecPath: spec.reader\n"
        "    references: [{path: spec.reader.configs, kind: ConfigMap, form: names}]\n"
        "  - apiVersion: example.com/v1\n    kind: Pair\n    component: writer\n"
        "    annotationPath: spec.writer.pod.annotations\n    podSpecPath: spec.writer\n"
        "    references: [{path: spec.writer.configs, kind: ConfigMap, form: names}]\n"
    )
    config.write_text(rows)
    doc = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r}\ndata: {a: '1'}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\ndata: {a: '2'}\n---\n"
        "apiVersion: example.com/v1\nkind: Pair\nmetadata: {name: p}\nspec:\n"
        "  reader:\n    configs: [r]\n  writer:\n    configs: [w]\n"
    )
    res = run_cmhash(["--config", str(config), "-"], stdin=doc.encode())
    assert res.code == 0, res.stderr
    sums = dict(
        re.findall(
            r'  (\w+):\n    pod:\n      annotations:\n        checksum/config: "(\w+)"', res.out
        )
    )
    assert set(sums) == {"reader", "writer"} and sums["reader"] != sums["writer"]
    changed = run_cmhash(["--config", str(config), "-"], stdin=doc.replace("'2'", "'3'").encode())
    assert sums["reader"] in changed.out and sums["writer"] not in changed.out
    text = run_cmhash(["explain", "--config", str(config), "-"], stdin=doc.encode()).out
    assert "Pair/p (reader)" in text and "Pair/p (writer)" in text
    for extra in ("    component: reader\n", ""):
        config.write_text(
            rows
            + "  - apiVersion: example.com/v1\n    kind: Pair\n"
            + extra
            + "    annotationPath: spec.x.pod.annotations\n"
        )
        bad = run_cmhash(["--config", str(config), "-"], stdin=doc.encode())
        assert bad.code == 2 and f"{config}:15:11:" in bad.stderr, bad.stderr
        assert "one row per pod group" in bad.stderr


OTEL = """apiVersion: v1
kind: ConfigMap
metadata: {name: extra}
data: {a: "1"}
---
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata: {name: otel}
spec:
  mode: MODE
  envFrom: [{configMapRef: {name: extra}}]
  config: {}
"""


@pytest.mark.parametrize("parser", ["fast", "exact"])
def test_a_sidecar_collector_is_not_annotated(parser: str) -> None:
    """A sidecar-mode OpenTelemetryCollector runs no pods of its own: the webhook injects
    it into other pods at their creation, and a change to it restarts none of them. It
    got a checksum in spec.podAnnotations that rolled nothing, and explain said it
    "restarts through the OpenTelemetry Operator"; now it is left alone, and says why.
    The other modes keep theirs."""
    sidecar = OTEL.replace("MODE", "sidecar").encode()
    res = run_cmhash(["--no-config", "--parser", parser, "-"], stdin=sidecar)
    assert res.code == 0 and res.stdout == sidecar, res.stderr
    why = run_cmhash(["explain", "--no-config", "--format", "json", "-"], stdin=sidecar)
    (otel,) = json.loads(why.out)["workloads"]
    assert otel["status"] == "skipped" or otel["checksum"] is None, otel
    assert "sidecar-mode collector runs no pods of its own" in otel["skipReason"]
    for mode in ("deployment", "daemonset", "statefulset"):
        res = run_cmhash(["--no-config", "-"], stdin=OTEL.replace("MODE", mode).encode())
        assert "  podAnnotations:\n    checksum/config: " in res.out, mode
