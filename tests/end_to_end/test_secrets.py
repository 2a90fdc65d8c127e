"""No Secret value, decoded or encoded, in stderr, logs, diffs or error messages."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from conftest import run_cmhash

PLAIN = "s3cr3t-PLAIN-7f2a91"  # in data, base64-encoded
TOKEN = "tok-STRINGDATA-9b1c44"  # in stringData
BLOB = "bin-BINARYDATA-55aa01"  # a ConfigMap's binaryData is not secret; a Secret's is
B64 = base64.b64encode(PLAIN.encode()).decode()
NEEDLES = [PLAIN, B64, TOKEN, base64.b64encode(TOKEN.encode()).decode(), B64[:12], TOKEN[:12]]

SECRET = f"""apiVersion: v1
kind: Secret
metadata:
  name: creds
data:
  password: {B64}
stringData:
  token: {TOKEN}
"""
DEP = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
      - name: main
        env:
        - name: P
          valueFrom:
            secretKeyRef: {name: creds, key: password}
        - name: M
          valueFrom:
            secretKeyRef: {name: creds, key: missing-key}
"""
# A bare Pod right after a Secret in one List: the inserted annotation is within three
# lines of the Secret's data, where a diff would show it as context.
LISTED = f"""apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Secret
  metadata:
    name: creds
  stringData:
    token: {TOKEN}
  data:
    password: {B64}
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
  spec:
    containers:
    - name: c
      envFrom:
      - secretRef: {{name: creds}}
"""


def _clean(*texts: str | bytes) -> None:
    for text in texts:
        s = text.decode() if isinstance(text, bytes) else text
        for needle in NEEDLES:
            assert needle not in s, f"secret value leaked: {needle!r} in {s!r}"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "secret.yaml").write_text(SECRET)
    (tmp_path / "app.yaml").write_text(DEP)
    return tmp_path


def test_inject_check_diff_in_place_and_log(tree: Path) -> None:
    log = tree.parent / "cmhash.log"
    env = {"CMHASH_LOG": str(log)}
    res = run_cmhash(["--no-config", str(tree)], env=env)
    assert res.code == 0 and "missing-key" in res.stderr
    _clean(res.stderr)
    res = run_cmhash(["--no-config", "--check", str(tree)], env=env)
    assert res.code == 1
    _clean(res.stderr, res.stdout)
    res = run_cmhash(["--no-config", "--diff", str(tree)], env=env)
    assert b"checksum/config" in res.stdout
    _clean(res.stderr, res.stdout)
    res = run_cmhash(["--no-config", "-i", str(tree)], env=env)
    assert res.code == 0
    _clean(res.stderr)
    _clean(log.read_text())


def test_diff_never_shows_secret_lines_as_context() -> None:
    res = run_cmhash(["--no-config", "--pods", "--diff", "-"], stdin=LISTED.encode())
    assert res.code == 0 and b"+      checksum/config" in res.stdout
    _clean(res.stdout, res.stderr)
    # still a patch, with no context lines
    body = [line for line in res.stdout.decode().splitlines()[2:] if not line.startswith("@@")]
    assert body and all(line.startswith("+") for line in body), body


def test_secret_spans_are_worked_out_only_when_asked() -> None:
    """A run finds where its Secrets are only for what needs it (a diff's context, the
    mention scan of versioning): a plain inject does not pay for it; asked, every
    Secret's span is there, and a ConfigMap's is not."""
    from cmhash.app import pipeline as app
    from cmhash.read.source import SourceText
    from cmhash.settings.values import Settings

    text = SECRET + "---\n" + DEP + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
    src = SourceText("x.yaml", text)
    result = app.run([src], Settings())
    spans = result.secret_spans
    assert isinstance(spans, app.SecretSpans) and "_all" not in vars(spans)  # (not yet)
    assert spans[id(src)] == [(0, len(SECRET))]
    assert dict(spans) == {id(src): [(0, len(SECRET))]}


@pytest.mark.parametrize("parser", ["fast", "exact"])
@pytest.mark.parametrize(
    "broken",
    [
        f"data:\n  password: '!{PLAIN}!'\n",  # invalid base64
        f"data:\n  password: {{{PLAIN}: x}}\n",  # not a string
        f'stringData:\n  token: "{TOKEN}\n',  # unclosed quote
        f"stringData:\n  token: {TOKEN}: oops\n",  # stray colon
        f"stringData:\n  token: !vault {TOKEN}\n",  # unknown tag
        f"stringData:\n  token: {TOKEN}\n  token: {TOKEN}\n",  # duplicate key
        f"stringData:\n  token: !{TOKEN}\n",  # the value as a tag
        f"stringData:\n  token: !<{TOKEN}> x\n",  # a verbatim tag
        f"stringData:\n  token: *{TOKEN}\n",  # the value as an undefined alias
        f"stringData:\n  token: &{TOKEN} [*{TOKEN}]\n",  # recursive alias
        f'stringData:\n  token: "a\\q{TOKEN}"\n',  # unknown escape
        f"stringData:\n  token: %{TOKEN}\n",  # '%' cannot start a plain scalar
        f"stringData:\n  token: @{TOKEN}\n",  # '@' neither
    ],
)
def test_error_messages_carry_no_value(parser: str, broken: str) -> None:
    text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n" + broken
    res = run_cmhash(["--no-config", "--parser", parser, "-"], stdin=text.encode())
    assert res.code == 2 and res.stdout == b""
    _clean(res.stderr)


def test_duplicate_secret_and_verbose(tree: Path) -> None:
    (tree / "again.yaml").write_text(SECRET)
    res = run_cmhash(["--no-config", "-v", str(tree)])
    assert "duplicate-object" in res.stderr
    _clean(res.stderr)


def test_keyed_hashing_and_exclusion(tree: Path) -> None:
    plain = run_cmhash(["--no-config", str(tree / "app.yaml"), str(tree / "secret.yaml")])
    keyed = run_cmhash(
        ["--no-config", "--secret-key-env", "K", str(tree / "app.yaml"), str(tree / "secret.yaml")],
        env={"K": "a-long-ci-secret"},
    )
    other = run_cmhash(
        ["--no-config", "--secret-key-env", "K", str(tree / "app.yaml"), str(tree / "secret.yaml")],
        env={"K": "another-key"},
    )
    values = {r.stdout.split(b"checksum/config: ")[1][:66] for r in (plain, keyed, other)}
    assert len(values) == 3  # the key changes the value: it cannot be recomputed without it
    missing = run_cmhash(["--no-config", "--secret-key-env", "NOPE", str(tree)])
    assert missing.code == 2 and "NOPE" in missing.stderr
    excluded = run_cmhash(["--no-config", "--exclude-secrets", str(tree)])
    assert b"checksum/config" not in excluded.stdout


def test_krm_results_carry_no_value() -> None:
    items = "\n".join("  " + line for line in SECRET.splitlines())
    resource_list = (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- "
        + items[2:]
        + "\n- "
        + "\n  ".join(DEP.splitlines())
        + "\n"
        "functionConfig:\n  apiVersion: cmhash.io/v1\n  kind: CmhashTransformer\n"
    )
    res = run_cmhash(["--no-config", "-"], stdin=resource_list.encode())
    assert res.code == 0 and b"missing-key" in res.stdout.split(b"results:")[1]
    results = res.stdout.split(b"results:")[1]
    _clean(results, res.stderr)
    broken = resource_list.replace(f"password: {B64}", f"password: '!{PLAIN}!'")
    res = run_cmhash(["--no-config", "-"], stdin=broken.encode())
    assert res.code == 2 and b"not valid base64" in res.stdout.split(b"results:")[-1]
    _clean(res.stdout.split(b"results:")[-1], res.stderr)


ONE_LINE_JSON = (
    '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", '
    '"kind": "Secret", "metadata": {"name": "creds"}, "stringData": {"token": "'
    + TOKEN
    + '"}}, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": '
    '{"name": "app"}, "spec": {"template": {"spec": {"containers": [{"name": "m", '
    '"envFrom": [{"secretRef": {"name": "creds"}}]}]}}}}]}\n'
)


def test_diff_withholds_a_hunk_whose_changed_line_holds_a_secret() -> None:
    """One-line JSON: the Secret shares the edited line with the workload. The hunk is
    left out (and said so, by line), never printed."""
    res = run_cmhash(["--no-config", "--diff", "-"], stdin=ONE_LINE_JSON.encode())
    assert res.code == 0
    assert res.stdout == b""
    assert res.stderr.strip() == (
        "cmhash: <stdin>:1: diff hunk not shown: the changed line also holds Secret data"
    )
    _clean(res.stdout, res.stderr)
    # the change itself is real: --check still reports it, and the stream carries it
    assert run_cmhash(["--no-config", "--check", "-"], stdin=ONE_LINE_JSON.encode()).code == 1
    assert (
        b"checksum/config" in run_cmhash(["--no-config", "-"], stdin=ONE_LINE_JSON.encode()).stdout
    )


@pytest.mark.parametrize("seed", range(30))
def test_diff_format_matches_difflib(seed: int) -> None:
    """Without Secret lines, the diff is exactly difflib's unified diff (a/ b/ labels)."""
    import difflib
    import random

    from cmhash.write.diff import Replacement, unified_diff

    rnd = random.Random(seed)
    old = [f"line {rnd.randrange(8)}\n" for _ in range(rnd.randrange(0, 40))]
    added: dict[int, str] = {}  # line of old -> the lines inserted before it
    for _ in range(rnd.randrange(1, 5)):
        at = rnd.randrange(len(old) + 1)
        added[at] = f"added {rnd.randrange(99)}\n" + added.get(at, "")
    text = "".join(old)
    starts = [sum(map(len, old[:i])) for i in range(len(old) + 1)]
    edits = [Replacement(starts[at], starts[at], added[at]) for at in sorted(added)]
    if old and len(old) not in added and rnd.random() < 0.3:  # no final newline
        edits.append(Replacement(len(text) - 1, len(text), ""))
    pos, pieces = 0, []
    for e in edits:
        pieces += [text[pos : e.start], e.text]
        pos = e.end
    new = "".join([*pieces, text[pos:]]).splitlines(keepends=True)
    want = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(old, new, "a/f", "b/f")
    )
    got = unified_diff(text, edits, "f")
    assert got.text == want and got.withheld == []


# ------------------------------------------------- a Secret named by generateName only

# one List, the Secret item right before the workload's: the edit lands two lines after
# the Secret's last line, which a diff with context would show
GEN_STREAM = f"""apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {{name: cfg}}
  data: {{a: "1"}}
- apiVersion: v1
  kind: Secret
  metadata: {{generateName: tok-}}
  data:
    k: {B64}
  stringData:
    appSecret: cfg
    {TOKEN}: x
- spec:
    template:
      spec:
        containers:
        - name: c
          envFrom:
          - configMapRef: {{name: cfg}}
  apiVersion: apps/v1
  kind: Deployment
  metadata: {{name: app}}
"""


# the same objects as documents of a stream (the versioned-name scan runs on those)
GEN_DOCS = (
    GEN_STREAM.split("items:\n", 1)[1].replace("\n- ", "\n---\n").lstrip("- ").replace("\n  ", "\n")
)


def _no_needles(text: str) -> None:
    for needle in NEEDLES:
        assert needle not in text, needle


@pytest.mark.parametrize(
    "args",
    [["--diff"], ["--diff", "--versioned"], ["--versioned"], ["explain"], ["--check", "-v"]],
)
def test_a_generate_name_secret_is_a_secret_for_every_channel(
    tmp_path: Path, args: list[str]
) -> None:
    """Nothing can reference it, but its text is a Secret's: no diff context from it, no
    finding pointing into it (the versioned-name scan found 'cfg' in its stringData and
    quoted the key), in stderr, in CMHASH_LOG."""
    f = tmp_path / "all.yaml"
    f.write_text(GEN_DOCS if "--versioned" in args else GEN_STREAM)
    log = tmp_path / "cmhash.log"
    cmd = (
        [*args[:1], "--no-config", *args[1:], str(f)]
        if args[0] == "explain"
        else [
            "--no-config",
            *args,
            str(f),
        ]
    )
    res = run_cmhash(cmd, env={"CMHASH_LOG": str(log)})
    assert res.code in (0, 1), res.stderr
    out = res.stdout.decode() if args[0] in ("--diff", "explain") else ""
    _no_needles(out + res.stderr + log.read_text())
    assert "unknown-reference" not in res.stderr
    if args == ["--diff"]:
        assert "checksum/config" in out  # the diff is there, without context


def test_a_generate_name_secret_in_krm_results(tmp_path: Path) -> None:
    import json

    import yaml

    items = list(yaml.safe_load_all(GEN_DOCS))
    rl = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": items,
        "functionConfig": {
            "apiVersion": "cmhash.io/v1",
            "kind": "CmhashTransformer",
            "metadata": {"name": "x"},
            "versioned": True,
        },
    }
    res = run_cmhash(["--no-config"], stdin=json.dumps(rl).encode())
    assert res.code == 0, res.stderr
    results = yaml.safe_load(res.stdout).get("results") or []
    _no_needles(json.dumps(results) + res.stderr)
    assert not [r for r in results if r["tags"]["code"] == "unknown-reference"]


def test_a_generate_name_secret_is_checked_like_any_secret(tmp_path: Path) -> None:
    """The API server rejects a bad Secret whatever names it: exit 2 at the value's
    position, the message naming the key only."""
    f = tmp_path / "s.yaml"
    f.write_text(
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  generateName: x-\ndata:\n  k: {PLAIN}!\n"
    )
    res = run_cmhash(["--no-config", str(f)])
    assert res.code == 2 and res.stdout == b""
    assert res.stderr == f"cmhash: {f}:6:6: Secret data key 'k' is not valid base64\n"
