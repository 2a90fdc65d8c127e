"""A parser's words in a syntax error, as people read them (parse/events.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cmhash


def test_a_json_stream_names_the_token_not_a_tuple(tmp_path: Path) -> None:
    """Two JSON objects with no ``---`` between them: ruamel writes the flow token it
    found as a tuple (``('{',)``); the message says ``'{'``."""
    f = tmp_path / "s.json"
    f.write_text('{"apiVersion": "v1", "kind": "ConfigMap"}\n{"apiVersion": "v1"}\n')
    res = run_cmhash([str(f)])
    assert res.code == 2
    assert "but found '{'" in res.stderr and "('{',)" not in res.stderr
