"""The documentation site as readers see it: the built HTML (``mkdocs build`` into a
temporary directory), and every page of it rendered in headless Chromium at 1280 px,
served from a local HTTP server under the path of ``site_url`` as GitLab Pages serves it
(a missing path gets the 404 page). Each defect a reader met once has its check here: a
pipe written ``\\|`` inside a code span of a table, a table row left after a paragraph
(raw pipes), links that are dead on the site or on the code host, tables and the CLI
reference clipped at 1280 px, example headings in a page's table of contents, a command
missing from the usage page, a 404 page that works only at the domain root."""

from __future__ import annotations

import html
import importlib.util
import json
import os
import posixpath
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from conftest import CHROMIUM_FLAGS, IN_CI, ROOT, tool

DOCS = ROOT / "docs"
CONFIG = yaml.safe_load(
    (ROOT / "mkdocs.yml").read_text(encoding="utf-8").replace("!!python/name:", "")
)
PREFIX = urlsplit(CONFIG["site_url"]).path  # "/cmhash/"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if IN_CI:
            pytest.fail("mkdocs is not installed; .ci/run installs '.[docs]'")
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("index.html") if "files" not in p.relative_to(site).parts)


def _article(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.find("<article")
    return text[start : text.find("</article>", start)] if start >= 0 else text


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_site_builds_strictly_with_generated_pages(site: Path) -> None:
    cli_page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "Usage: cmhash inject" in cli_page and "<!-- cmhash:" not in cli_page
    findings = (site / "reference" / "findings" / "index.html").read_text(encoding="utf-8")
    assert "missing-reference" in findings
    assert (site / "files" / "ci-templates" / "kustomize" / "krm" / "cmhash-fn.yaml").is_file()
    for page in _pages(site):
        assert "<!-- cmhash:" not in page.read_text(encoding="utf-8"), page


# -- the built HTML, defect by defect --------------------------------------------------


def test_a_pipe_in_a_table_code_span_shows_as_a_pipe(site: Path) -> None:
    """GitLab needs ``\\|`` inside a code span of a table; the site shows ``|``."""
    for page in _pages(site):
        for code in re.findall(r"<code[^>]*>(.*?)</code>", _article(page), flags=re.S):
            assert "\\|" not in html.unescape(code), (page, code)
    migration = _article(site / "migration" / "index.html")
    assert "<code>web|db</code>" in migration
    assert "| sha256sum }}</code>" in html.unescape(migration)


def test_no_table_row_is_left_as_raw_pipes(site: Path) -> None:
    for page in _pages(site):
        for para in re.findall(r"<p>(.*?)</p>", _article(page), flags=re.S):
            for line in _text(para).splitlines():
                line = line.strip()
                assert not (line.startswith("|") and line.endswith("|")), (page, line)
    repos = _article(site / "concepts" / "repositories" / "index.html")
    assert "a file a kustomization in the tree names as a patch" in _text(
        "".join(re.findall(r"<td>(.*?)</td>", repos, flags=re.S))
    )


def _href_targets(page: Path, site: Path) -> Iterator[tuple[str, Path, str]]:
    for href in re.findall(r'href="([^"]+)"', page.read_text(encoding="utf-8")):
        href = html.unescape(href)
        if re.match(r"[a-z]+:", href) or href.startswith("//"):
            continue
        path, _, anchor = href.partition("#")
        if path.startswith("/"):
            assert path.startswith(PREFIX), (page, href)
            target = site / unquote(path[len(PREFIX) :])
        else:
            target = (page.parent / unquote(path)).resolve() if path else page
        if target.is_dir():
            target = target / "index.html"
        yield href, target, anchor


def test_every_link_of_the_site_resolves(site: Path) -> None:
    """Every relative link of every page reaches a file of the site, and every anchor an
    element of its page (the published repository files under files/ included)."""
    ids: dict[Path, set[str]] = {}
    for page in [*_pages(site), site / "404.html"]:
        for href, target, anchor in _href_targets(page, site):
            assert target.is_file(), (page.relative_to(site), href)
            if anchor and target.suffix == ".html":
                if target not in ids:
                    ids[target] = set(re.findall(r'\sid="([^"]+)"', target.read_text("utf-8")))
                assert unquote(anchor) in ids[target], (page.relative_to(site), href)


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_link_of_the_markdown_resolves_on_the_code_host() -> None:
    """GitLab renders docs/*.md from the repository: a relative link must name a file of
    the repository as it is (no ``files/`` copy exists there)."""
    for page in DOCS.rglob("*.md"):
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            rel = posixpath.normpath(posixpath.join(page.parent.relative_to(ROOT).as_posix(), path))
            assert (ROOT / rel).exists(), (page.relative_to(ROOT), target)
            assert not rel.startswith("docs/files/"), (page.relative_to(ROOT), target)


def test_example_headings_stay_out_of_the_table_of_contents(site: Path) -> None:
    """The report page quotes a report, headings included: the page's own table of
    contents lists its sections only."""
    text = (site / "report" / "index.html").read_text(encoding="utf-8")
    quoted = set()
    for quote in re.findall(r"<blockquote>(.*?)</blockquote>", text, flags=re.S):
        quoted.update(re.findall(r'<h[1-6][^>]*\sid="([^"]+)"', quote))
    assert quoted, "the report page quotes no headings any more: update this test"
    toc = text[text.index('class="md-nav md-nav--secondary"') :]
    toc = toc[: toc.index("</nav>")]
    assert "Rollout rules" in toc
    for anchor in quoted:
        assert f'href="#{anchor}"' not in toc, anchor


def test_usage_lists_every_command(site: Path) -> None:
    from cmhash.cli.main import cli

    usage = _article(site / "usage" / "index.html")
    for name in cli.commands:
        assert f'href="../reference/cli/#cmhash-{name}"><code>{name}</code></a>' in usage, name


def test_the_404_page_works_below_the_domain_root(site: Path) -> None:
    """GitLab Pages serves 404.html for any missing path at any depth: its styles,
    scripts and links are absolute under site_url's path, and exist."""
    page = site / "404.html"
    text = page.read_text(encoding="utf-8")
    refs = re.findall(r'(?:href|src)="(/[^"]*)"', text)
    assert any(r.endswith(".css") for r in refs) and any(r.endswith(".js") for r in refs)
    for _href, target, _anchor in _href_targets(page, site):
        assert target.is_file(), _href
    assert not re.search(r'(?:href|src)="(?:\.\./|assets/)', text)


def test_user_pages_name_no_test_or_source_module() -> None:
    """User pages speak of what the user does and sees: no test or source module named."""
    for page in DOCS.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        found = re.findall(r"(?:tests|src/cmhash)/[\w/.-]*\.py", text)
        assert not found, (page.relative_to(ROOT), found)


# -- every page in Chromium --------------------------------------------------------------

HARNESS = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<iframe id="f" style="width:1280px;height:900px;border:0"></iframe>
<script>
const PAGES = __PAGES__;
const frame = document.getElementById("f");
const docs = new Map();
function load(url) {
  return new Promise(done => { frame.onload = () => setTimeout(done, 50); frame.src = url; });
}
function fetchDoc(url) {
  if (!docs.has(url)) {
    docs.set(url, fetch(url).then(async r => r.status !== 200 ? null :
      new DOMParser().parseFromString(await r.text(), "text/html")));
  }
  return docs.get(url);
}
function name(el) {
  return el.tagName.toLowerCase() + (el.className && typeof el.className === "string"
    ? "." + el.className.trim().split(/\\s+/).join(".") : "");
}
async function check(path) {
  await load(path);
  const d = frame.contentDocument, w = frame.contentWindow;
  const r = {page: path, overflow: [], pipes: [], rows: [], dead: [], toc: []};
  const article = d.querySelector("article") || d.body;
  if (d.documentElement.scrollWidth > d.documentElement.clientWidth + 1) {
    r.overflow.push("page " + d.documentElement.scrollWidth);
  }
  const right = (d.querySelector(".md-content") || article).getBoundingClientRect().right;
  for (const el of article.querySelectorAll("*")) {
    const cs = w.getComputedStyle(el);
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 &&
        ["auto", "scroll", "hidden", "clip"].includes(cs.overflowX)) {
      r.overflow.push(name(el) + " " + el.scrollWidth + ">" + el.clientWidth);
    }
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > right + 1 && cs.position !== "absolute") {
      r.overflow.push(name(el) + " ends at " + Math.round(box.right) + ">" + Math.round(right));
    }
  }
  if (article.innerText.includes("\\\\|")) r.pipes.push(article.innerText.match(/.{0,40}\\\\\\|.{0,40}/)[0]);
  if (path.endsWith("/reference/cli/")) {  // the help text, as wide as it is printed
    for (const code of article.querySelectorAll("pre > code")) {
      const text = code.textContent.replace(/\\n$/, "").split("\\n");
      // a help line wider than the hooks' width (a verbatim paragraph) may wrap once
      const lines = text.length + text.filter(t => t.length > __WIDTH__).length;
      const cs = w.getComputedStyle(code), height = parseFloat(cs.lineHeight);
      const inner = code.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
      if (inner > (lines + 0.5) * height) {
        r.overflow.push("help lines wrap: " + Math.round(inner / height) + " rows for " + lines);
      }
    }
  }
  for (const p of article.querySelectorAll("p")) {
    for (const line of p.innerText.split("\\n")) {
      const t = line.trim();
      if (t.startsWith("|") && t.endsWith("|")) r.rows.push(t.slice(0, 80));
    }
  }
  for (const a of d.querySelectorAll("a[href]")) {
    const url = new URL(a.getAttribute("href"), d.location.href);
    if (url.origin !== location.origin) continue;
    const page = url.href.split("#")[0];
    const target = await fetchDoc(page);
    if (target === null) { r.dead.push(a.getAttribute("href")); continue; }
    if (url.hash && page.endsWith("/") &&
        !target.getElementById(decodeURIComponent(url.hash.slice(1)))) {
      r.dead.push(a.getAttribute("href"));
    }
  }
  for (const a of d.querySelectorAll(".md-nav--secondary a.md-nav__link")) {
    const id = decodeURIComponent((a.getAttribute("href") || "").slice(1));
    const el = id && d.getElementById(id);
    if (el && el.closest("blockquote")) r.toc.push(id);
  }
  return r;
}
(async () => {
  const out = [];
  try {
    for (const p of PAGES) out.push(await check(p));
    const miss = await load(__MISSING__);
    const d = frame.contentDocument;
    const styled = [...d.styleSheets].some(s => s.href && /main.*\\.css$/.test(s.href) &&
      s.cssRules.length > 100);
    out.push({page: "404", styled, title: d.title, home: d.querySelector("a.md-logo") &&
      (await fetchDoc(d.querySelector("a.md-logo").href)) !== null});
  } catch (e) { out.push({error: String(e)}); }
  document.body.setAttribute("data-results", JSON.stringify(out));
})();
</script></body></html>"""


def _hooks_width() -> int:
    """The width the CLI reference's help text is printed at (scripts/docs_hooks.py)."""
    text = (ROOT / "scripts" / "docs_hooks.py").read_text(encoding="utf-8")
    found = re.search(r"^WIDTH = (\d+)", text, re.MULTILINE)
    assert found
    return int(found.group(1))


class _Pages(SimpleHTTPRequestHandler):
    """The site under PREFIX, the harness at PREFIX + __harness.html, and the 404 page
    (status 404) for anything else, as GitLab Pages does."""

    harness = b""

    def log_message(self, *args: object) -> None:
        pass

    def translate_path(self, path: str) -> str:
        path = urlsplit(path).path
        if path.startswith(PREFIX):
            return super().translate_path("/" + path[len(PREFIX) :])
        return super().translate_path("/no/such/file")

    def send_head(self):  # type: ignore[no-untyped-def]
        if urlsplit(self.path).path == PREFIX + "__harness.html":
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(self.harness)))
            self.end_headers()
            from io import BytesIO

            return BytesIO(self.harness)
        target = Path(self.translate_path(self.path))
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            body = (Path(self.directory) / "404.html").read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            from io import BytesIO

            return BytesIO(body)
        return super().send_head()


@pytest.mark.integration
def test_every_page_renders_without_a_defect_in_chromium(site: Path, tmp_path: Path) -> None:
    """Each page in a 1280 px wide frame: nothing wider than the page or clipped in a
    scroll box (tables, code blocks, the CLI reference), no ``\\|`` shown, no raw pipe
    row, no link to a missing page or anchor, no quoted heading in the table of
    contents; and a missing path's 404 page, served below the domain root, is styled
    and links home. A screenshot of the widest page is kept for a look."""
    chromium = tool("chromium")
    paths = [
        PREFIX + page.parent.relative_to(site).as_posix().removeprefix(".") + "/"
        for page in _pages(site)
    ]
    paths = [p.replace("//", "/") for p in paths]
    _Pages.harness = (
        HARNESS.replace("__PAGES__", json.dumps(paths))
        .replace("__MISSING__", json.dumps(PREFIX + "no/such/page/"))
        .replace("__WIDTH__", str(_hooks_width()))
        .encode()
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Pages, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        flags = [
            *CHROMIUM_FLAGS,
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,1000",
        ]
        dom = subprocess.run(
            [
                chromium,
                *flags,
                "--virtual-time-budget=120000",
                "--dump-dom",
                f"{base}{PREFIX}__harness.html",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        shot = tmp_path / "cli.png"
        subprocess.run(
            [
                chromium,
                *flags,
                f"--screenshot={shot}",
                "--window-size=1280,2400",
                f"{base}{PREFIX}reference/cli/",
            ],
            capture_output=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    found = re.search(r'data-results="([^"]*)"', dom.stdout)
    assert found, dom.stderr[-2000:]
    results = json.loads(html.unescape(found.group(1)))
    assert not any("error" in r for r in results), results
    *pages, missing = results
    assert len(pages) == len(paths)
    problems = {
        r["page"]: {k: v for k, v in r.items() if k != "page" and v}
        for r in pages
        if any(r[k] for k in ("overflow", "pipes", "rows", "dead", "toc"))
    }
    assert problems == {}
    assert missing == {"page": "404", "styled": True, "title": missing["title"], "home": True}
    assert shot.is_file() and shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
