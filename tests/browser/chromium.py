"""Headless Chromium for the tests: Debian's browser driven by Playwright's Python package.

Nothing is downloaded (never `playwright install`): Playwright drives /usr/bin/chromium, which
`make sysdeps` installs from .ci/debian-packages. Every page runs behind a network guard: requests
leave only for the test's own loopback servers and local files; anything else is refused and recorded,
so a page that needs a CDN fails its test instead of working by luck.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "build" / "screenshots"
# As root, in a container, with no network but loopback: no sandbox, no GPU, no background traffic.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def executable() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def unavailable() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright's Python package is not installed (pip install playwright; part of the test extra)"
    if executable() is None:
        return ("no Chromium: install Debian's 'chromium' (listed in .ci/debian-packages; `make sysdeps` "
                "installs it when run as root)")
    return None


@dataclass
class Guard:
    """Allows loopback and local requests; refuses and records the rest."""

    allowed: tuple[str, ...] = ("http://127.0.0.1:", "file://", "data:", "blob:", "about:")
    blocked: list[str] = field(default_factory=list)

    def __call__(self, route) -> None:
        url = route.request.url
        if url.startswith(self.allowed):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def external(self, ignore: tuple[str, ...] = ()) -> list[str]:
        return [u for u in self.blocked if not any(part in u for part in ignore)]


@contextlib.contextmanager
def browser():
    """A persistent Chromium context with a fresh profile (closed, and its profile removed, at exit).

    The network guard is installed on the context (routing single pages stalls JupyterLab's kernel
    websocket); `guarded_page` resets what it recorded.
    """
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="llmlab-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile, executable_path=executable(), headless=True, args=FLAGS,
                viewport={"width": 1280, "height": 900}, locale="es-ES",
            )
            context.network_guard = Guard()
            context.route("**/*", context.network_guard)
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def guarded_page(context):
    """A new page; its `guard` attribute is the context's network guard, with its record emptied."""
    context.network_guard.blocked.clear()
    page = context.new_page()
    page.guard = context.network_guard
    return page


def screenshot(page, name: str, full_page: bool = False) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
