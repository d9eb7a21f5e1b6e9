"""`make site`: the course site builds, shows every lab without its solutions, and holds together offline.

The site is built once (Sphinx + MyST-NB, course/tools/website.py) into a scratch folder; then its HTML is
checked as files (no solution or hidden test in any page, every chapter links its lab, modules and
benchmarks, every internal link and anchor resolves, nothing is loaded from another host) and in a
headless browser, served from loopback (the landing page and a lab page render, with their plots
and their math; every link the site makes to itself answers 200).
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from browser import chromium
from labharness import REPO, labtools

import website as course_site  # noqa: E402  (course/tools/website.py)

pytestmark = pytest.mark.slow
LABS = labtools.lab_names()


class Page(HTMLParser):
    """Text lines, links and element ids of one HTML page."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self.links: list[tuple[str, str]] = []  # (attribute, url)
        self.ids: set[str] = set()
        self._skip = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "style"):
            self._skip += 1
        for name in ("href", "src"):
            if attrs.get(name) and not (tag == "link" and attrs.get("rel") in ("preconnect", "dns-prefetch")):
                self.links.append((f"{tag}.{name}", attrs[name]))
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag in ("br", "p", "div", "pre", "li", "tr", "h1", "h2", "h3"):
            self.chunks.append("\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.chunks.append(data)

    @property
    def lines(self) -> set[str]:
        return {line.strip() for line in "".join(self.chunks).splitlines() if line.strip()}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("site")
    start = time.perf_counter()
    out = course_site.build(base / "html", base / "src")
    seconds = time.perf_counter() - start
    measured = REPO / "build" / "measurements" / "site.json"
    measured.parent.mkdir(parents=True, exist_ok=True)
    measured.write_text(json.dumps({"site_build_s": round(seconds, 1)}))
    return out


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_chapter_has_a_page_linking_its_lab_modules_and_benchmarks(site):
    benches = course_site.benchmarks()
    for lab in LABS:
        assert (site / "labs" / f"{lab}.html").exists()
        links = {url.split("#")[0] for _, url in _parse(site / "capitulos" / f"{lab}.html").links}
        assert f"../labs/{lab}.html" in links
        modules = course_site.lab_modules(lab)
        assert modules, f"{lab} imports no llmlab module?"
        for module in modules:
            assert f"../biblioteca/{module}.html" in links
            assert (site / "biblioteca" / f"{module}.html").exists()
        for bench, used in benches.items():
            if set(used) & set(modules):
                assert f"../benchmarks/{bench}.html" in links
        assert any(url.endswith(f"/{lab}.ipynb") for url in links), "no download of the student notebook"


def test_library_pages_document_the_modules(site):
    text = "\n".join(_parse(site / "biblioteca" / "metrics.html").lines)
    assert "perplexity" in text  # a function of llmlab.metrics, from autodoc


def test_landing_page_is_the_readme(site):
    readme_title = (REPO / "README.md").read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
    index = _parse(site / "index.html")
    assert readme_title in index.lines
    links = {url.split("#")[0] for _, url in index.links}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = [lab for lab in LABS if f"](labs/{lab}/{lab}.ipynb)" in readme]
    assert listed, "the README's table links no lab"
    for lab in listed:  # the README's table links the lab pages, not the repository's files
        assert f"labs/{lab}.html" in links
    assert not [url for url in links if url.endswith(".ipynb")]
    for lab in LABS:  # listed in the README or not, every chapter is in the site's table of contents
        assert f"capitulos/{lab}.html" in links


@pytest.mark.parametrize("lab", LABS)
def test_lab_page_shows_no_solution_and_no_hidden_test(site, lab):
    solution = labtools.load_json_notebook(labtools.solution_path(lab))
    secrets = labtools.secret_lines(solution)
    assert secrets  # the check has something to look for
    markers = (labtools.SOLUTION_BEGIN, labtools.SOLUTION_END, labtools.HIDDEN_BEGIN, labtools.HIDDEN_END,
               "BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS")
    # The lab's own pages are checked line by line (a line public in another lab may be secret here, and
    # library or benchmark pages show llmlab's public code); every page is checked for the markers.
    for page in (site / "labs" / f"{lab}.html", site / "capitulos" / f"{lab}.html", site / "index.html"):
        lines = _parse(page).lines
        assert not secrets & lines, f"{page.relative_to(site)} shows {sorted(secrets & lines)[:3]}"
    for page in _pages(site):  # (the README and CONTRIBUTING pages document the markers themselves)
        if page.parent.name in ("labs", "capitulos"):
            text = "\n".join(_parse(page).lines)
            for marker in markers:
                assert marker not in text, f"{page.relative_to(site)} contains {marker!r}"
    lab_page = _parse(site / "labs" / f"{lab}.html").lines
    assert any("ESCRIBE TU CÓDIGO AQUÍ" in line for line in lab_page)  # the exercises, as students get them
    assert any(line.startswith("✔") for line in lab_page)  # visible checks and their output stay


def test_the_leak_check_can_fail():
    """Rendering the instructor's notebook as it is would be caught by the check above."""
    lab = LABS[0]
    solution = labtools.load_json_notebook(labtools.solution_path(lab))
    as_is = {line.strip() for c in solution.cells for line in c.source.splitlines()}
    assert labtools.secret_lines(solution) & as_is


@pytest.mark.parametrize("lab", LABS)
def test_lab_page_keeps_the_plots_and_the_math(site, lab):
    page = site / "labs" / f"{lab}.html"
    stored = sum("image/png" in o.get("data", {}) for c in labtools.load_json_notebook(labtools.solution_path(lab)).cells
                 for o in c.get("outputs", []))
    images = [url for tag, url in _parse(page).links if tag == "img.src" and "colab-badge" not in url]
    assert len(images) >= stored >= 3
    text = page.read_text(encoding="utf-8")
    assert "<math" in text and "$$" not in text


def test_internal_links_and_anchors_resolve(site):
    broken = []
    for page in _pages(site):
        for attr, url in _parse(page).links:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme or url.startswith(("mailto:", "//")):
                continue
            target = (page.parent / urllib.parse.unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {attr}={url}")
            elif parts.fragment and target.suffix == ".html" and parts.fragment not in _parse(target).ids:
                broken.append(f"{page.relative_to(site)}: {url} (no such anchor)")
    assert not broken, "\n".join(broken[:20])


def test_nothing_is_loaded_from_another_host(site):
    remote = []
    for page in _pages(site):
        for attr, url in _parse(page).links:
            if attr in ("script.src", "link.href", "img.src", "iframe.src") and re.match(r"(https?:)?//", url):
                remote.append(f"{page.relative_to(site)}: {attr}={url}")
    assert not remote, "\n".join(remote[:20])


# --------------------------------------------------------------------------------- browser

@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_every_page_the_site_links_answers(served, site):
    """Crawl the site from its landing page over HTTP: no 404 among its own links."""
    seen, queue, missing = set(), [f"{served}/index.html"], []
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body = response.read()
                kind = response.headers.get_content_type()
        except urllib.error.HTTPError as error:
            missing.append(f"{url}: {error.code}")
            continue
        if kind != "text/html":
            continue
        for _, link in Page(body.decode("utf-8")).links:
            absolute = urllib.parse.urljoin(url, link).split("#")[0]
            if absolute.startswith(served):
                queue.append(absolute)
    assert not missing, "\n".join(missing)
    assert len(seen) >= len(_pages(site)) // 2  # the crawl reached the site, not just the landing page


def test_the_theme_speaks_spanish(site):
    """furo's own words come from site/locale/es (Sphinx's Spanish catalog lacks them)."""
    pages = [p for p in _pages(site) if "toc-title" in p.read_text(encoding="utf-8")]
    assert pages
    for path in pages:
        text = path.read_text(encoding="utf-8")
        assert "En esta página" in text and "Volver arriba" in text, path
        for english in ("On this page", "Back to top", "Skip to content", "Made with"):
            assert english not in text, (path, english)


def test_code_blocks_wrap_instead_of_scrolling(served):
    """lab06's page (the widest code of the course) at 1280 px: no code block or output scrolls sideways."""
    reason = chromium.unavailable()
    if reason:
        pytest.skip(reason)
    with chromium.browser() as context:
        page = chromium.guarded_page(context)
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(f"{served}/labs/lab06-adaptar-modelos.html")
        page.wait_for_load_state("load")
        blocks = page.evaluate("""() => [...document.querySelectorAll('article pre')]
            .map(p => ({wide: p.scrollWidth > p.clientWidth + 1, text: p.innerText.slice(0, 60)}))""")
        assert len(blocks) > 30, len(blocks)
        assert [b["text"] for b in blocks if b["wide"]] == []
        page.close()


def test_landing_and_lab_page_render_in_a_browser(served):
    reason = chromium.unavailable()
    if reason:
        pytest.skip(reason)
    with chromium.browser() as context:
        page = chromium.guarded_page(context)
        page.goto(f"{served}/index.html")
        assert "llmlab" in page.title()
        assert page.locator("h1").first.inner_text().startswith("llmlab")
        chromium.screenshot(page, "sitio-portada")

        lab = LABS[0]
        page.goto(f"{served}/labs/{lab}.html")
        page.wait_for_load_state("load")
        images = page.evaluate("""() => [...document.querySelectorAll('article img')]
            .map(i => ({src: i.getAttribute('src'), w: i.naturalWidth}))""")
        assert images and all(img["w"] > 0 for img in images), images
        math = page.evaluate("""() => [...document.querySelectorAll('math')]
            .map(m => m.getBoundingClientRect().height)""")
        assert math and all(h > 0 for h in math)  # the browser draws the MathML itself
        page.locator("article img").nth(1).scroll_into_view_if_needed()
        chromium.screenshot(page, f"sitio-{lab}")
        assert page.guard.external() == [], page.guard.external()
        page.close()


def test_the_readme_gives_each_lab_the_chapters_its_title_cell_gives():
    """The README's lab table and the site's chapter pages (read from the title cell) name the same chapters."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for lab in labtools.lab_names():
        row = re.search(rf"^\| \[{re.escape(lab)}\]\([^)]*\) \| ([^|]+) \|", readme, flags=re.M)
        assert row, f"README has no row for {lab}"
        in_readme = re.findall(r"\d\d", row.group(1))
        in_title = re.findall(r"\d\d", course_site.lab_chapter(lab))
        assert in_readme == in_title, f"{lab}: README says {in_readme}, the title cell {in_title}"
