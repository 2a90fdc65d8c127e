"""cmhash report OLD NEW: goldens per format (Markdown, JSON, text, Code Quality compared
exactly; Mermaid checked for shape), the JSON schema, --fail-on, --template, and a report
over two renders of Argo CD's install manifests with a changed ConfigMap, a changed
Secret (no value, no hash of one, anywhere), an immutable change and an OnDelete
StatefulSet."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest
from conftest import CORPUS, ROOT, SHARED_CORPUS, run_cmhash, shared_params

CASE = ROOT / "tests" / "fixtures" / "report"
FORMATS = {
    "markdown": "expected.md",
    "json": "expected.json",
    "text": "expected.txt",
    "codequality": "expected.codequality.json",
}
SECRET_VALUES = ["old-db-password-value", "new-db-password-value", "legacy-token-value"]


def forms(value: str) -> list[str]:
    """Every way a Secret value could leak: as is, base64, and hashes of either."""
    raw = value.encode()
    b64 = base64.b64encode(raw)
    out = [value, b64.decode()]
    for data in (raw, b64):
        out += [
            hashlib.sha256(data).hexdigest(),
            hashlib.sha1(data).hexdigest(),
            hashlib.md5(data).hexdigest(),
        ]
    return out


def assert_no_secret(text: str, values: list[str] = SECRET_VALUES) -> None:
    for v in values:
        for form in forms(v):
            assert form not in text, f"a form of a Secret value leaked: {form[:6]}..."
            assert form[:32] not in text  # a truncated hash (fingerprints are 32 hex)


def report(*args: str, cwd: Path = CASE) -> tuple[int, str, str]:
    res = run_cmhash(["report", "--no-config", *args], cwd=cwd)
    return res.code, res.out, res.stderr


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_golden(fmt: str, update_goldens: bool) -> None:
    code, out, err = report("old.yaml", "new.yaml", "--format", fmt)
    assert code == 0, err
    assert err == ""
    expected = CASE / FORMATS[fmt]
    if update_goldens:
        expected.write_text(out)
    assert out == expected.read_text()
    assert_no_secret(out)


def test_json_follows_its_schema_and_classifies_every_workload() -> None:
    import jsonschema

    _, out, _ = report("old.yaml", "new.yaml", "--format", "json")
    data = json.loads(out)
    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert [w["name"] for w in data["restart"]] == ["api"]
    causes = {(c["kind"], c["name"]): c["keys"] for c in data["restart"][0]["causes"]}
    assert causes == {
        ("ConfigMap", "app-config"): ["LOG_LEVEL", "NEW_FLAG", "OLD_FLAG"],
        ("ConfigMap", "static-config"): ["region"],
        ("Secret", "db"): ["password"],
    }
    why = {w["name"]: w["reason"] for w in data["notRestarting"]}
    assert set(why) == {"postgres", "migrate", "worker", "reports"}
    assert "OnDelete" in why["postgres"]
    assert "paused" in why["reports"]
    assert "Job" in why["migrate"]
    assert "opted out" in why["worker"]
    # web reads FEATURE_X only, which did not change; search is new: neither is listed
    listed = {w["name"] for w in data["restart"] + data["notRestarting"]}
    assert not listed & {"web", "search"}
    configs = {(c["kind"], c["name"]): c for c in data["configs"]}
    assert configs[("ConfigMap", "app-config")]["keysChanged"] == ["LOG_LEVEL"]
    assert configs[("ConfigMap", "app-config")]["keysAdded"] == ["NEW_FLAG"]
    assert configs[("ConfigMap", "app-config")]["keysRemoved"] == ["OLD_FLAG"]
    assert configs[("Secret", "db")]["keysChanged"] == ["password"]
    assert configs[("Secret", "legacy-token")]["change"] == "removed"
    assert configs[("ConfigMap", "search-config")]["change"] == "added"
    assert configs[("ConfigMap", "static-config")]["immutableViolation"] == "its data changed"
    assert ("ConfigMap", "web-config") not in configs
    assert {(u["name"], u["change"]) for u in data["unused"]} == {
        ("orphan", "changed"),
        ("legacy-token", "removed"),
    }
    by_code = {f["code"]: f for f in data["findings"]}
    assert by_code["immutable-config"]["level"] == "error"
    assert by_code["immutable-config"]["new"] is True
    assert by_code["missing-reference"]["new"] is True  # search-credentials
    assert by_code["no-restart"]["new"] is False
    assert data["summary"]["text"].startswith("1 workload will restart; 4 workloads are affected")
    assert len({f["fingerprint"] for f in data["findings"]}) == len(data["findings"])


def test_markdown_mermaid_shape() -> None:
    _, out, _ = report("old.yaml", "new.yaml")
    block = re.search(r"```mermaid\n(.*?)```", out, re.DOTALL)
    assert block is not None
    lines = block.group(1).splitlines()
    assert lines[0] == "graph LR"
    node = re.compile(r'^  \w+(\["[^"]+"\]|\[\("[^"]+"\)\]):::\w+$')
    edge = re.compile(r'^  \w+ (-->|-\.->)\|"[^"]+"\| \w+$')
    cls = re.compile(r"^  classDef \w+ .+$")
    assert all(node.match(x) or edge.match(x) or cls.match(x) for x in lines[1:]), lines
    solid = [x for x in lines if " -->|" in x]
    dotted = [x for x in lines if " -.->|" in x]
    assert len(solid) == 3 and all(x.endswith("w__Deployment__shop__api") for x in solid)
    assert len(dotted) == 4  # reports, postgres, migrate, worker
    declared = {m.group(1) for x in lines if (m := re.match(r"^  (\w+)[\[(]", x))}
    for x in solid + dotted:
        a, _, rest = x.strip().partition(" ")
        assert a in declared and rest.rsplit(" ", 1)[1] in declared


def test_summary_line_leads_the_markdown() -> None:
    _, out, _ = report("old.yaml", "new.yaml")
    assert out.splitlines()[0] == (
        "### cmhash: 1 workload will restart; 4 workloads are affected but "
        "will not restart; 1 workload added; 4 ConfigMaps and 2 Secrets changed; 1 error"
    )


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ((), 0),
        (("--fail-on", "error"), 1),
        (("--fail-on", "warning"), 1),
    ],
)
def test_fail_on(args: tuple[str, ...], code: int) -> None:
    got, out, err = report("old.yaml", "new.yaml", "--format", "json", *args)
    assert got == code, err
    assert json.loads(out)["summary"]["errors"] == 1  # the report is written either way


def test_fail_on_warning_without_errors(tmp_path: Path) -> None:
    old = CASE / "old.yaml"
    (tmp_path / "a.yaml").write_bytes(old.read_bytes())
    new = old.read_text().replace("LOG_LEVEL: info", "LOG_LEVEL: debug")
    (tmp_path / "b.yaml").write_text(new)
    assert report("a.yaml", "b.yaml", "--fail-on", "error", cwd=tmp_path)[0] == 0
    assert report("a.yaml", "b.yaml", "--fail-on", "warning", cwd=tmp_path)[0] == 1  # OnDelete


def test_identical_renders() -> None:
    code, out, _ = report("old.yaml", "old.yaml", "--format", "text")
    assert code == 0
    assert out.splitlines()[0] == "No workload will restart; no ConfigMap or Secret changed"
    assert "Will restart" not in out


def test_empty_old_side_means_everything_is_added(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("# nothing rendered yet\n")
    code, out, err = report(str(tmp_path / "empty.yaml"), "new.yaml", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["restart"] == [] and data["notRestarting"] == []
    assert {c["change"] for c in data["configs"]} == {"added"}


def test_stdin_for_one_side() -> None:
    res = run_cmhash(
        ["report", "--no-config", "-", "new.yaml", "--format", "json"],
        stdin=(CASE / "old.yaml").read_bytes(),
        cwd=CASE,
    )
    assert res.code == 0, res.stderr
    assert [w["name"] for w in json.loads(res.out)["restart"]] == ["api"]


def test_usage_errors(tmp_path: Path) -> None:
    code, out, err = report("-", "-")
    assert (code, out) == (2, "")
    assert err == "cmhash: OLD and NEW cannot both be - (stdin)\n"
    tpl = tmp_path / "t.j2"
    tpl.write_text("{{ report.summary.text }}\n")
    code, _, err = report("old.yaml", "new.yaml", "--format", "json", "--template", str(tpl))
    assert code == 2 and "--template applies to --format markdown or text" in err


def test_bad_input_names_the_side(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
    code, out, err = report(str(tmp_path / "old.yaml"), "new.yaml")
    assert code == 2 and out == ""
    assert re.fullmatch(r"cmhash: .*old\.yaml:\d+:\d+: .+\n", err), err


def test_user_template(tmp_path: Path) -> None:
    tpl = tmp_path / "mine.md.j2"
    tpl.write_text(
        "{{ report.summary.restart }} to restart:\n"
        "{% for w in report.restart %}- {{ w.name|code }}\n{% endfor %}"
        "{% include 'report.md.j2' %}"
    )
    code, out, err = report("old.yaml", "new.yaml", "--template", str(tpl))
    assert code == 0, err
    assert out.startswith("1 to restart:\n- `api`\n### cmhash: 1 workload will restart")


def test_user_template_error_is_one_line(tmp_path: Path) -> None:
    tpl = tmp_path / "bad.j2"
    tpl.write_text("line one\n{{ report.nope }}\n")
    code, out, err = report("old.yaml", "new.yaml", "--template", str(tpl))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "bad.j2" in err and "template error" in err
    tpl.write_text("{% for %}\n")
    code, _, err = report("old.yaml", "new.yaml", "--template", str(tpl))
    assert code == 2 and "bad.j2:1: template error" in err


def test_whatever_a_user_template_raises_is_one_line(tmp_path: Path) -> None:
    # the template is input: an error inside it (or a file that is not UTF-8) is exit 2
    # with its file and line, not exit 3 "internal error"
    tpl = tmp_path / "mine.j2"
    out_file = tmp_path / "report.md"
    for body, want in (
        ("ok\n{{ report.summary.text }}\n{{ 1 / 0 }}\n", ":3: template error: ZeroDivisionError"),
        ("{{ report.summary.restart + 'x' }}\n", ":1: template error: TypeError"),
        (b"caf\xe9 {{ 1 }}\n", ": template error: not UTF-8 (byte 3"),
        ("{% include 'gone.j2' %}\n", ":1: template error: no template gone.j2"),
    ):
        if isinstance(body, bytes):
            tpl.write_bytes(body)
        else:
            tpl.write_text(body)
        code, out, err = report("old.yaml", "new.yaml", "--template", str(tpl), "-o", str(out_file))
        assert (code, out) == (2, ""), err
        assert err.startswith(f"cmhash: {tpl}{want}") and err.count("\n") == 1, err
        assert not out_file.exists()


def test_a_secret_value_copied_elsewhere_is_masked(tmp_path: Path) -> None:
    # a chart that writes the password into a Secret and, as well, into a ConfigMap's
    # DATABASE_URL, an argument and a plain env value: the report showed it in the
    # value diff and the causes; every format now shows *** in its place
    def side(pw: str, pem: str) -> str:
        return (
            f"apiVersion: v1\nkind: Secret\nmetadata: {{name: db}}\n"
            f"stringData:\n  password: {pw}\n  key.pem: |\n    ---BEGIN---\n    {pem}\n"
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata:\n"
            f"  DATABASE_URL: postgres://app:{pw}@db/app\n"
            f"  ca.pem: |\n    ---BEGIN---\n    {pem}\n"
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n"
            "  selector: {matchLabels: {app: api}}\n  template:\n"
            "    metadata: {labels: {app: api}}\n    spec:\n      containers:\n"
            f"      - name: c\n        image: x:1\n        args: [--db-password={pw}]\n"
            f"        env: [{{name: PW, value: {pw}}}]\n"
            "        envFrom: [{configMapRef: {name: app}}, {secretRef: {name: db}}]\n"
        )

    values = ["old-db-password-value", "new-db-password-value", "MIIBuzCCAS", "MIIBvjCCAT"]
    (tmp_path / "o.yaml").write_text(side(values[0], values[2]))
    (tmp_path / "n.yaml").write_text(side(values[1], values[3]))
    for fmt in sorted(FORMATS):
        code, out, err = report("o.yaml", "n.yaml", "--format", fmt, cwd=tmp_path)
        assert code == 0, err
        assert_no_secret(out, values)
    code, out, _ = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    data = json.loads(out)
    diffs = {c["name"]: c.get("valueDiffs") for c in data["configs"]}
    assert diffs["app"] == {
        "DATABASE_URL": "-postgres://app:***@db/app\n+postgres://app:***@db/app",
        "ca.pem": "@@ -1,3 +1,3 @@\n ***\n-***\n+***\n ",  # (---BEGIN--- is a Secret's line)
    }
    shown = [(c["field"], c["old"], c["new"]) for c in data["restart"][0]["causes"][2:]]
    assert shown == [
        ("spec.containers[c].args", '["--db-password=***"]', '["--db-password=***"]'),
        ("spec.containers[c].env[PW]", "***", "***"),
    ]


def test_a_secret_names_content_hash_never_shows(tmp_path: Path) -> None:
    # kustomize's secretGenerator names a Secret after a hash of its data (creds-
    # 5f46k2f562): as for cmhash's own --versioned names, the report shows creds-…
    # (the causes, the objects, the template values, the findings), never the suffix
    def side(suffix: str, cm: str) -> str:
        return (
            f"apiVersion: v1\nkind: Secret\nmetadata: {{name: creds-{suffix}}}\n"
            "stringData: {password: x}\n---\n"
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: app-{cm}}}\ndata: {{a: b}}\n"
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n"
            "  selector: {matchLabels: {app: api}}\n  template:\n"
            "    metadata: {labels: {app: api}}\n    spec:\n      containers:\n"
            "      - name: c\n        image: x:1\n        envFrom:\n"
            f"        - secretRef: {{name: creds-{suffix}}}\n"
            f"        - configMapRef: {{name: app-{cm}}}\n"
            "        - secretRef: {name: gone-7bc2g9h4m8}\n"  # not in the input: a finding
        )

    (tmp_path / "o.yaml").write_text(side("6kh26cf94g", "tkkdd9fftc"))
    (tmp_path / "n.yaml").write_text(side("5f46k2f562", "ttchg99576"))
    for fmt in sorted(FORMATS):
        code, out, err = report("o.yaml", "n.yaml", "--format", fmt, cwd=tmp_path)
        assert code == 0, err
        for suffix in ("6kh26cf94g", "5f46k2f562", "7bc2g9h4m8"):
            assert suffix not in out, (fmt, suffix)
    code, out, _ = report("o.yaml", "n.yaml", "--format", "json", cwd=tmp_path)
    data = json.loads(out)
    assert sorted(c["name"] for c in data["configs"]) == [
        "app-tkkdd9fftc",  # a ConfigMap's name stays as it is
        "app-ttchg99576",
        "creds-…",
        "creds-…",
    ]
    assert any("gone-…" in f["message"] for f in data["findings"])
    # the diagram: the two Secrets now shown by one name are one node, both changes said
    code, out, _ = report("o.yaml", "n.yaml", cwd=tmp_path)
    nodes = [ln for ln in out.splitlines() if "Secret/creds-…" in ln]
    assert len(nodes) == 1 and "(added, removed)" in nodes[0], nodes


def test_output_file(tmp_path: Path) -> None:
    out_file = tmp_path / "report.md"
    code, out, err = report("old.yaml", "new.yaml", "-o", str(out_file))
    assert (code, out, err) == (0, "", "")
    assert out_file.read_text() == (CASE / "expected.md").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".cmhash-")]
    code, _, err = report("old.yaml", "new.yaml", "-o", str(tmp_path / "no" / "r.md"))
    assert code == 2 and "does not exist" in err


def test_markdown_cells_are_escaped() -> None:
    """A message with a pipe or markup cannot break the table."""
    from cmhash.report.render import _code, _md

    assert _md("a|b *c* <x>") == r"a\|b \*c\* \<x\>"
    assert _code("k|v") == r"`k\|v`"
    assert _code("a`b") == "`` a`b ``"


def test_codequality_shape() -> None:
    _, out, _ = report("old.yaml", "new.yaml", "--format", "codequality")
    issues = json.loads(out)
    assert issues and all(
        set(i) == {"description", "check_name", "fingerprint", "severity", "location"}
        for i in issues
    )
    assert {i["severity"] for i in issues} <= {"info", "minor", "major", "critical", "blocker"}
    assert all(
        i["location"]["path"] == "new.yaml" and i["location"]["lines"]["begin"] >= 1 for i in issues
    )
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_fingerprints_survive_moved_lines(tmp_path: Path) -> None:
    """GitLab matches findings between pipelines by fingerprint: a line shift is not a new
    finding."""
    new = (CASE / "new.yaml").read_text()
    (tmp_path / "old.yaml").write_bytes((CASE / "old.yaml").read_bytes())
    (tmp_path / "new.yaml").write_text(new)
    (tmp_path / "shifted.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: extra\n---\n" + new
    )
    a = json.loads(report("old.yaml", "new.yaml", "--format", "codequality", cwd=tmp_path)[1])
    b = json.loads(report("old.yaml", "shifted.yaml", "--format", "codequality", cwd=tmp_path)[1])
    assert [i["check_name"] for i in a] == [i["check_name"] for i in b]
    assert [i["location"]["lines"]["begin"] + 5 for i in a] == [
        i["location"]["lines"]["begin"] for i in b
    ]
    # the path is part of what a finding is about; the line is not
    assert [i["fingerprint"] for i in a] != [i["fingerprint"] for i in b]
    (tmp_path / "new.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: extra\n---\n" + new
    )
    c = json.loads(report("old.yaml", "new.yaml", "--format", "codequality", cwd=tmp_path)[1])
    assert [i["fingerprint"] for i in a] == [i["fingerprint"] for i in c]


# ------------------------------------------------------------------ a real render


def _argocd_pair(install: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Argo CD's install.yaml twice, as two renders of one chart with different values:
    argocd-cmd-params-cm and a redis Secret gain data (changed between the sides), the
    GPG keys ConfigMap is immutable and changes, the controller StatefulSet is OnDelete."""
    text = install.read_text()

    def render(log_level: str, redis_auth: str, gpg: str) -> str:
        out = text.replace(
            "    app.kubernetes.io/name: argocd-cmd-params-cm\n"
            "    app.kubernetes.io/part-of: argocd\n  name: argocd-cmd-params-cm\n",
            "    app.kubernetes.io/name: argocd-cmd-params-cm\n"
            "    app.kubernetes.io/part-of: argocd\n  name: argocd-cmd-params-cm\n"
            f"data:\n  server.log.level: {log_level}\n  controller.log.level: {log_level}\n"
            "  reposerver.log.level: info\n",
            1,
        )
        out = out.replace(
            "    app.kubernetes.io/name: argocd-gpg-keys-cm\n"
            "    app.kubernetes.io/part-of: argocd\n  name: argocd-gpg-keys-cm\n",
            "    app.kubernetes.io/name: argocd-gpg-keys-cm\n"
            "    app.kubernetes.io/part-of: argocd\n  name: argocd-gpg-keys-cm\n"
            f"immutable: true\ndata:\n  {gpg}: |\n    -----BEGIN PGP PUBLIC KEY BLOCK-----\n",
            1,
        )
        out = out.replace(
            "  serviceName: argocd-application-controller\n",
            "  serviceName: argocd-application-controller\n  updateStrategy:\n    type: OnDelete\n",
            1,
        )
        b64 = base64.b64encode(redis_auth.encode()).decode()
        return out + (
            "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: argocd-redis\n"
            f"type: Opaque\ndata:\n  auth: {b64}\n"
        )

    old, new = tmp_path / "target.yaml", tmp_path / "mr.yaml"
    old.write_text(render("info", "redis-auth-before-0001", "4AEE18F83AFDEB23"))
    new.write_text(render("debug", "redis-auth-after-0002", "5BFF29A94BFEFC34"))
    assert old.read_text() != text and new.read_text() != old.read_text()
    return old, new


ARGOCD_INSTALL = "argo-cd/manifests/install.yaml"


# The vendored excerpt is every document of install.yaml but its three CRDs (1.8 MB of
# schema that references nothing); the whole file runs next to ../shared.
@pytest.mark.parametrize(
    "install",
    [
        pytest.param(CORPUS / "argo-cd" / "manifests" / "install.excerpt.yaml", id="excerpt"),
        *shared_params(SHARED_CORPUS / ARGOCD_INSTALL, "shared"),
    ],
)
def test_report_on_argocd_renders(install: Path, tmp_path: Path) -> None:
    old, new = _argocd_pair(install, tmp_path)
    outputs = {}
    for fmt in FORMATS:
        code, out, err = report(old.name, new.name, "--format", fmt, cwd=tmp_path)
        assert code == 0, err
        outputs[fmt] = out
    assert_no_secret("".join(outputs.values()), ["redis-auth-before-0001", "redis-auth-after-0002"])
    data = json.loads(outputs["json"])
    restart = {w["name"]: w for w in data["restart"]}
    # every Deployment that reads the redis auth key, a changed log level or the GPG keys
    assert set(restart) == {
        "argocd-server",
        "argocd-repo-server",
        "argocd-redis",
        "argocd-applicationset-controller",
    }
    server = {(c["kind"], c["name"]): c["keys"] for c in restart["argocd-server"]["causes"]}
    assert server == {
        ("ConfigMap", "argocd-cmd-params-cm"): ["server.log.level"],
        ("Secret", "argocd-redis"): ["auth"],
    }
    repo = {(c["kind"], c["name"]) for c in restart["argocd-repo-server"]["causes"]}
    # reposerver.log.level, which it reads, did not change
    assert repo == {("Secret", "argocd-redis"), ("ConfigMap", "argocd-gpg-keys-cm")}
    (ctrl,) = data["notRestarting"]
    assert ctrl["kind"] == "StatefulSet" and "OnDelete" in ctrl["reason"]
    assert {(c["name"], tuple(c["keys"])) for c in ctrl["causes"]} == {
        ("argocd-cmd-params-cm", ("controller.log.level",)),
        ("argocd-redis", ("auth",)),
    }
    configs = {c["name"]: c for c in data["configs"]}
    assert set(configs) == {"argocd-cmd-params-cm", "argocd-gpg-keys-cm", "argocd-redis"}
    assert configs["argocd-redis"]["keysChanged"] == ["auth"]
    assert configs["argocd-gpg-keys-cm"]["keysAdded"] == ["5BFF29A94BFEFC34"]
    (imm,) = [f for f in data["findings"] if f["code"] == "immutable-config"]
    assert imm["level"] == "error" and imm["file"] == "mr.yaml"
    assert "argocd-gpg-keys-cm" in imm["message"]
    # the redis Secret now exists: its missing-reference warnings are gone
    assert not [
        f
        for f in data["findings"]
        if f["code"] == "missing-reference" and "argocd-redis" in f["message"]
    ]
    md = outputs["markdown"]
    assert md.startswith(
        "### cmhash: 4 workloads will restart; 1 workload is affected "
        "but will not restart; 2 ConfigMaps and 1 Secret "
        "changed; 1 error\n"
    )
    assert "| `StatefulSet/argocd-application-controller` |" in md
    code, _, _ = report(old.name, new.name, "--fail-on", "error", cwd=tmp_path)
    assert code == 1


def test_docs_example_is_real_output() -> None:
    """Each line of the report page's example is a line of the golden output."""
    readme = (ROOT / "docs" / "report.md").read_text()
    start = readme.index("Example (`cd tests/fixtures/report && cmhash report old.yaml")
    lines = readme[start:].splitlines()[3:]  # the block follows the "Example" sentence
    block = lines[: next(i for i, x in enumerate(lines) if not x.startswith(">"))]
    quoted = [x[2:] for x in block if x.startswith("> ") and "…" not in x]
    golden = (CASE / "expected.md").read_text().splitlines()
    assert len(quoted) > 10
    for line in quoted:
        assert line in golden, line


def test_exclude_secrets_and_opted_out_config(tmp_path: Path) -> None:
    """A Secret change under --exclude-secrets, or a change to an opted-out ConfigMap,
    restarts nothing: the report says so instead of calling the object unused."""

    def stream(v: str) -> str:
        return (
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: {v}\n"
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
            f"    cmhash.io/skip: 'true'\ndata:\n  k: {v}\n---\n"
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n"
            "  template:\n    spec:\n      containers:\n      - name: a\n        envFrom:\n"
            "        - secretRef: {name: s}\n        - configMapRef: {name: c}\n"
        )

    (tmp_path / "a.yaml").write_text(stream("one"))
    (tmp_path / "b.yaml").write_text(stream("two"))
    code, out, err = report(
        "--exclude-secrets", "a.yaml", "b.yaml", "--format", "json", cwd=tmp_path
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["restart"] == [] and data["unused"] == []
    (app,) = data["notRestarting"]
    assert app["reason"] == (
        "ConfigMap/c is opted out (cmhash.io/skip); Secrets are left "
        "out of checksums (--exclude-secrets)"
    )
    data = json.loads(report("a.yaml", "b.yaml", "--format", "json", cwd=tmp_path)[1])
    (app,) = data["restart"]
    assert [(c["kind"], c["name"]) for c in app["causes"]] == [("Secret", "s")]


def test_mermaid_labels_cannot_break_out() -> None:
    from cmhash.mermaid import report_graph as to_mermaid

    data = {
        "configs": [
            {
                "kind": "ConfigMap",
                "name": 'a"b',
                "namespace": "",
                "change": "changed",
                "immutableViolation": None,
            }
        ],
        "restart": [
            {
                "kind": "Deployment",
                "name": "w",
                "namespace": "",
                "causes": [
                    {"kind": "ConfigMap", "name": 'a"b', "keys": ['k"1'], "change": "changed"}
                ],
            }
        ],
        "notRestarting": [],
    }
    out = to_mermaid(data)
    assert '"a"b' not in out and "a#quot;b" in out and "k#quot;1" in out


def _pair(tmp_path: Path, old: str, new: str, *args: str) -> dict:  # type: ignore[type-arg]
    (tmp_path / "a.yaml").write_text(old)
    (tmp_path / "b.yaml").write_text(new)
    code, out, err = report(*args, "a.yaml", "b.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n{extra}data:\n  a: {a}\n  b: '2'\n"
SPEC = (
    "    spec:\n      containers:\n      - name: x\n        env:\n"
    "        - name: A\n          valueFrom: {{configMapKeyRef: {{name: c, key: {key}}}}}\n"
)
WORKLOADS = (
    "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: job\nspec:\n"
    "  template:\n" + SPEC + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pod\nspec:\n"
    "  containers:\n  - name: x\n    envFrom: [{{configMapRef: {{name: c}}}}]\n"
    "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: rs\nspec:\n"
    "  template:\n" + SPEC
)


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (
            (),
            {
                "job": "not annotated: Job pod templates are immutable (--jobs to opt in)",
                "pod": "not annotated: bare Pods are not annotated (--pods to opt in)",
                "rs": "a ReplicaSet has no rollout: only pods created later get the new template",
            },
        ),
        (
            ("--jobs", "--pods"),
            {
                # knowledge/rollout.py: job-immutable, pod-updated
                "job": "a Job's spec.template is immutable: kubectl apply is refused while the "
                "Job exists; delete and re-create it (or give it a new name)",
                "pod": "a bare Pod is updated in place (its annotations): no container restarts",
                "rs": "a ReplicaSet has no rollout: only pods created later get the new template",
            },
        ),
    ],
)
def test_kinds_that_never_restart(
    tmp_path: Path, args: tuple[str, ...], why: dict[str, str]
) -> None:
    data = _pair(
        tmp_path,
        CM.format(extra="", a="'1'") + WORKLOADS.format(key="a"),
        CM.format(extra="", a="'9'") + WORKLOADS.format(key="a"),
        *args,
    )
    assert data["restart"] == []
    assert {w["name"]: w["reason"] for w in data["notRestarting"]} == why


def test_reference_changes_are_causes(tmp_path: Path) -> None:
    dep = (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n"
        "  template:\n" + SPEC
    )
    old = (
        CM.format(extra="", a="'1'")
        + dep.format(name="same", key="a")
        + dep.format(name="moves", key="a")
    )
    new = (
        CM.format(extra="", a="'1'")
        + dep.format(name="same", key="a")
        + dep.format(name="moves", key="b")
    )
    data = _pair(tmp_path, old, new)
    (w,) = data["restart"]  # reads key b instead of a: no object changed, the reference did
    assert w["name"] == "moves"
    assert w["causes"] == [
        {
            "type": "references",
            "kind": None,
            "name": None,
            "change": "references changed",
            "keys": [],
        },
        {
            "type": "env",
            "field": "spec.containers[x].env[A]",
            "change": "changed",
            "old": "from ConfigMap c key a",
            "new": "from ConfigMap c key b",
        },
    ]
    env_from = (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: x\n"
        "        envFrom: [{configMapRef: {name: %s}}]\n"
    )
    data = _pair(
        tmp_path,
        CM.format(extra="", a="'1'") + env_from % "c",
        CM.format(extra="", a="'1'")
        + CM.replace("name: c", "name: e").format(extra="", a="'1'").join(["---\n", ""])
        + env_from % "e",
    )
    (w,) = data["restart"]
    assert sorted((c["name"], c["change"]) for c in w["causes"] if c["type"] == "config") == [
        ("c", "no longer referenced"),
        ("e", "newly referenced"),
    ]


def test_secret_type_and_immutable_unset(tmp_path: Path) -> None:
    def secret(type_: str, immutable: str) -> str:
        return (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
            + immutable
            + f"type: {type_}\nstringData:\n  z: '1'\n  w: '2'\n---\n"
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n"
            "  template:\n    spec:\n      containers:\n      - name: x\n"
            "        env:\n        - name: Y\n"
            "          valueFrom: {secretKeyRef: {name: s, key: w}}\n"
        )

    # (a plain key y is the boolean true to kubectl: w here)
    data = _pair(tmp_path, secret("Opaque", ""), secret("example.com/other", ""))
    (c,) = data["configs"]
    assert c["typeChanged"] is True and c["keysChanged"] == []
    assert data["restart"][0]["causes"] == [
        {"type": "config", "kind": "Secret", "name": "s", "change": "changed", "keys": []}
    ]
    data = _pair(tmp_path, secret("Opaque", "immutable: true\n"), secret("Opaque", ""))
    (c,) = data["configs"]
    assert c["immutableViolation"] == "immutable cannot be unset"
    assert [f["code"] for f in data["findings"]] == ["immutable-config"]
    changed = secret("Opaque", "immutable: true\n").replace(
        "  w: '2'\n", "  w: '4'\n  x: '5'\n  t: '6'\n  v: '7'\n  u: '8'\n"
    )
    data = _pair(tmp_path, secret("Opaque", "immutable: true\n"), changed)
    (f,) = data["findings"]
    # sorted, whatever the hash seed (5 keys: a set's order matches by chance 1 in 120)
    assert "its data changed (keys t, u, v, w, x): " in f["message"]


DEP = (
    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n{meta}spec:\n"
    "  template:\n    spec:\n      containers:\n      - name: x\n"
    "        envFrom: [{{configMapRef: {{name: c}}}}]\n"
)


@pytest.mark.parametrize(
    ("new", "why"),
    [
        (
            DEP.format(meta=""),
            "checksum annotation removed (it uses no ConfigMap/Secret of the input any more)",
        ),
        (
            CM.format(extra="", a="'1'")
            + DEP.format(meta="  annotations:\n    cmhash.io/skip: 'true'\n"),
            "checksum annotation removed (not annotated: opted out (cmhash.io/skip))",
        ),
    ],
)
def test_a_checksum_that_disappears_is_a_restart(tmp_path: Path, new: str, why: str) -> None:
    """The ConfigMap leaves NEW, or the workload opts out in NEW: the rendered pod
    template loses the annotation, so the pods roll, and the report names the cause."""
    data = _pair(tmp_path, CM.format(extra="", a="'1'") + DEP.format(meta=""), new)
    (w,) = data["restart"]
    assert w["name"] == "d"
    assert {"type": "checksum", "kind": None, "name": None, "change": why, "keys": []} in w[
        "causes"
    ]
    if "opted out" not in why:  # the object itself is named too
        removed = {"kind": "ConfigMap", "name": "c", "change": "removed", "keys": ["a", "b"]}
        assert {"type": "config", **removed} in w["causes"]
    assert data["summary"]["text"].startswith("1 workload will restart")


def test_a_checksum_that_appears_is_a_restart(tmp_path: Path) -> None:
    old = CM.format(extra="", a="'1'") + DEP.format(
        meta="  annotations:\n    cmhash.io/skip: 'true'\n"
    )
    data = _pair(tmp_path, old, CM.format(extra="", a="'1'") + DEP.format(meta=""))
    (w,) = data["restart"]
    assert w["causes"] == [
        {
            "type": "checksum",
            "kind": None,
            "name": None,
            "change": "checksum annotation added",
            "keys": [],
        }
    ]


def test_a_kept_annotation_is_no_restart(tmp_path: Path) -> None:
    """Committed output (cmhash -i) keeps its checksum when the workload opts out: the
    applied template does not change, so nothing rolls."""
    annotated = run_cmhash(
        ["--no-config", "-"], stdin=(CM.format(extra="", a="'1'") + DEP.format(meta="")).encode()
    ).out
    opted = annotated.replace(
        "  name: d\n", "  name: d\n  annotations:\n    cmhash.io/skip: 'true'\n"
    )
    data = _pair(tmp_path, annotated, opted)
    assert data["restart"] == []


def test_deploymentconfig_without_configchange_trigger(tmp_path: Path) -> None:
    dc = (
        "---\napiVersion: apps.openshift.io/v1\nkind: DeploymentConfig\nmetadata:\n"
        "  name: dc\nspec:\n  triggers:\n  - type: ImageChange\n  template:\n" + SPEC
    )
    data = _pair(
        tmp_path,
        CM.format(extra="", a="'1'") + dc.format(key="a"),
        CM.format(extra="", a="'9'") + dc.format(key="a"),
    )
    assert data["restart"] == []
    (w,) = data["notRestarting"]
    assert "no ConfigChange trigger" in w["reason"]
    assert [f["code"] for f in data["findings"]] == ["no-restart"]
