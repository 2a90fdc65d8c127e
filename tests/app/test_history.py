"""--keep-versions N --previous PREV: a bounded history of versioned objects, carried
from the previous output byte for byte; what left the window is left out (and listed by
report); idempotent; refused combinations and a PREV that does not fit, exit 2."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, report_json, run_cmhash, tool
from manifests import load_objects

from cmhash.knowledge.versioning import KEEP_RULES, KeepRule, keep_rules

CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: shop\ndata:\n  v: "{v}"\n'
SECRET = (
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: shop\n  annotations:\n"
    '    cmhash.io/versioned: "true"\ntype: Opaque\ndata:\n  password: {pw}\n'
)
DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  namespace: shop\nspec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n"
    "        envFrom: [{configMapRef: {name: app}}, {secretRef: {name: db}}]\n"
)
PASSWORDS = {1: "czNjcjN0LW9uZQ==", 2: "czNjcjN0LXR3bw==", 3: "czNjcjN0LXRocmVl"}


def render(n: int) -> bytes:
    return "---\n".join((CM.format(v=n), SECRET.format(pw=PASSWORDS[n]), DEP)).encode()


def run(tmp: Path, data: bytes, prev: bytes, keep: int = 2, *extra: str) -> bytes:
    (tmp / "prev.yaml").write_bytes(prev)
    res = run_cmhash(
        [
            "--no-config",
            "--versioned",
            "--keep-versions",
            str(keep),
            "--previous",
            str(tmp / "prev.yaml"),
            *extra,
            "-",
        ],
        stdin=data,
    )
    assert res.code == 0, res.stderr
    for pw in PASSWORDS.values():  # never a Secret's value in a message
        assert pw not in res.stderr
    return res.stdout


def names(out: bytes) -> dict[str, list[str]]:
    got: dict[str, list[str]] = {}
    for o in load_objects(out):
        if o["kind"] in ("ConfigMap", "Secret"):
            got.setdefault(o["kind"], []).append(o["metadata"]["name"])
    return got


def documents(out: bytes) -> dict[str, str]:
    """name -> the document's text after its mark (what is carried)."""
    docs = {}
    for doc in re.split(r"(?m)^---\n", out.decode()):
        doc = re.sub(r"\A# cmhash\.io/kept-version: .*\n", "", doc)
        m = re.search(r"(?m)^  name: (\S+)$", doc)
        if m and re.search(r"(?m)^kind: (ConfigMap|Secret)$", doc):
            docs[m.group(1)] = doc
    return docs


def unmarked(out: bytes, kind: str) -> list[str]:
    """Names of the objects of ``kind`` no mark says were carried."""
    got = []
    for doc in re.split(r"(?m)^---\n", out.decode()):
        m = re.search(r"(?m)^  name: (\S+)$", doc)
        if m and re.search(rf"(?m)^kind: {kind}$", doc) and "cmhash.io/kept-version" not in doc:
            got.append(m.group(1))
    return got


def marks(out: bytes) -> list[str]:
    return re.findall(r"(?m)^# cmhash\.io/kept-version: (.*)$", out.decode())


def current(out: bytes, kind: str) -> str:
    """The name the workload uses now."""
    (dep,) = [o for o in load_objects(out) if o["kind"] == "Deployment"]
    refs = dep["spec"]["template"]["spec"]["containers"][0]["envFrom"]
    key = "configMapRef" if kind == "ConfigMap" else "secretRef"
    return next(r[key]["name"] for r in refs if key in r)


def test_three_renders_keep_a_window_of_two(tmp_path: Path) -> None:
    o1 = run(tmp_path, render(1), b"")  # the first render: nothing before it
    assert marks(o1) == [] and len(names(o1)["ConfigMap"]) == 1
    v1 = {k: current(o1, k) for k in ("ConfigMap", "Secret")}

    o2 = run(tmp_path, render(2), o1)
    v2 = {k: current(o2, k) for k in ("ConfigMap", "Secret")}
    assert v2 != v1
    assert sorted(names(o2)["ConfigMap"]) == sorted([v2["ConfigMap"], v1["ConfigMap"]])
    assert sorted(names(o2)["Secret"]) == sorted([v2["Secret"], v1["Secret"]])
    assert marks(o2) == ["1 ConfigMap shop/app", "1 Secret shop/db"]
    for kind in ("ConfigMap", "Secret"):  # carried byte for byte
        assert documents(o2)[v1[kind]] == documents(o1)[v1[kind]]

    o3 = run(tmp_path, render(3), o2)
    v3 = {k: current(o3, k) for k in ("ConfigMap", "Secret")}
    assert sorted(names(o3)["ConfigMap"]) == sorted([v3["ConfigMap"], v2["ConfigMap"]])
    assert v1["ConfigMap"] not in names(o3)["ConfigMap"]  # left the window
    for kind in ("ConfigMap", "Secret"):
        assert documents(o3)[v2[kind]] == documents(o2)[v2[kind]]

    # idempotent: the same PREV and input, the same output; its own output as PREV adds nothing
    assert run(tmp_path, render(3), o2) == o3
    assert run(tmp_path, render(3), o3) == o3

    # report lists what applying o3 deletes: the versions that left the window
    report = report_json(tmp_path, o2, o3, "--versioned")  # as old.yaml, new.yaml
    secret_shown = v1["Secret"].rsplit("-", 1)[0] + "-…"
    assert report["pruned"] == [
        {"kind": "ConfigMap", "namespace": "shop", "name": v1["ConfigMap"]},
        {"kind": "Secret", "namespace": "shop", "name": secret_shown},
    ]
    assert [c["name"] for c in report["configs"]] == ["app", "db"]  # carried ones are not "now"
    text = run_cmhash(
        ["report", "--no-config", "--versioned", "--format", "text", "old.yaml", "new.yaml"],
        cwd=tmp_path,
    )
    assert "Versions deleted when NEW is applied:" in text.out and v1["ConfigMap"] in text.out


def test_a_wider_window_and_a_rollback(tmp_path: Path) -> None:
    o1 = run(tmp_path, render(1), b"", 3)
    o2 = run(tmp_path, render(2), o1, 3)
    o3 = run(tmp_path, render(3), o2, 3)
    v = [current(o, "ConfigMap") for o in (o1, o2, o3)]
    assert sorted(names(o3)["ConfigMap"]) == sorted(v)
    assert marks(o3)[:2] == ["1 ConfigMap shop/app", "2 ConfigMap shop/app"]
    # back to the first content: its name is current again, the others age
    back = run(tmp_path, render(1), o3, 3)
    assert current(back, "ConfigMap") == v[0]
    assert sorted(names(back)["ConfigMap"]) == sorted(v)
    assert documents(back)[v[2]] == documents(o3)[v[2]]


def test_an_unchanged_render_keeps_the_window_as_it_is(tmp_path: Path) -> None:
    o1 = run(tmp_path, render(1), b"")
    o2 = run(tmp_path, render(2), o1)
    assert run(tmp_path, render(2), o2) == o2


def test_the_output_fed_back_as_input_and_previous_gives_itself(tmp_path: Path) -> None:
    """A version the input already has (the kept ones of an output run again) is not
    carried a second time: two objects of one name would be applied."""
    o1 = run(tmp_path, render(1), b"")
    o2 = run(tmp_path, render(2), o1)
    assert run(tmp_path, o2, o2) == o2
    assert run(tmp_path, o2, o1) == o2


def test_the_plain_render_before_versioning_is_kept(tmp_path: Path) -> None:
    """The first --versioned run after plain ones: what old pods read is the object of
    the plain name, carried as the version before."""
    plain = render(1).replace(b'  annotations:\n    cmhash.io/versioned: "true"\n', b"")
    out = run(tmp_path, render(2), plain)
    assert marks(out) == ["1 ConfigMap shop/app", "1 Secret shop/db"]
    assert {"app", current(out, "ConfigMap")} == set(names(out)["ConfigMap"])


def test_a_helm_render_whose_namespace_is_inferred(tmp_path: Path) -> None:
    """A chart that writes the namespace on its Deployment only: cmhash infers the
    release namespace for the ConfigMap in the input, and PREV (the previous output,
    the same chart) is in that namespace too, not another application's."""
    chart = (
        render(1)
        .replace(b"  namespace: shop\ndata", b"\ndata")
        .replace(b"---\n", b"---\n# Source: shop/templates/x.yaml\n")
    )
    o1 = run(tmp_path, chart, b"")
    o2 = run(tmp_path, chart.replace(b'v: "1"', b'v: "2"'), o1)
    assert marks(o2) == ["1 ConfigMap shop/app"]
    assert sorted(names(o2)["ConfigMap"]) == sorted(
        [current(o1, "ConfigMap"), current(o2, "ConfigMap")]
    )


def test_a_crlf_previous_keeps_its_line_ends_around_the_carried_versions(tmp_path: Path) -> None:
    """The marker lines of a carried document end as its own lines do."""
    o1 = run(tmp_path, render(1).replace(b"\n", b"\r\n"), b"")
    o2 = run(tmp_path, render(2).replace(b"\n", b"\r\n"), o1)
    assert marks(o2.replace(b"\r\n", b"\n")) == ["1 ConfigMap shop/app", "1 Secret shop/db"]
    assert b"\n" not in o2.replace(b"\r\n", b"")


def test_keep_one_carries_nothing(tmp_path: Path) -> None:
    o1 = run(tmp_path, render(1), b"", 1)
    o2 = run(tmp_path, render(2), o1, 1)
    assert marks(o2) == [] and len(names(o2)["ConfigMap"]) == 1


def test_check_says_what_it_keeps_and_drops(tmp_path: Path) -> None:
    o1 = run(tmp_path, render(1), b"")
    o2 = run(tmp_path, render(2), o1)
    (tmp_path / "prev.yaml").write_bytes(o2)
    res = run_cmhash(
        [
            "--no-config",
            "--versioned",
            "--keep-versions",
            "2",
            "--previous",
            str(tmp_path / "prev.yaml"),
            "--check",
            "-",
        ],
        stdin=render(3),
    )
    assert res.code == 1
    assert f"drops ConfigMap {current(o1, 'ConfigMap')}: older than --keep-versions 2" in res.stderr
    assert f"keeps ConfigMap {current(o2, 'ConfigMap')} from" in res.stderr
    assert res.stderr.endswith(
        "1 workload and 2 objects renamed in 1 file would be updated; "
        "2 earlier versions from --previous would be added\n"
    )
    # the input already versioned: only the history would change the output
    current_only = re.split(r"(?m)^---\n# cmhash", o2.decode())[0].encode()
    res = run_cmhash(
        [
            "--no-config",
            "--versioned",
            "--keep-versions",
            "2",
            "--previous",
            "prev.yaml",
            "--check",
            "-",
        ],
        stdin=current_only,
        cwd=tmp_path,
    )
    assert res.code == 1
    assert res.stderr.endswith("\n2 earlier versions from --previous would be added\n")
    assert "nothing to change" not in res.stderr
    for pw in PASSWORDS.values():
        assert pw not in res.stderr


def test_a_version_of_an_object_the_input_dropped_says_so(tmp_path: Path) -> None:
    """Its versions go because the object left the input, not because of their age."""
    o1 = run(tmp_path, render(1), b"")
    (tmp_path / "prev.yaml").write_bytes(o1)
    without = (
        render(2)
        .replace(CM.format(v=2).encode() + b"---\n", b"")
        .replace(b"{configMapRef: {name: app}}, ", b"")
    )
    res = run_cmhash(
        ["--no-config", "--versioned", "--keep-versions", "3", "--previous", "prev.yaml", "-"],
        stdin=without,
        cwd=tmp_path,
    )
    assert res.code == 0, res.stderr
    assert (
        f"drops ConfigMap {current(o1, 'ConfigMap')}: the input no longer has ConfigMap shop/app"
    ) in res.stderr
    assert "older than" not in res.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--keep-versions", "2"], "go together"),
        (["--previous", "prev.yaml"], "go together"),
        (
            ["--keep-versions", "2", "--previous", "prev.yaml", "--diff"],
            "not with --in-place or --diff",
        ),
        (["--keep-versions", "2", "--previous", "prev.yaml", "--versioned-keep"], "choose one"),
        (["--keep-versions", "0", "--previous", "prev.yaml"], "0"),
        (["--keep-versions", "2", "--previous", "-"], "--previous reads a file, not standard"),
    ],
)
def test_refused_combinations(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "prev.yaml").write_bytes(b"")
    res = run_cmhash(["--no-config", "--versioned", *args, "-"], stdin=render(1), cwd=tmp_path)
    assert res.code == 2 and message in res.stderr


def test_nothing_versioned_is_refused(tmp_path: Path) -> None:
    (tmp_path / "prev.yaml").write_bytes(b"")
    data = render(1).replace(b'cmhash.io/versioned: "true"', b'x: "y"')
    res = run_cmhash(
        ["--no-config", "--keep-versions", "2", "--previous", "prev.yaml", "-"],
        stdin=data,
        cwd=tmp_path,
    )
    assert res.code == 2 and "--keep-versions needs versioned objects" in res.stderr


def test_a_previous_that_does_not_parse_is_an_error_at_its_position(tmp_path: Path) -> None:
    o1 = run(tmp_path, render(1), b"")
    broken = o1.replace(b"kind: ConfigMap\n", b"kind: ConfigMap\n  bad: [\n", 1)
    (tmp_path / "prev.yaml").write_bytes(broken)
    res = run_cmhash(
        ["--no-config", "--versioned", "--keep-versions", "2", "--previous", "prev.yaml", "-"],
        stdin=render(2),
        cwd=tmp_path,
    )
    assert res.code == 2
    assert re.match(r"cmhash: prev\.yaml:\d+:\d+: --previous: not a manifest stream", res.stderr)


@pytest.mark.parametrize(
    ("prev", "where"),
    [
        (b"a: [\n", "2:1"),
        (b"- a\n- [b\n", "2:3"),
        (
            b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: shop}\n---\nx: [\n",
            "6:1",
        ),
    ],
)
def test_a_previous_that_is_not_yaml_is_an_error_whatever_it_holds(
    tmp_path: Path, prev: bytes, where: str
) -> None:
    """Not only a broken ConfigMap: any document of PREV that does not parse as YAML."""
    (tmp_path / "prev.yaml").write_bytes(prev)
    res = run_cmhash(
        ["--no-config", "--versioned", "--keep-versions", "3", "--previous", "prev.yaml", "-"],
        stdin=render(1),
        cwd=tmp_path,
    )
    assert res.code == 2 and res.stdout == b""
    assert res.stderr.startswith(f"cmhash: prev.yaml:{where}: --previous: not a manifest stream")


PREV = ["--previous", "prev.yaml", "-"]
NOTHING_TO_CARRY = [
    (b"", "is empty (or only comments)"),
    (b"# the first render\n---\n", "is empty (or only comments)"),
    (b"foo: bar\n", "holds no Kubernetes object"),
    (b"- a\n- b\n", "holds no Kubernetes object"),
    (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: shop}\n",
        "holds no version of a versioned ConfigMap or Secret of the input",
    ),
]


@pytest.mark.parametrize(("prev", "why"), NOTHING_TO_CARRY)
def test_a_previous_that_carries_nothing_is_a_warning(
    tmp_path: Path, prev: bytes, why: str
) -> None:
    """Legitimate on the first render with --keep-versions: the output is the input's
    own, and a warning names PREV and says nothing is carried."""
    out = run(tmp_path, render(1), prev, 3)
    assert marks(out) == [] and [len(v) for v in names(out).values()] == [1, 1]
    res = run_cmhash(
        ["--no-config", "--versioned", "--keep-versions", "3", "--previous", "prev.yaml", "-"],
        stdin=render(1),
        cwd=tmp_path,
    )
    assert res.stderr == (
        f"prev.yaml:1:1: warning: --previous {why}: nothing is carried (as on the first "
        "render with --keep-versions); --strict makes this an error\n"
    )
    quiet = ["--no-config", "-q", "--versioned", "--keep-versions", "3", "--previous", "prev.yaml"]
    assert run_cmhash([*quiet, "-"], stdin=render(1), cwd=tmp_path).stderr == ""


@pytest.mark.parametrize(("prev", "why"), NOTHING_TO_CARRY)
def test_a_previous_that_carries_nothing_is_an_error_with_strict(
    tmp_path: Path, prev: bytes, why: str
) -> None:
    (tmp_path / "prev.yaml").write_bytes(prev)
    res = run_cmhash(
        ["--no-config", "--strict", "--versioned", "--keep-versions", "3", *PREV],
        stdin=render(1),
        cwd=tmp_path,
    )
    assert res.code == 2 and res.stdout == b""
    assert res.stderr.startswith(f"cmhash: prev.yaml:1:1: --previous {why}: nothing is carried")


def test_a_previous_before_versioned_names_carries_the_unversioned_object(
    tmp_path: Path,
) -> None:
    """PREV from a run without --versioned holds the input's objects under their plain
    names: what the old pods use, carried, no warning."""
    plain = run_cmhash(["--no-config", "-"], stdin=render(1)).stdout
    (tmp_path / "prev.yaml").write_bytes(plain)
    res = run_cmhash(
        ["--no-config", "--versioned", "--keep-versions", "3", "--previous", "prev.yaml", "-"],
        stdin=render(1),
        cwd=tmp_path,
    )
    assert res.code == 0 and "warning" not in res.stderr
    assert "app" in names(res.stdout)["ConfigMap"]


def test_a_previous_of_another_application_is_refused(tmp_path: Path) -> None:
    other = render(1).replace(
        b"name: app\n  namespace: shop\ndata", b"name: web\n  namespace: shop\ndata"
    )
    other = (
        other.replace(b"configMapRef: {name: app}", b"configMapRef: {name: web}")
        .replace(b"name: db", b"name: cache")
        .replace(b"{name: db}", b"{name: cache}")
    )
    o_other = run(tmp_path, other, b"")
    (tmp_path / "prev.yaml").write_bytes(o_other)
    res = run_cmhash(
        ["--no-config", "--versioned", "--keep-versions", "2", "--previous", "prev.yaml", "-"],
        stdin=render(2),
        cwd=tmp_path,
    )
    assert res.code == 2 and "another application's output" in res.stderr


@pytest.mark.integration
def test_three_renders_of_a_real_chart(tmp_path: Path) -> None:
    """The chart of tests/fixtures rendered by the real helm with changed values."""
    chart = ROOT / "tests" / "fixtures" / "chart"
    outs: list[bytes] = []
    prev = b""
    for level in ("info", "debug", "warn"):
        rendered = subprocess.run(
            [
                tool("helm"),
                "template",
                "shop",
                str(chart),
                "--namespace",
                "shop",
                "--set",
                f"logLevel={level}",
                # (its pre-upgrade hook Job reads the ConfigMap, which then keeps its name)
                "--show-only",
                "templates/configmap.yaml",
                "--show-only",
                "templates/secret.yaml",
                "--show-only",
                "templates/deployment.yaml",
            ],
            check=True,
            capture_output=True,
        ).stdout
        prev = run(tmp_path, rendered, prev, 2)
        outs.append(prev)
    c = [unmarked(o, "ConfigMap")[0] for o in outs]
    assert len(set(c)) == 3
    assert sorted(names(outs[2])["ConfigMap"]) == sorted([c[2], c[1]])
    assert documents(outs[2])[c[1]] == documents(outs[1])[c[1]]
    assert run(tmp_path, rendered, outs[2], 2) == outs[2]


def test_three_renders_of_a_corpus_chart(tmp_path: Path) -> None:
    """Istio's Grafana addon (a Helm render in the corpus), its grafana.ini changed
    twice: the window holds the current and the one before, byte for byte."""
    base = (
        ROOT / "tests" / "corpus" / "istio" / "samples" / "addons" / "grafana.yaml"
    ).read_bytes()
    assert base.count(b"    [analytics]\n") == 1
    outs: list[bytes] = []
    prev = b""
    for n in range(3):
        rendered = base.replace(
            b"    [analytics]\n", f"    [analytics]\n    # change {n}\n".encode()
        )
        prev = run(tmp_path, rendered, prev, 2)
        outs.append(prev)
    grafana = [
        next(x for x in unmarked(o, "ConfigMap") if re.fullmatch(r"grafana-\w{10}", x))
        for o in outs
    ]
    assert len(set(grafana)) == 3
    kept = [x for x in names(outs[2])["ConfigMap"] if x.startswith("grafana-") and len(x) == 18]
    assert sorted(kept) == sorted(grafana[1:])
    assert documents(outs[2])[grafana[1]] == documents(outs[1])[grafana[1]]
    # the dashboards did not change: one version each, nothing carried for them
    assert marks(outs[2]) == ["1 ConfigMap istio-system/grafana"]
    assert run(tmp_path, rendered, outs[2], 2) == outs[2]


# ------------------------------------------------------ engine keep rules (data)


@pytest.mark.parametrize("rule", KEEP_RULES, ids=lambda r: f"{r.engine}-{r.value}")
def test_each_keep_rule_is_written_where_it_applies(tmp_path: Path, rule: KeepRule) -> None:
    """Each row of knowledge/versioning.py's KEEP_RULES, on a versioned object: a plain value
    set, an option merged into the object's own options."""
    own = "    argocd.argoproj.io/sync-options: ServerSideApply=true\n"
    data = render(1).replace(
        b"  namespace: shop\ndata:", f"  namespace: shop\n  annotations:\n{own}data:".encode(), 1
    )
    if rule.when == "keep":
        res = run_cmhash(["--no-config", "--versioned", "--versioned-keep", "-"], stdin=data)
        assert res.code == 0, res.stderr
        out = res.stdout
    else:
        out = run(tmp_path, data, b"")
    (cm,) = [o for o in load_objects(out) if o["kind"] == "ConfigMap"]
    value = cm["metadata"]["annotations"][rule.annotation]
    if rule.merged:
        options = value.split(",")
        assert rule.value in options
        if rule.annotation == "argocd.argoproj.io/sync-options":
            assert "ServerSideApply=true" in options  # the object's own option stays
    else:
        assert value == rule.value
    others = [r for r in KEEP_RULES if r.when != rule.when and r.annotation != rule.annotation]
    for r in others:  # the other mode's rules are not written
        assert r.value not in cm["metadata"]["annotations"].get(r.annotation, "")


def test_keep_rules_are_chosen_by_the_mode() -> None:
    assert keep_rules(False, None) == ()
    assert {r.engine for r in keep_rules(True, None)} == {
        "helm",
        "argocd",
        "flux",
    }
    assert [r.value for r in keep_rules(False, 2)] == ["PruneLast=true"]


def test_a_carried_version_keeps_its_marks_as_they_were(tmp_path: Path) -> None:
    o1 = run(tmp_path, render(1), b"")
    assert "PruneLast=true" in o1.decode()
    o2 = run(tmp_path, render(2), o1)
    v1 = current(o1, "ConfigMap")
    assert documents(o2)[v1] == documents(o1)[v1]


@pytest.mark.parametrize(
    ("directives", "nl"),
    [
        ("%YAML 1.1\n", "\n"),
        ("%YAML 1.2\n%TAG !e! tag:example.com,2000:\n", "\n"),
        ("%YAML 1.1\n", "\r\n"),
    ],
    ids=["yaml", "yaml-and-tag", "crlf"],
)
def test_a_previous_document_after_directives_reads_back(
    tmp_path: Path, directives: str, nl: str
) -> None:
    """A PREV document with directives (``%YAML 1.1`` then ``---``) was carried with
    them after its marker and mark: the output, fed back as PREV, was not YAML (exit 2).
    The directives now go before the marker, after a ``...`` (where YAML allows them);
    the output reads back, as PREV and for every reader, and carries the document byte
    for byte."""

    def lines(text: str) -> bytes:
        return text.replace("\n", nl).encode()

    o1 = run(tmp_path, lines(render(1).decode()), b"")
    first, rest = o1.decode().replace(nl, "\n").split("---\n", 1)
    # the ConfigMap starts PREV after its directives, the Secret after a "..." in the middle
    prev = lines(f"{directives}---\n{first}...\n{directives}---\n{rest}")
    o2 = run(tmp_path, lines(render(2).decode()), prev)
    o3 = run(tmp_path, lines(render(3).decode()), o2, 3)  # the output fed back as PREV reads
    assert run(tmp_path, lines(render(3).decode()), o3, 3) == o3  # and again: nothing moves
    o1, o2, o3 = (o.replace(b"\r\n", b"\n") for o in (o1, o2, o3))
    assert marks(o2) == ["1 ConfigMap shop/app", "1 Secret shop/db"]
    assert o2.decode().count(directives) == 2  # each carried document keeps its own
    assert marks(o3) == [
        "1 ConfigMap shop/app",
        "2 ConfigMap shop/app",
        "1 Secret shop/db",
        "2 Secret shop/db",
    ]
    v1 = current(o1, "ConfigMap")  # (up to the "..." before the next one's directives)
    assert documents(o3)[v1].split("\n...\n")[0] + "\n" == documents(o1)[v1]
    assert len(load_objects(o2)) == 5 and len(load_objects(o3)) == 7  # YAML (PyYAML)
    for parser in ("fast", "exact"):
        res = run_cmhash(["--no-config", "--parser", parser, "-"], stdin=o3)
        assert res.code == 0, res.stderr


@pytest.mark.integration
def test_a_carried_document_after_directives_is_read_by_kubectl(tmp_path: Path) -> None:
    """kubectl cuts a stream at its ``---`` lines and hands each piece to go-yaml: a
    directive must follow a ``...`` there (a stream that starts with one is refused)."""
    o1 = run(tmp_path, render(1), b"")
    first, rest = o1.decode().split("---\n", 1)
    o2 = run(tmp_path, render(2), f"{first}...\n%YAML 1.1\n---\n{rest}".encode())
    (tmp_path / "o2.yaml").write_bytes(o2)
    proc = subprocess.run(
        [tool("kubectl"), "label", "--local", "-f", str(tmp_path / "o2.yaml"), "x=y", "-o", "name"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.split()) == len(load_objects(o2)) == 5
