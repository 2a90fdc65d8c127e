"""--versioned on secret sources: an ExternalSecret and its produced Secret, a
SecretProviderClass and its synced Secrets, a namespace-wide SealedSecret get the
content suffix and references follow; a strict-scope SealedSecret and an ExternalSecret
that does not own its Secret keep their names with a note. Their history under
--keep-versions. (The golden cases tests/cases/versioned-source-* hold the outputs.)"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from conftest import TESTS, run_cmhash
from manifests import load_objects

# external-secrets.io's own example (docs/snippets/basic-external-secret.yaml, Apache-2.0),
# its store version bumped per render
ES = """\
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: db
  namespace: shop
spec:
  refreshInterval: 1h
  secretStoreRef:
    name: vault-backend
    kind: SecretStore
  data:
  - secretKey: password
    remoteRef:
      key: shop/db
      property: password
      version: "{v}"
"""
TOKEN = (  # a plain Secret beside it: its value must never show
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n  namespace: shop\n"
    "type: Opaque\ndata:\n  token: {pw}\n"
)
DEP = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: shop
spec:
  template:
    spec:
      containers:
      - name: c
        image: i
        env:
        - name: PW
          valueFrom: {secretKeyRef: {name: db, key: password}}
        envFrom: [{secretRef: {name: token}}]
"""
REPORT = ("report", "--no-config", "--versioned", "--format")
PASSWORDS = {1: "czNjcjN0LW9uZQ==", 2: "czNjcjN0LXR3bw==", 3: "czNjcjN0LXRocmVl"}


def render(n: int) -> bytes:
    return "---\n".join((ES.format(v=n), TOKEN.format(pw=PASSWORDS[n]), DEP)).encode()


def cmhash(args: list[str], data: bytes, code: int = 0) -> tuple[bytes, str]:
    res = run_cmhash(["--no-config", *args, "-"], stdin=data)
    assert res.code == code, res.stderr
    for pw in PASSWORDS.values():  # never a Secret's value in a message
        assert pw not in res.stderr
    return res.stdout, res.stderr


def run(tmp: Path, data: bytes, prev: bytes, keep: int = 2) -> bytes:
    (tmp / "prev.yaml").write_bytes(prev)
    out, _ = cmhash(
        ["--versioned", "--keep-versions", str(keep), "--previous", str(tmp / "prev.yaml")], data
    )
    return out


def externals(out: bytes) -> dict[str, str]:
    """ExternalSecret name -> the Secret it produces."""
    return {
        o["metadata"]["name"]: o["spec"]["target"]["name"]
        for o in load_objects(out)
        if o["kind"] == "ExternalSecret"
    }


def used(out: bytes) -> str:
    """The Secret the workload reads its password from."""
    (dep,) = [o for o in load_objects(out) if o["kind"] == "Deployment"]
    env = dep["spec"]["template"]["spec"]["containers"][0]["env"][0]
    return str(env["valueFrom"]["secretKeyRef"]["name"])


def documents(out: bytes) -> dict[str, str]:
    """ExternalSecret name -> its document's text after any mark."""
    docs = {}
    for doc in re.split(r"(?m)^---\n", out.decode()):
        doc = re.sub(r"\A# cmhash\.io/kept-version: .*\n", "", doc)
        m = re.search(r"(?m)^  name: (\S+)$", doc)
        if m and "kind: ExternalSecret" in doc:
            docs[m.group(1)] = doc
    return docs


def test_the_producer_and_its_secret_are_renamed_and_references_follow() -> None:
    out, _ = cmhash(["--versioned"], render(1))
    ((es, target),) = externals(out).items()
    suffix = es.rpartition("-")[2]
    assert es == f"db-{suffix}" and target == es  # target.name defaults to the own name
    assert used(out) == target
    # an inserted target.name, in the document's indentation
    assert '  target:\n    name: "' + target + '"\n' in out.decode()
    # idempotent, and both parsers agree
    again, _ = cmhash(["--versioned"], out)
    assert again == out
    exact, _ = cmhash(["--versioned", "--parser", "exact"], render(1))
    assert exact == out
    _, err = cmhash(["--versioned", "--check"], render(1), code=1)
    assert "would rename" in err and "Secret db -> db-…" in err  # its suffix is not shown
    assert target not in err


def test_a_sources_suffix_does_not_depend_on_the_secret_key() -> None:
    """A source's fields hold no Secret value (ExternalSecret refs): the name of what it
    produces is the same in a keyed run (a lock or report step) and an unkeyed one (the
    deploy); a plain Secret's suffix stays keyed, as the security page says."""
    plain = externals(cmhash(["--versioned"], render(1))[0])
    res = run_cmhash(
        ["--no-config", "--versioned", "--secret-key-env", "K", "-"],
        stdin=render(1),
        env={"K": "a-key"},
    )
    assert res.code == 0, res.stderr
    assert externals(res.stdout) == plain
    token = re.compile(r"^  name: (token-\S+)$", re.M)
    unkeyed = token.findall(cmhash(["--versioned"], render(1))[0].decode())
    assert unkeyed and token.findall(res.stdout.decode()) != unkeyed


def test_a_store_version_change_is_a_new_name_and_metadata_is_not() -> None:
    one = externals(cmhash(["--versioned"], render(1))[0])
    two = externals(cmhash(["--versioned"], render(2))[0])
    assert one != two
    labelled = render(1).replace(
        b"  namespace: shop\nspec:\n  refresh",
        b"  namespace: shop\n  labels: {team: a}\nspec:\n  refresh",
    )
    assert externals(cmhash(["--versioned"], labelled)[0]) == one


@pytest.mark.parametrize(
    ("spec", "written"),
    [
        pytest.param(  # a target without a name: the name is added to it
            "spec:\n  target:\n    creationPolicy: Owner\n  data: []\n",
            '  target:\n    name: "{n}"\n    creationPolicy: Owner\n',
            id="target-without-name",
        ),
        pytest.param(
            "spec:\n  target:\n  data: []\n", '  target:\n    name: "{n}"\n', id="target-null"
        ),
        pytest.param(
            "spec: {target: {creationPolicy: Orphan}, data: []}\n",
            'target: {creationPolicy: Orphan, "name": "{n}"}',
            id="flow",
        ),
        pytest.param(
            "spec:\n    data: []\n", '    target:\n        name: "{n}"\n    data', id="four-spaces"
        ),
        pytest.param(
            "spec:\n  target:\n    name: 'db-secret'\n",
            "    name: '{n}'\n",
            id="written-name-keeps-its-quotes",
        ),
    ],
)
def test_target_name_is_spliced_in_the_documents_style(spec: str, written: str) -> None:
    doc = (
        "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n"
        "  name: db\n" + spec
    )
    dep = DEP.replace("  namespace: shop\n", "").replace(
        "envFrom: [{secretRef: {name: token}}]\n", "envFrom: []\n"
    )
    if "db-secret" in spec:
        dep = dep.replace("name: db,", "name: db-secret,")
    data = (doc + "---\n" + dep).encode()
    out, _ = cmhash(["--versioned"], data)
    target = used(out)
    assert target != "db" and target != "db-secret"
    assert written.replace("{n}", target) in out.decode()
    assert externals(out) == {f"db-{target.rpartition('-')[2]}": target}
    assert cmhash(["--versioned"], out)[0] == out
    assert cmhash(["--versioned", "--parser", "exact"], data)[0] == out


@pytest.mark.parametrize("policy", ["Merge", "None"])
def test_a_secret_the_external_secret_does_not_own_keeps_its_name(policy: str) -> None:
    data = render(1).replace(
        b"  refreshInterval: 1h\n",
        f"  refreshInterval: 1h\n  target:\n    creationPolicy: {policy}\n".encode(),
    )
    out, err = cmhash(["--versioned"], data)
    assert used(out) == "db" and "name: db\n" in out.decode()
    if policy == "Merge":  # None writes no Secret at all: the reference is to another one
        assert "is not versioned" in err and "creationPolicy: Merge" in err
        assert "[not-versioned]" in err


def test_a_strict_sealed_secret_is_never_renamed() -> None:
    data = (
        "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: db\n"
        "  namespace: shop\nspec:\n  encryptedData:\n    password: AgBy3i4OJSWK+PiTySYZZA==\n"
        "---\n" + DEP.replace("envFrom: [{secretRef: {name: token}}]\n", "envFrom: []\n")
    ).encode()
    out, err = cmhash(["--versioned"], data)
    assert used(out) == "db" and "  name: db\n" in out.decode()
    assert "strict scope" in err and "re-sealing" in err and "[not-versioned]" in err
    assert "AgBy3i4OJSWK" not in err
    wide = data.replace(
        b"  namespace: shop\nspec:",
        b'  namespace: shop\n  annotations:\n    sealedsecrets.bitnami.com/namespace-wide: "true"\nspec:',
    )
    out, err = cmhash(["--versioned"], wide)
    assert used(out).startswith("db-") and f"  name: {used(out)}\n" in out.decode()
    assert "not-versioned" not in err


def test_a_comment_naming_the_old_name_is_no_reference() -> None:
    data = b"# the Secret: db, produced by the ExternalSecret below\n" + render(1)
    _, err = cmhash(["--versioned"], data)
    assert "unknown-reference" not in err


def test_three_renders_keep_a_window_of_external_secrets(tmp_path: Path) -> None:
    o1 = run(tmp_path, render(1), b"")
    v1 = used(o1)
    o2 = run(tmp_path, render(2), o1)
    v2 = used(o2)
    assert v1 != v2
    # the old producer stays for old pods, byte for byte from PREV, marked
    assert sorted(externals(o2).values()) == sorted([v1, v2])
    es1 = f"db-{v1.rpartition('-')[2]}"
    assert documents(o2)[es1] == documents(o1)[es1]
    assert re.findall(r"(?m)^# cmhash\.io/kept-version: (.*)$", o2.decode()) == [
        "1 ExternalSecret shop/db",
        "1 Secret shop/token",
    ]
    # each producer is pruned last in Argo CD, like a versioned Secret
    assert all("PruneLast=true" in doc for doc in documents(o2).values())
    o3 = run(tmp_path, render(3), o2)
    v3 = used(o3)
    assert sorted(externals(o3).values()) == sorted([v2, v3])  # v1 left the window
    es2 = f"db-{v2.rpartition('-')[2]}"
    assert documents(o3)[es2] == documents(o2)[es2]
    # idempotent: the same PREV, the same output; its own output as PREV adds nothing
    assert run(tmp_path, render(3), o2) == o3
    assert run(tmp_path, render(3), o3) == o3
    # report: the new name, and the producer that leaves (its controller deletes the
    # Secret it produced with it): the ExternalSecret, not the Secret
    (tmp_path / "o2.yaml").write_bytes(o2)
    (tmp_path / "o3.yaml").write_bytes(o3)
    res = run_cmhash([*REPORT, "json", str(tmp_path / "o2.yaml"), str(tmp_path / "o3.yaml")])
    assert res.code == 0, res.stderr
    report = json.loads(res.stdout)
    assert {"kind": "ExternalSecret", "namespace": "shop", "name": "db-…"} in report["pruned"]
    assert {"kind": "Secret", "namespace": "shop", "name": "db-…"} not in report["pruned"]
    text = run_cmhash([*REPORT, "text", str(tmp_path / "o2.yaml"), str(tmp_path / "o3.yaml")])
    assert "Secret/db is now db-…" in text.out, text.out
    for pw in PASSWORDS.values():
        assert pw not in res.out and pw not in text.out and pw not in text.stderr


def test_the_source_opts_in_and_out() -> None:
    opted = render(1).replace(
        b"  name: db\n  namespace: shop\nspec:",
        b'  name: db\n  namespace: shop\n  annotations:\n    cmhash.io/versioned: "{v}"\nspec:',
    )
    out, _ = cmhash([], opted.replace(b"{v}", b"true"))  # without --versioned
    assert used(out).startswith("db-") and list(externals(out).values()) == [used(out)]
    out, _ = cmhash(["--versioned"], opted.replace(b"{v}", b"false"))
    assert used(out) == "db" and "  name: db\n" in out.decode()


def test_a_strict_sealed_secret_opted_in_is_refused_at_its_position() -> None:
    data = (
        "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: db\n"
        '  namespace: shop\n  annotations: {cmhash.io/versioned: "true"}\nspec:\n'
        "  encryptedData:\n    password: AgBy3i4OJSWK+PiTySYZZA==\n---\n" + DEP
    ).encode()
    _, err = cmhash([], data, code=2)
    assert err.startswith("cmhash: <stdin>:1:1: cannot version Secret 'db'") and "re-sealing" in err
    assert "AgBy3i4OJSWK" not in err


def test_a_produced_secret_read_by_name_keeps_its_name() -> None:
    ingress = (
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n"
        "  namespace: shop\nspec:\n  tls:\n  - secretName: db\n"
    )
    out, err = cmhash(["--versioned"], render(1) + b"---\n" + ingress.encode())
    assert used(out) == "db"
    assert "Secret 'db' is not versioned: Ingress/web spec.tls[0].secretName names it" in err


def test_the_parallel_map_stage_gives_the_same_names() -> None:
    """What a source says about its versioning crosses the workers' pipe (packed in C,
    analyze/transport.py) and gives the output a single process gives."""
    docs = []
    for i in range(60):
        docs.append(ES.format(v=i).replace("name: db\n", f"name: db{i}\n"))
        docs.append(
            DEP.replace("name: db,", f"name: db{i},").replace("name: app\n", f"name: app{i}\n")
        )
    data = "---\n".join(docs).encode()
    one, _ = cmhash(["--versioned", "--workers", "1"], data)
    three, _ = cmhash(["--versioned", "--workers", "3"], data)
    assert one == three and one.count(b"  target:\n    name: ") == 60


def test_an_own_name_too_long_with_its_suffix_is_refused() -> None:
    long = "e" * 250
    data = render(1).replace(
        b"  name: db\n  namespace: shop\nspec:\n",
        f"  name: {long}\n  namespace: shop\nspec:\n  target:\n    name: db\n".encode(),
    )
    _, err = cmhash(["--versioned"], data, code=2)
    assert "<stdin>:4:9: cannot version Secret 'db'" in err and "253" in err


def test_explain_names_the_source_as_it_is_renamed() -> None:
    res = run_cmhash(["explain", "--no-config", "--versioned", "--format", "json", "-"], render(1))
    assert res.code == 0, res.stderr
    (app,) = json.loads(res.out)["workloads"]
    (ref,) = [r for r in app["references"] if r["name"] == "db"]
    suffix = ref["versionedAs"].rpartition("-")[2]
    assert ref["producedBy"] == f"ExternalSecret/db-{suffix}"


def test_a_job_mounting_the_secret_provider_class_keeps_it_and_its_secrets() -> None:
    """The class is renamed with its Secrets and its CSI volumes follow: a Job (its
    template is immutable) that mounts it keeps both from being renamed."""
    spc = TESTS / "cases" / "versioned-source-secretproviderclass" / "input.yaml"
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  namespace: default\n"
        "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        "      - {name: m, image: i, volumeMounts: [{name: s, mountPath: /s}]}\n"
        "      volumes:\n      - name: s\n        csi:\n          driver: secrets-store.csi.k8s.io\n"
        "          volumeAttributes: {secretProviderClass: my-provider}\n"
    )
    out, err = cmhash(["--versioned"], spc.read_bytes() + b"---\n" + job.encode())
    assert b"my-provider-" not in out and b"foosecret-" not in out
    assert (
        "Secret 'foosecret' is not versioned: Job/migrate -n default references "
        "SecretProviderClass 'my-provider' (renamed with it) and its pod template is immutable"
    ) in err


def test_every_secret_of_a_renamed_class_gets_its_suffix() -> None:
    """A secretObject no pod reads is renamed with the class too: the new class must not
    sync a Secret under the name the old one syncs for old pods."""
    spc = TESTS / "cases" / "versioned-source-secretproviderclass" / "input.yaml"
    data = spc.read_bytes().replace(
        b"          valueFrom:\n            secretKeyRef: {name: foosecret, key: username}\n",
        b"          value: plain\n",
    )
    assert b"secretKeyRef" not in data
    out, _ = cmhash(["--versioned"], data)
    (cls,) = [o for o in load_objects(out) if o["kind"] == "SecretProviderClass"]
    suffix = cls["metadata"]["name"].rpartition("-")[2]
    assert [o["secretName"] for o in cls["spec"]["secretObjects"]] == [
        f"foosecret-{suffix}",
        f"tls-foo-{suffix}",
    ]
    assert cmhash(["--versioned"], out)[0] == out


# a Secret in the input that a source also writes: the Secret is used (shadowed-source)
MERGED = (
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: shop\n"
    "stringData:\n  password: placeholder\n"
)


@pytest.mark.parametrize("policy", ["Merge", "Owner"])
def test_a_secret_a_source_also_writes_keeps_its_name(policy: str) -> None:
    """Renaming the input's Secret would leave the ExternalSecret writing (Merge: the
    store's values into) the old name: the new Secret would lack them. It keeps its
    name, says why, and a second run changes nothing."""
    data = (
        render(1).replace(
            b"  refreshInterval: 1h\n",
            f"  refreshInterval: 1h\n  target:\n    creationPolicy: {policy}\n".encode(),
        )
        + b"---\n"
        + MERGED.encode()
    )
    out, err = cmhash(["--versioned"], data)
    assert used(out) == "db" and "  name: db\n  namespace: shop\nstringData" in out.decode()
    assert "Secret 'db' is not versioned: ExternalSecret/db in the input also writes it" in err
    assert cmhash(["--versioned"], out)[0] == out
    _, err = cmhash(
        ["--versioned"],
        data.replace(
            b"  namespace: shop\nstringData",
            b'  namespace: shop\n  annotations: {cmhash.io/versioned: "true"}\nstringData',
        ),
        code=2,
    )
    assert "cannot version Secret 'db': ExternalSecret/db in the input also writes it" in err


def test_two_external_secrets_writing_one_secret_keep_its_name() -> None:
    """Two producers of one Secret: renaming the one used would leave the other writing
    the old name, and a second run would stack suffixes."""
    other = (
        ES.format(v=2)
        .replace("  name: db\n", "  name: db2\n")
        .replace("  refreshInterval: 1h\n", "  refreshInterval: 1h\n  target:\n    name: db\n")
    )
    data = render(1) + b"---\n" + other.encode()
    out, err = cmhash(["--versioned"], data)
    names = [o["metadata"]["name"] for o in load_objects(out) if o["kind"] == "ExternalSecret"]
    assert used(out) == "db" and names == ["db", "db2"]
    assert "Secret 'db' is not versioned: ExternalSecret/db in the input also writes it" in err
    assert cmhash(["--versioned"], out)[0] == out


def test_a_template_from_config_map_keeps_its_name() -> None:
    """The external-secrets controller reads templateFrom's ConfigMap by name: renamed,
    the ExternalSecret would read a name that is gone, and the next run would find its
    content changed (its suffix and the checksum moving on each run)."""
    tpl = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tpl\n  namespace: shop\n"
        "data:\n  config.yml: 'password: {{ .password }}'\n"
    )
    es = ES.format(v=1).replace(
        "  refreshInterval: 1h\n",
        "  refreshInterval: 1h\n  target:\n    template:\n      templateFrom:\n"
        "      - configMap: {name: tpl, items: [{key: config.yml}]}\n",
    )
    dep = DEP.replace("[{secretRef: {name: token}}]", "[{configMapRef: {name: tpl}}]")
    data = "---\n".join((tpl, es, dep)).encode()
    out, err = cmhash(["--versioned"], data)
    assert "  name: tpl\n" in out.decode() and used(out).startswith("db-")
    assert (
        "ConfigMap 'tpl' is not versioned: ExternalSecret/db "
        "spec.target.template.templateFrom[0].configMap.name names it"
    ) in err
    assert "unknown-reference" not in err
    assert cmhash(["--versioned"], out)[0] == out


def test_a_source_renamed_onto_another_sources_name_is_refused() -> None:
    """Two ExternalSecrets of one name in the output: one would replace the other."""
    first, _ = cmhash(["--versioned"], render(1))
    (renamed,) = externals(first)
    other = (
        ES.format(v=9)
        .replace("  name: db\n", f"  name: {renamed}\n")
        .replace("  refreshInterval: 1h\n", "  refreshInterval: 1h\n  target:\n    name: other\n")
    )
    _, err = cmhash(["--versioned"], render(1) + b"---\n" + other.encode(), code=2)
    assert (
        f"<stdin>:4:9: cannot version Secret 'db' (produced by ExternalSecret/db): "
        f"ExternalSecret 'db' would be renamed {renamed!r}, which the input already has"
    ) in err


def test_a_target_name_too_long_with_its_suffix_is_refused_at_it() -> None:
    long = "s" * 250
    data = (
        render(1)
        .replace(
            b"  refreshInterval: 1h\n",
            f"  refreshInterval: 1h\n  target:\n    name: {long}\n".encode(),
        )
        .replace(b"{name: db,", f"{{name: {long},".encode())
    )
    _, err = cmhash(["--versioned"], data, code=2)
    assert f"<stdin>:9:11: cannot version Secret '{long}'" in err
    assert "over Kubernetes' 253" in err


def test_secrets_of_a_class_no_workload_mounts_keep_their_names() -> None:
    """The driver syncs a SecretProviderClass's Secrets only for pods that mount it:
    when none in the input does (the mounting pod is elsewhere), nothing would create
    the Secrets under new names, and the pods reading them would never start."""
    spc = TESTS / "cases" / "versioned-source-secretproviderclass" / "input.yaml"
    text = spc.read_text()
    data = text[: text.index("        volumeMounts:")].encode()
    out, err = cmhash(["--versioned"], data)
    assert b"my-provider-" not in out and b"foosecret-" not in out
    assert (
        "Secret 'foosecret' is not versioned: no workload in the input mounts "
        "SecretProviderClass 'my-provider'"
    ) in err


def test_a_peer_window_on_the_source_bounds_its_history(tmp_path: Path) -> None:
    """kapp's num-versions (Spinnaker's max-version-history) on an ExternalSecret is
    that source's window, as on a ConfigMap; a value no tool reads is refused."""

    def bounded(n: int, value: str = "1") -> bytes:
        return render(n).replace(
            b"  name: db\n  namespace: shop\n",
            f'  name: db\n  namespace: shop\n  annotations:\n    kapp.k14s.io/num-versions: "{value}"\n'.encode(),
            1,
        )

    o1 = run(tmp_path, bounded(1), b"", keep=3)
    o2 = run(tmp_path, bounded(2), o1, keep=3)
    assert "kept-version: 1 ExternalSecret" not in o2.decode()
    (tmp_path / "prev.yaml").write_bytes(o1)
    _, err = cmhash(
        ["--versioned", "--keep-versions", "3", "--previous", str(tmp_path / "prev.yaml")],
        bounded(2, "zero"),
        code=2,
    )
    assert "<stdin>:7:32: kapp.k14s.io/num-versions must be a whole number" in err


def test_a_target_name_that_cannot_be_inserted_says_what_and_where() -> None:
    """Not the annotation edit's words: it is spec.target.name that cannot be added."""
    data = render(1).replace(b"\nspec:\n  refreshInterval", b"\nspec: &s\n  refreshInterval")
    _, err = cmhash(["--versioned"], data, code=2)
    assert (
        "<stdin>:6:7: cannot version Secret 'db' (produced by ExternalSecret/db): the spec "
        "carries an anchor (&s) that other nodes may share; write spec.target.name out"
    ) in err
    assert "annotation" not in err


def _eso_secret(name: str, password: str, rv: int) -> dict[str, object]:
    """A Secret as External Secrets writes it and kubectl get exports it."""
    from clusterexport import eso_hash

    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "data": {"password": base64.b64encode(password.encode()).decode()},
        "metadata": {
            "name": name,
            "namespace": "shop",
            "resourceVersion": str(rv),
            "labels": {"reconcile.external-secrets.io/managed": "true"},
            "annotations": {
                "reconcile.external-secrets.io/data-hash": eso_hash({"password": password})
            },
            "ownerReferences": [
                {
                    "apiVersion": "external-secrets.io/v1",
                    "kind": "ExternalSecret",
                    "name": name,
                    "controller": True,
                    "uid": f"uid-{name}",
                }
            ],
        },
    }


def test_the_lock_follows_the_secret_through_its_versioned_name(tmp_path: Path) -> None:
    """Under --versioned the cluster holds ESO's Secret as db-<suffix> (beside the
    version old pods still read): the lock reads the one the render names, keeps it
    under the name the manifests give it, and a rotation in the store moves the
    checksum of the versioned render."""
    (tmp_path / "m.yaml").write_bytes(render(1))
    out, _ = cmhash(["--versioned"], render(1))
    ((_, current),) = externals(out).items()
    old = externals(cmhash(["--versioned"], render(2))[0])  # another version, still there
    ((_, other),) = old.items()

    def lock(password: str, name: str) -> dict[str, object]:
        items = [_eso_secret(current, password, 7), _eso_secret(other, "older", 5)]
        doc = {
            "apiVersion": "v1",
            "kind": "List",
            "items": items,
            "metadata": {"resourceVersion": ""},
        }
        (tmp_path / "export.yaml").write_text(json.dumps(doc))
        res = run_cmhash(
            ["lock", "export.yaml", "--for", "m.yaml", "--versioned", "-o", name], cwd=tmp_path
        )
        assert res.code == 0, res.stderr
        assert "not locked" not in res.stderr, res.stderr
        return dict(json.loads((tmp_path / name).read_text()))

    first = lock("s3cr3t-one", "one.lock")
    (entry,) = first["objects"]  # type: ignore[misc]
    assert (entry["kind"], entry["namespace"], entry["name"]) == ("Secret", "shop", "db")
    assert entry["field"].endswith(f"of Secret {current}")
    lock("s3cr3t-two", "two.lock")

    def checksum(name: str) -> str:
        res = run_cmhash(["--no-config", "--versioned", "--lock", name, "m.yaml"], cwd=tmp_path)
        assert res.code == 0, res.stderr
        (dep,) = [o for o in load_objects(res.stdout) if o["kind"] == "Deployment"]
        return str(dep["spec"]["template"]["metadata"]["annotations"]["checksum/config"])

    assert checksum("one.lock") != checksum("two.lock")
