"""Secret sources (SealedSecret, ExternalSecret, SecretProviderClass, and kinds from the
config file): each stands for what it produces; its content fields roll the users, its
metadata never does; a Secret in the input wins over a source of the same name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import run_cmhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmhash.parse.k8syaml import resolves_to_non_string

SEALED = """apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: db
  labels: {team: a}
spec:
  encryptedData:
    password: AgBy3i4OJSWK
    username: AgCkR0J8QO3v
  template:
    type: kubernetes.io/basic-auth
    metadata: {labels: {x: y}}
"""
EXTERNAL = """apiVersion: external-secrets.io/{version}
kind: ExternalSecret
metadata:
  name: api-es
spec:
  refreshInterval: 1h
  secretStoreRef: {{name: vault, kind: ClusterSecretStore}}
  target: {{name: api-token}}
  data:
  - secretKey: token
    remoteRef: {{key: api/token}}
"""
SPC = """apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: aws
spec:
  provider: aws
  parameters:
    objects: "- objectName: db"
  secretObjects:
  - secretName: synced
    type: Opaque
    data: [{objectName: db, key: password}]
"""
DEP = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
      - name: c
        image: i
{spec}"""
ENV = "        env:\n        - name: V\n          valueFrom: {{secretKeyRef: {{name: {n}, key: {k}}}}}\n"
CSI = (
    "      volumes:\n      - name: s\n        csi:\n          driver: secrets-store.csi.k8s.io\n"
    "          volumeAttributes: {{secretProviderClass: {n}}}\n"
)


def stream(*docs: str) -> bytes:
    return "---\n".join(docs).encode()


def value(data: bytes, *args: str) -> str | None:
    res = run_cmhash(["--no-config", "-q", *args, "-"], stdin=data)
    assert res.code == 0, res.stderr
    m = re.search(r'checksum/config: "([0-9a-f]{64})"', res.out)
    return m.group(1) if m else None


def findings(data: bytes, *args: str) -> str:
    res = run_cmhash(["--no-config", *args, "-"], stdin=data)
    assert res.code == 0, res.stderr
    return res.stderr


def uses_db(source: str = SEALED, key: str = "password") -> bytes:
    return stream(source, DEP.format(name="app", spec=ENV.format(n="db", k=key)))


def test_a_sealed_secret_stands_for_its_secret() -> None:
    before = value(uses_db())
    assert before is not None  # without sources: the Secret is missing, nothing to hash
    assert "missing-reference" not in findings(uses_db())
    assert "missing-key" not in findings(uses_db(key="not-sealed"))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("password: AgBy3i4OJSWK", "password: AgBy3i4OJSWX"),  # re-sealed
        ("    username: AgCkR0J8QO3v\n", ""),  # a key removed
        ("type: kubernetes.io/basic-auth", "type: Opaque"),
        ("    metadata: {labels: {x: y}}\n", "    metadata: {}\n    data: {url: x}\n"),
    ],
)
def test_sealed_content_rolls_the_users(old: str, new: str) -> None:
    """Any change of encryptedData, template.type or template.data rolls every user,
    whichever key it reads (the values are sealed: cmhash cannot tell keys apart)."""
    assert old in SEALED
    assert value(uses_db(SEALED.replace(old, new))) != value(uses_db())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("labels: {team: a}", "labels: {team: b}"),
        ("  name: db\n", "  name: db\n  annotations: {note: x}\n"),
        ("metadata: {labels: {x: y}}", "metadata: {name: other, labels: {x: z}}"),
        # quoting, flow vs block style and key order are not content
        ("password: AgBy3i4OJSWK", "password: 'AgBy3i4OJSWK'"),
        (
            "    password: AgBy3i4OJSWK\n    username: AgCkR0J8QO3v\n",
            "    username: AgCkR0J8QO3v\n    password: AgBy3i4OJSWK\n",
        ),
        (
            "    password: AgBy3i4OJSWK\n    username: AgCkR0J8QO3v\n",
            "    {password: AgBy3i4OJSWK, username: AgCkR0J8QO3v}\n",
        ),
    ],
)
def test_sealed_metadata_and_formatting_roll_nothing(old: str, new: str) -> None:
    assert old in SEALED
    assert value(uses_db(SEALED.replace(old, new))) == value(uses_db())


def test_a_plain_number_is_not_the_same_content_as_a_quoted_string() -> None:
    """Kubernetes decodes ``1`` and ``"1"`` differently; so does the hash."""
    plain = SEALED.replace("password: AgBy3i4OJSWK", "password: 1")
    quoted = SEALED.replace("password: AgBy3i4OJSWK", 'password: "1"')
    assert value(uses_db(plain)) != value(uses_db(quoted))


def test_the_controller_names_the_secret_after_the_sealed_secret() -> None:
    """spec.template.metadata.name is overwritten by the controller: a reference to it
    finds nothing."""
    source = SEALED.replace("metadata: {labels: {x: y}}", "metadata: {name: other}")
    data = stream(source, DEP.format(name="app", spec=ENV.format(n="other", k="password")))
    assert value(data) is None
    assert "Secret 'other', which is not in the input" in findings(data)


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_external_secret_produces_target_name(version: str) -> None:
    es = EXTERNAL.format(version=version)
    data = stream(es, DEP.format(name="app", spec=ENV.format(n="api-token", k="token")))
    base = value(data)
    assert base is not None
    for old, new in [
        ("remoteRef: {key: api/token}", "remoteRef: {key: api/other}"),
        ("name: vault, kind", "name: vault2, kind"),
        ("target: {name: api-token}", "target: {name: api-token, template: {type: Opaque}}"),
        ("  data:\n", "  dataFrom: [{extract: {key: all}}]\n  data:\n"),
    ]:
        assert value(data.replace(old.encode(), new.encode())) != base, old
    # how often the controller refreshes is not what the Secret holds
    assert value(data.replace(b"refreshInterval: 1h", b"refreshInterval: 5m")) == base


def test_external_secret_without_target_name_produces_its_own_name() -> None:
    es = EXTERNAL.format(version="v1").replace("  target: {name: api-token}\n", "")
    data = stream(es, DEP.format(name="app", spec=ENV.format(n="api-es", k="token")))
    assert value(data) is not None


def test_external_secret_creation_policy_none_produces_nothing() -> None:
    es = EXTERNAL.format(version="v1").replace(
        "{name: api-token}", "{name: api-token, creationPolicy: None}"
    )
    data = stream(es, DEP.format(name="app", spec=ENV.format(n="api-token", k="token")))
    assert value(data) is None
    assert "missing-reference" in findings(data)


def test_secret_provider_class_rolls_csi_and_synced_users() -> None:
    mount = stream(SPC, DEP.format(name="mount", spec=CSI.format(n="aws")))
    synced = stream(SPC, DEP.format(name="env", spec=ENV.format(n="synced", k="password")))
    for data in (mount, synced):
        base = value(data)
        assert base is not None
        changed = data.replace(b'"- objectName: db"', b'"- objectName: db2"')
        assert value(changed) != base
        assert value(data.replace(b"  name: aws\n", b"  name: aws\n  labels: {a: b}\n")) == base


def test_a_secret_in_the_input_wins_over_its_source_in_any_order() -> None:
    es = EXTERNAL.format(version="v1")
    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token\nstringData:\n  token: t\n"
    dep = DEP.format(name="app", spec=ENV.format(n="api-token", k="token"))
    alone = value(stream(secret, dep))
    for order in ((es, secret, dep), (secret, es, dep), (dep, secret, es)):
        data = stream(*order)
        assert value(data) == alone
        assert "[shadowed-source]" in findings(data)


def test_two_sources_of_one_name_are_a_duplicate() -> None:
    es = EXTERNAL.format(version="v1")
    other = es.replace("name: api-es", "name: api-es-2").replace("api/token", "api/t2")
    dep = DEP.format(name="app", spec=ENV.format(n="api-token", k="token"))
    data = stream(es, other, dep)
    assert "[duplicate-object]" in findings(data)
    assert value(data) == value(stream(other, dep))  # the later one is used


def test_opted_out_source() -> None:
    source = SEALED.replace("  labels: {team: a}\n", '  annotations: {cmhash.io/skip: "true"}\n')
    assert value(uses_db(source)) is None


def test_unread_versions_and_lookalike_groups_are_not_sources() -> None:
    for api in ("external-secrets.io/v1alpha1", "example.com/v1"):
        es = EXTERNAL.format(version="v1").replace("external-secrets.io/v1", api)
        data = stream(es, DEP.format(name="app", spec=ENV.format(n="api-token", k="token")))
        assert value(data) is None, api


def test_explain_names_the_source(tmp_path: Path) -> None:
    from test_declared import valid_explain  # the schema check

    data = uses_db()
    res = run_cmhash(["explain", "--no-config", "--format", "json", "-"], stdin=data)
    assert res.code == 0, res.stderr
    doc = valid_explain(res.out)
    (ref,) = doc["workloads"][0]["references"]
    assert ref["producedBy"] == "SealedSecret/db"
    (cfg,) = doc["configs"]
    assert cfg["producedBy"] == "SealedSecret/db"
    assert cfg["keys"] == ["spec.encryptedData", "spec.template.type"]
    text = run_cmhash(["explain", "--no-config", "-"], stdin=data).out
    assert "in-stream (produced by SealedSecret/db)" in text


def test_report_resealing_restarts_its_users(tmp_path: Path) -> None:
    old = uses_db()
    (tmp_path / "old.yaml").write_bytes(old)
    (tmp_path / "new.yaml").write_bytes(old.replace(b"AgBy3i4OJSWK", b"AgBy3i4OJSWX"))
    res = run_cmhash(
        ["report", "--no-config", "--format", "json", "old.yaml", "new.yaml"], cwd=tmp_path
    )
    assert res.code == 0, res.stderr
    data = json.loads(res.out)
    (w,) = data["restart"]
    assert w["causes"] == [
        {
            "type": "config",
            "kind": "Secret",
            "name": "db",
            "change": "changed",
            "keys": ["spec.encryptedData"],
        }
    ]


CONFIG = """secretSources:
- apiVersion: secrets.hashicorp.com/v1beta1
  kind: VaultStaticSecret
  name: spec.destination.name
  content: [spec.path]
"""
VAULT = """apiVersion: secrets.hashicorp.com/{version}
kind: VaultStaticSecret
metadata:
  name: v
spec:
  path: shop/db
  refreshAfter: 30s
  destination: {{name: db}}
"""


def test_sources_from_the_config_file(tmp_path: Path) -> None:
    (tmp_path / ".cmhash.yaml").write_text(CONFIG)
    dep = DEP.format(name="app", spec=ENV.format(n="db", k="password"))

    def run(vault: str) -> str | None:
        res = run_cmhash(["-q", "-"], stdin=stream(vault, dep), cwd=tmp_path)
        assert res.code == 0, res.stderr
        m = re.search(r'checksum/config: "([0-9a-f]{64})"', res.out)
        return m.group(1) if m else None

    v1beta1 = VAULT.format(version="v1beta1")
    base = run(v1beta1)
    assert base is not None
    assert run(v1beta1.replace("shop/db", "shop/db2")) != base
    assert run(v1beta1.replace("30s", "1m")) == base  # not a content field
    assert run(VAULT.format(version="v1")) is None  # only the version the row names


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ("secretSources:\n- apiVersion: a.io/v1\n  kind: X\n", "secretSources/0"),
        ("secretSources:\n- group: a.io\n  kind: X\n  content: []\n", "secretSources/0/content"),
        (
            "secretSources:\n- group: a.io\n  kind: X\n  content: [spec..x]\n",
            "secretSources/0/content/0",
        ),
        (
            "secretSources:\n- group: a.io\n  kind: X\n  produces: Pod\n  content: [spec]\n",
            "secretSources/0/produces",
        ),
    ],
)
def test_bad_source_config_is_refused_with_its_position(
    tmp_path: Path, config: str, where: str
) -> None:
    (tmp_path / ".cmhash.yaml").write_text(config)
    res = run_cmhash(["-"], stdin=uses_db(), cwd=tmp_path)
    assert res.code == 2
    assert f"invalid configuration at {where}" in res.stderr
    assert re.match(r".*\.cmhash\.yaml:\d+:\d+: ", res.stderr)


def test_fast_and_exact_agree_on_sources() -> None:
    data = stream(
        SEALED,
        EXTERNAL.format(version="v1"),
        SPC,
        DEP.format(name="app", spec=ENV.format(n="db", k="password") + CSI.format(n="aws")),
    )
    fast = run_cmhash(["--no-config", "--parser", "fast", "-"], stdin=data)
    exact = run_cmhash(["--no-config", "--parser", "exact", "-"], stdin=data)
    assert fast.code == exact.code == 0
    assert fast.out == exact.out and fast.out != data


# ------------------------------------------------------------------ properties


# values that are strings however they are quoted (a plain ``Y`` is a boolean to
# Kubernetes, and rightly hashes unlike a quoted one: see the test above)
_word = st.text("abcdefgXYZ019+/=", min_size=1, max_size=8).filter(
    lambda s: s[0].isalpha() and not resolves_to_non_string(s)
)


def _sealed(data: dict[str, str], labels: dict[str, str], flow: bool, quote: str) -> str:
    lines = [
        "apiVersion: bitnami.com/v1alpha1",
        "kind: SealedSecret",
        "metadata:",
        "  name: db",
    ]
    if labels:
        lines.append("  labels: {" + ", ".join(f"{k}: {v}" for k, v in labels.items()) + "}")
    lines.append("spec:")
    if flow:
        body = ", ".join(f"{k}: {quote}{v}{quote}" for k, v in data.items())
        lines.append("  encryptedData: {" + body + "}")
    else:
        lines.append("  encryptedData:")
        lines.extend(f"    {k}: {quote}{v}{quote}" for k, v in data.items())
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.dictionaries(st.sampled_from(["a", "b", "c"]), _word, min_size=1),
    labels=st.dictionaries(st.sampled_from(["team", "tier"]), _word),
    labels2=st.dictionaries(st.sampled_from(["team", "tier"]), _word),
    flow=st.booleans(),
    flow2=st.booleans(),
    quote=st.sampled_from(["", "'", '"']),
    reorder=st.booleans(),
    changed=st.sampled_from(["a", "b", "c"]),
    parser=st.sampled_from(["fast", "exact"]),
)
def test_source_value_follows_content_only(
    data: dict[str, str],
    labels: dict[str, str],
    labels2: dict[str, str],
    flow: bool,
    flow2: bool,
    quote: str,
    reorder: bool,
    changed: str,
    parser: str,
) -> None:
    """Metadata, style, quoting and key order never move the value; any content change
    does; the output is idempotent."""
    dep = DEP.format(name="app", spec=ENV.format(n="db", k="a"))
    base_stream = stream(_sealed(data, labels, flow, ""), dep)
    base = value(base_stream, "--parser", parser)
    assert base is not None
    shuffled = dict(reversed(list(data.items()))) if reorder else data
    assert value(stream(_sealed(shuffled, labels2, flow2, quote), dep), "--parser", parser) == base
    moved = dict(data)
    moved[changed] = data.get(changed, "Q") + "Z"
    assert value(stream(_sealed(moved, labels, flow, ""), dep), "--parser", parser) != base
    out = run_cmhash(["--no-config", "-q", "--parser", parser, "-"], stdin=base_stream).out
    again = run_cmhash(["--no-config", "-q", "--parser", parser, "-"], stdin=out.encode()).out
    assert again == out


def test_review_regressions_for_sources(tmp_path: Path) -> None:
    # an empty target name means the default (the ExternalSecret's own name)
    es = EXTERNAL.format(version="v1").replace("target: {name: api-token}", 'target: {name: ""}')
    data = stream(es, DEP.format(name="app", spec=ENV.format(n="api-es", k="token")))
    assert value(data) is not None
    # true, True and yes are one boolean to Kubernetes
    base = EXTERNAL.format(version="v1").replace(
        "  data:\n", "  x: {decodingStrategy: None, f: true}\n  data:\n"
    )
    dep = DEP.format(name="app", spec=ENV.format(n="api-token", k="token"))
    values = {
        value(stream(base.replace("f: true", f"f: {spelling}"), dep))
        for spelling in ("true", "True", "yes")
    }
    assert len(values) == 1
    # a '*' content path of a configured source reads every item
    (tmp_path / ".cmhash.yaml").write_text(
        "secretSources:\n- {apiVersion: secrets.hashicorp.com/v1beta1, kind: VaultStaticSecret,"
        " name: spec.destination.name, content: [spec.paths.*.path]}\n"
    )
    vault = (
        "apiVersion: secrets.hashicorp.com/v1beta1\nkind: VaultStaticSecret\nmetadata: {name: v}\n"
        "spec:\n  destination: {name: db}\n  paths: [{path: secret/a}]\n"
    )
    use = DEP.format(name="app", spec=ENV.format(n="db", k="password"))

    def run_in(text: str) -> bytes:
        res = run_cmhash(["-q", "-"], stdin=stream(text, use), cwd=tmp_path)
        assert res.code == 0, res.stderr
        return res.stdout

    assert run_in(vault) != run_in(vault.replace("secret/a", "secret/b"))


# ExternalSecret rendered from templateFrom objects (external-secrets apis/externalsecrets/
# v1/externalsecret_types.go TemplateFrom/TemplateRef; the docs' "templateFrom" example)
TEMPLATED = """apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: grafana
spec:
  secretStoreRef: {name: vault, kind: ClusterSecretStore}
  target:
    name: grafana-config
    template:
      engineVersion: v2
      templateFrom:
      - configMap:
          name: grafana-config-tpl
          items:
          - key: config.yaml
      - secret:
          name: grafana-extra
          items:
          - key: extra
            templateAs: KeysAndValues
      - literal: "x: {{ .user }}"
  data:
  - secretKey: user
    remoteRef: {key: grafana/user}
"""
TPL_CM = """apiVersion: v1
kind: ConfigMap
metadata:
  name: grafana-config-tpl
data:
  config.yaml: "url: {{ .uri }}"
  unrelated: "1"
"""
TPL_SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: grafana-extra
stringData:
  extra: "a: b"
"""


def templated() -> bytes:
    return stream(
        TEMPLATED,
        TPL_CM,
        TPL_SECRET,
        DEP.format(name="grafana", spec=ENV.format(n="grafana-config", k="config.yaml")),
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'config.yaml: "url: {{ .uri }}"', b'config.yaml: "url: {{ .url }}"'),
        (b'extra: "a: b"', b'extra: "a: c"'),  # a templateFrom Secret
        (b'literal: "x: {{ .user }}"', b'literal: "y: {{ .user }}"'),
    ],
)
def test_external_secret_template_from_objects_roll_the_users(old: bytes, new: bytes) -> None:
    data = templated()
    base = value(data)
    assert base is not None
    assert value(data.replace(old, new)) != base


def test_external_secret_template_from_only_the_listed_keys() -> None:
    data = templated()
    assert value(data.replace(b'unrelated: "1"', b'unrelated: "2"')) == value(data)


def test_external_secret_template_from_without_items_is_the_whole_object() -> None:
    data = templated().replace(b"          items:\n          - key: config.yaml\n", b"")
    base = value(data)
    assert value(data.replace(b'unrelated: "1"', b'unrelated: "2"')) != base


def test_external_secret_template_from_absent_objects_add_nothing() -> None:
    data = stream(TEMPLATED, DEP.format(name="grafana", spec=ENV.format(n="grafana-config", k="x")))
    assert value(data) is not None
    assert "missing-reference" not in findings(data)


def test_sealed_secret_deprecated_spec_data_is_content() -> None:
    """sealed-secrets' v1alpha1 SealedSecretSpec.Data: "deprecated", still unsealed by the
    controller (pkg/apis/sealedsecrets/v1alpha1/sealedsecret_types.go)."""
    old = SEALED.replace(
        "  encryptedData:\n    password: AgBy3i4OJSWK\n    username: AgCkR0J8QO3v\n",
        "  data: AgBy3i4OJSWKAgCkR0J8QO3v\n",
    )
    base = value(uses_db(old))
    assert base is not None
    assert (
        value(uses_db(old.replace("AgBy3i4OJSWKAgCkR0J8QO3v", "AgBy3i4OJSWKAgCkR0J8QO3w"))) != base
    )


def test_exclude_secrets_leaves_secret_provider_classes_out() -> None:
    mount = stream(SPC, DEP.format(name="mount", spec=CSI.format(n="aws")))
    assert value(mount) is not None
    assert value(mount, "--exclude-secrets") is None
    res = run_cmhash(["explain", "--no-config", "--exclude-secrets", "-"], stdin=mount)
    assert "SecretProviderClasses are left out of checksums (--exclude-secrets)" in res.out, res.out


# Vault Secrets Operator (hashicorp/vault-secrets-operator config/samples/
# secrets_v1beta1_vaultstaticsecret.yaml, api/v1beta1/vaultstaticsecret_types.go)
VAULT_STATIC = """apiVersion: secrets.hashicorp.com/v1beta1
kind: VaultStaticSecret
metadata:
  name: vaultstaticsecret-sample
  labels: {team: a}
spec:
  vaultAuthRef: vaultauth-sample
  mount: kvv2
  type: kv-v2
  path: secret
  refreshAfter: 5s
  destination:
    name: db
    create: true
    labels: {x: y}
  rolloutRestartTargets:
  - kind: Deployment
    name: restarted
"""
BARE = DEP.format(name="restarted", spec="")


@pytest.mark.parametrize(
    ("old", "new", "rolls"),
    [
        ("path: secret", "path: secret2", True),
        ("mount: kvv2", "mount: kv", True),
        ("type: kv-v2", "type: kv-v1", True),
        ("    create: true\n", "    create: true\n    type: kubernetes.io/tls\n", True),
        ("    create: true\n", "    create: true\n    transformation: {excludeRaw: true}\n", True),
        ("vaultAuthRef: vaultauth-sample", "vaultAuthRef: other", True),
        # metadata, the Secret's metadata, refresh, the restart targets: no content
        ("labels: {team: a}", "labels: {team: b}", False),
        ("labels: {x: y}", "labels: {x: z}", False),
        ("refreshAfter: 5s", "refreshAfter: 1h", False),
        ("    name: restarted\n", "    name: restarted\n  - {kind: StatefulSet, name: s}\n", False),
    ],
)
def test_vault_static_secret_content_rolls_the_users(old: str, new: str, rolls: bool) -> None:
    assert old in VAULT_STATIC
    before = value(uses_db(VAULT_STATIC))
    assert before is not None and "missing-reference" not in findings(uses_db(VAULT_STATIC))
    assert (value(uses_db(VAULT_STATIC.replace(old, new))) != before) is rolls


def test_vault_restart_targets_are_its_users_too() -> None:
    """A workload VSO restarts (rolloutRestartTargets) follows the Secret as a declared
    dependency, pod-spec reference or not; explain says VSO restarts it too; with
    hmacSecretData: false VSO ignores its targets, and so does cmhash."""
    before = value(stream(VAULT_STATIC, BARE))
    assert before is not None
    assert value(stream(VAULT_STATIC.replace("path: secret", "path: other"), BARE)) != before
    res = run_cmhash(["explain", "--no-config", "-"], stdin=stream(VAULT_STATIC, BARE))
    assert (
        "Secret/db via declared (spec.rolloutRestartTargets of VaultStaticSecret/"
        "vaultstaticsecret-sample: Vault Secrets Operator restarts it too)" in res.out
    )
    off = VAULT_STATIC.replace(
        "  rolloutRestartTargets:", "  hmacSecretData: false\n  rolloutRestartTargets:"
    )
    assert value(stream(off, BARE)) is None
    other_kind = VAULT_STATIC.replace("kind: Deployment\n    name", "kind: DaemonSet\n    name")
    assert value(stream(other_kind, BARE)) is None
