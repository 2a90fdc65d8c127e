"""A restart asked for in Git (``cmhash.io/restart``, plan/lock.py): on a workload (its
metadata or its pod template) it enters that workload's checksum; on a ConfigMap or
Secret, every user's. A new reason rolls, the same reason twice changes nothing; and
``cmhash restart`` writes it in place (write/annotate.py), every other byte as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cmhash

CM = """apiVersion: v1
kind: ConfigMap
metadata:
  name: pool
  namespace: shop{annotations}
data:
  size: "10"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
  namespace: shop
data:
  a: "1"
"""


def dep(name: str, cm: str, meta: str = "", template: str = "") -> str:
    return (
        f"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n"
        f"  namespace: shop\n{meta}spec:\n  selector:\n    matchLabels: {{app: {name}}}\n"
        f"  template:\n    metadata:\n      labels: {{app: {name}}}\n{template}"
        f"    spec:\n      containers:\n      - name: c\n        image: c:1\n"
        + (f"        envFrom:\n        - configMapRef: {{name: {cm}}}\n" if cm else "")
    )


def stream(cm_reason: str | None = None, **workload: str) -> str:
    ann = f'\n  annotations:\n    cmhash.io/restart: "{cm_reason}"' if cm_reason else ""
    return (
        CM.format(annotations=ann)
        + dep("one", "pool", workload.get("one", ""))
        + dep("two", "pool", workload.get("two", ""))
        + dep("three", "other", workload.get("three", ""))
        + dep("bare", "", workload.get("bare", ""), workload.get("bare_template", ""))
    )


def checksums(text: str) -> dict[str, str | None]:
    res = run_cmhash(["explain", "--format", "json", "-q", "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    return {w["name"]: w["checksum"] for w in json.loads(res.stdout)["workloads"]}


def moved(a: dict[str, str | None], b: dict[str, str | None]) -> set[str]:
    return {k for k in a if a[k] != b[k]}


def test_a_reason_on_a_configmap_reaches_exactly_its_consumers() -> None:
    base = checksums(stream())
    asked = checksums(stream("rotate the pool"))
    assert moved(base, asked) == {"one", "two"}
    assert checksums(stream("rotate the pool")) == asked  # the same reason twice: nothing
    assert moved(asked, checksums(stream("rotate it again"))) == {"one", "two"}


META = '  annotations:\n    cmhash.io/restart: "{r}"\n'
TEMPLATE = '      annotations:\n        cmhash.io/restart: "{r}"\n'


def test_a_reason_on_a_workload_moves_only_it_in_metadata_or_template() -> None:
    base = checksums(stream())
    by_meta = checksums(stream(one=META.format(r="new CA")))
    assert moved(base, by_meta) == {"one"}
    by_template = checksums(stream(bare_template=TEMPLATE.format(r="new CA")))
    # a workload that uses nothing gets a checksum of its own
    assert base["bare"] is None and by_template["bare"] is not None
    assert moved(base, by_template) == {"bare"}
    same = checksums(stream(one=META.format(r="new CA")))
    assert same == by_meta


def test_no_reason_no_change_to_the_encoding() -> None:
    """Without a restart reason the hashed text is the one hash-encoding.md pins."""
    text = stream()
    res = run_cmhash(["-q", "-"], stdin=text.encode())
    assert res.code == 0
    blank = text.replace("namespace: shop\ndata", "namespace: shop\n  annotations: {}\ndata", 1)
    assert checksums(blank) == checksums(text)


def test_an_empty_reason_is_no_request() -> None:
    assert checksums(stream("")) == checksums(stream())


# ---------------------------------------------------------------- cmhash restart

APP = """# the app, as a team keeps it
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web   # the shop's front end
  namespace: shop
  labels: {app: web}
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: web:1
        envFrom:
        - configMapRef: {name: pool}
"""


def restart(tmp: Path, *args: str) -> tuple[int, str]:
    res = run_cmhash(["restart", *args], cwd=tmp)
    return res.code, res.stderr


def test_restart_writes_the_annotation_in_place_byte_for_byte(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(APP)
    (tmp_path / "cm.yaml").write_text(CM.format(annotations=""))
    code, err = restart(tmp_path, "deployment/web", "-n", "shop", "--reason", "new CA", ".")
    assert code == 0, err
    text = (tmp_path / "app.yaml").read_text()
    # (the missing level goes in as the first key of metadata, as cmhash's edits do)
    assert text == APP.replace(
        "metadata:\n  name: web",
        'metadata:\n  annotations:\n    cmhash.io/restart: "new CA"\n  name: web',
    )
    # the same reason again writes nothing; a new one replaces it
    assert restart(tmp_path, "Deployment/web", "--reason", "new CA", "app.yaml")[0] == 0
    assert (tmp_path / "app.yaml").read_text() == text
    assert restart(tmp_path, "deployment.apps/web", "--reason", 'it said "x"', "app.yaml")[0] == 0
    assert 'cmhash.io/restart: "it said \\"x\\""' in (tmp_path / "app.yaml").read_text()
    # on a ConfigMap: every workload that uses it
    before = checksums(APP + "---\n" + (tmp_path / "cm.yaml").read_text())
    assert (
        restart(tmp_path, "configmap/pool", "-n", "shop", "--reason", "resize", "cm.yaml")[0] == 0
    )
    after = checksums(APP + "---\n" + (tmp_path / "cm.yaml").read_text())
    assert before != after
    # (its users were not among the files given: said, and written all the same)
    code, err = restart(tmp_path, "configmap/pool", "--reason", "again", "cm.yaml")
    assert code == 0 and "warning: no workload in cm.yaml uses ConfigMap/pool -n shop" in err


CRON = """---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
  namespace: shop
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: c:1
            envFrom:
            - configMapRef: {name: pool}
"""


@pytest.mark.parametrize(
    ("config", "target", "why"),
    [
        (None, "deployment/web", 'restarts nothing: opted out (cmhash.io/enabled: "false")'),
        (
            "ignore:\n  workloads:\n  - name: web\n",
            "deployment/web",
            "restarts nothing: ignored by a rule of the configuration",
        ),
        (
            "excludeSecrets: true\n",
            "secret/creds",
            "restarts nothing: Deployment/web -n shop: Secrets are left out of checksums",
        ),
    ],
    ids=["opted-out", "ignored", "secrets-excluded"],
)
def test_restart_that_would_roll_nothing_is_refused(
    tmp_path: Path, config: str | None, target: str, why: str
) -> None:
    """As a plain run with the configuration sees it: a workload cmhash leaves alone,
    or an object every user of which leaves it out, gets no new checksum: exit 2 at the
    object, saying why, nothing written."""
    app = APP.replace("  namespace: shop\nspec:", "  namespace: shop\nspec:", 1)
    if config is None:
        app = app.replace(
            "metadata:\n  name: web",
            'metadata:\n  annotations:\n    cmhash.io/enabled: "false"\n  name: web',
        )
    app = app.replace(
        "        - configMapRef: {name: pool}\n", "        - secretRef: {name: creds}\n"
    )
    app += "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: shop\nstringData: {u: x}\n"
    (tmp_path / "app.yaml").write_text(app)
    if config is not None:
        (tmp_path / ".cmhash.yaml").write_text(config)
    code, err = restart(tmp_path, target, "-n", "shop", "--reason", "why", "app.yaml")
    assert code == 2, err
    assert "app.yaml:" in err and why in err and "(nothing written)" in err, err
    assert (tmp_path / "app.yaml").read_text() == app


def test_restart_of_a_cronjob_says_nothing_running_restarts(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(CM.format(annotations="") + CRON)
    code, err = restart(tmp_path, "cronjob/nightly", "--reason", "x", "m.yaml")
    assert code == 0, err
    assert "note: CronJob/nightly -n shop restarts nothing running: its next Job" in err


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        ({"a.yaml": APP}, ["deployment/nope", "--reason", "x", "a.yaml"], "no deployment/nope"),
        (
            {"a.yaml": APP, "b.yaml": APP},
            ["deployment/web", "--reason", "x", "a.yaml", "b.yaml"],
            "is defined 2 times (a.yaml:2, b.yaml:2)",
        ),
        ({"a.yaml": APP}, ["web", "--reason", "x", "a.yaml"], "give KIND/NAME"),
        ({"a.yaml": APP}, ["deployment/web", "--reason", " ", "a.yaml"], "say why"),
        (
            {"a.yaml": APP},
            ["deployment/web", "--reason", "two\nlines", "a.yaml"],
            "U+000A is a control",
        ),
        (
            {"a.yaml": APP},
            ["deployment/web", "--reason", "abc\u202edef", "a.yaml"],
            "U+202E is a control",
        ),
        (
            {"a.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"},
            ["service/web", "--reason", "x", "a.yaml"],
            "a.yaml:1:1: cmhash.io/restart on a Service restarts nothing",
        ),
        (
            {
                "a.yaml": "base: &m\n  name: web\n---\napiVersion: apps/v1\nkind: Deployment\n"
                "metadata: *m\nspec: {template: {spec: {containers: []}}}\n"
            },
            ["deployment/web", "--reason", "x", "a.yaml"],
            "a.yaml:",
        ),
    ],
    ids=["absent", "twice", "not-kind-name", "no-reason", "newline", "bidi", "service", "alias"],
)
def test_restart_refuses_with_a_position(
    tmp_path: Path, files: dict[str, str], args: list[str], message: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, err = restart(tmp_path, *args)
    assert code == 2, err
    assert message in err
    for name, text in files.items():  # nothing written
        assert (tmp_path / name).read_text() == text
