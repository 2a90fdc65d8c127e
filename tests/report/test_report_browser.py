"""The report's Markdown as a merge request shows it, in a real browser: rendered to
HTML as GitHub/GitLab do (CommonMark with GFM tables and inline HTML: markdown-it-py),
the Mermaid block drawn by mermaid.js, loaded in headless Chromium. The DOM must hold
the summary heading, one table per section with the right row counts, and the diagram
drawn as SVG with a node per listed workload; a screenshot is kept for a look
(CMHASH_SCREENSHOT_DIR, else the test's tmp directory)."""

from __future__ import annotations

import html
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import CHROMIUM_FLAGS, IN_CI, ROOT, TOOLS_BIN, run_cmhash, tool

pytestmark = pytest.mark.integration
CASE = ROOT / "tests" / "fixtures" / "report-plan"
MERMAID_JS = TOOLS_BIN.parent / "mermaid" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
FLAGS = [*CHROMIUM_FLAGS, "--disable-dev-shm-usage", "--hide-scrollbars"]
STYLE = """
body { font: 14px -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px;
       color: #1f2328; max-width: 1360px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #d1d9e0; padding: 6px 12px; vertical-align: top; }
th { background: #f6f8fa; }
code { background: #eff1f3; border-radius: 4px; padding: 1px 4px; font-size: 85%; }
pre { background: #f6f8fa; padding: 12px; }
"""


def _html(markdown: str) -> str:
    from markdown_it import MarkdownIt

    md = MarkdownIt("gfm-like", {"html": True, "linkify": False})
    body = md.render(markdown)
    # a ```mermaid fence -> what mermaid.js draws (GitHub and GitLab do the same)
    body = re.sub(
        r'<pre><code class="language-mermaid">(.*?)</code></pre>',
        lambda m: f'<pre class="mermaid">{m.group(1)}</pre>',
        body,
        flags=re.S,
    )
    body = body.replace("<details>", "<details open>")  # drawn, and in the screenshot
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{STYLE}</style>"
        f"<script src='{MERMAID_JS.as_uri()}'></script></head><body>{body}"
        "<script>mermaid.initialize({startOnLoad: false});"
        "mermaid.run().then(() => document.body.setAttribute('data-drawn', 'yes'))"
        ".catch(e => document.body.setAttribute('data-drawn', 'error: ' + e));</script>"
        "</body></html>"
    )


def _chromium(page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"  # a fresh one each run
    return subprocess.run(
        [
            tool("chromium"),
            *FLAGS,
            f"--user-data-dir={profile}",
            "--allow-file-access-from-files",
            "--virtual-time-budget=15000",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_markdown_reads_at_a_glance_in_a_browser(tmp_path: Path) -> None:
    if not MERMAID_JS.exists():
        if IN_CI:
            pytest.fail("mermaid.js is missing: scripts/get-tools.sh installs it")
        pytest.skip("mermaid.js is not installed (run scripts/get-tools.sh)")
    res = run_cmhash(["report", "--no-config", "old.yaml", "new.yaml"], cwd=CASE)
    assert res.code == 0, res.stderr
    page = tmp_path / "report.html"
    page.write_text(_html(res.out))

    dom = _chromium(page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = dom.stdout
    assert 'data-drawn="yes"' in text, re.findall(r'data-drawn="[^"]*"', text)
    # the summary line leads, as a heading
    first = re.search(r"<h3>(.*?)</h3>", text)
    assert first and html.unescape(first.group(1)).startswith("cmhash: 13 workloads will restart")
    # one table per section, with a row per entry
    tables = re.findall(r"<table>(.*?)</table>", text, flags=re.S)
    rows = [len(re.findall(r"<tr>", t)) - 1 for t in tables]
    # restart, while it rolls (13 and three totals), not restarting, configs, findings (two
    # of them rollout-downtime)
    assert rows == [13, 16, 17, 2, 6]
    # the diagram is drawn: an SVG with a node per workload listed
    svg = re.search(r'<pre class="mermaid"[^>]*>(.*?)</pre>', text, flags=re.S)
    assert svg and "<svg" in svg.group(1)
    # changed objects and the workloads reading them (template-only changes are in the tables)
    assert len(re.findall(r'class="node [^"]*', svg.group(1))) == 2 + 1

    shots = Path(os.environ.get("CMHASH_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / "report-plan.png"
    png = _chromium(page, tmp_path, f"--screenshot={shot}", "--window-size=1400,4200")
    assert png.returncode == 0, png.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000
