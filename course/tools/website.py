"""`make site`: the course as a static website, built with Sphinx + MyST-NB (no home-made generator).

    python course/tools/website.py [--out build/site]

The pages are assembled in build/site-src/ and rendered by Sphinx with the configuration in site/:

    index            the README (landing page; links to labs/ become links to the lab pages)
    capitulos/<lab>  one page per chapter: what it covers, its lab, the llmlab modules and benchmarks
    labs/<lab>       the lab to read without installing anything: the executed solution notebook with
                     the student's version of every answer and check cell (no solution, no hidden test)
                     and the outputs of everything else (prose, worked numbers, plots)
    biblioteca/<m>   every llmlab module, from its docstrings (autodoc)
    benchmarks/<b>   every benchmark script: what it measures and its code
    contribuir       CONTRIBUTING.md

Everything a page needs is local: the theme's files, the notebook images, and the math, written as
MathML when the page is built (course/tools/mathml.py). Nothing is fetched when the site is read.
"""

from __future__ import annotations

import argparse
import ast
import json
import pkgutil
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

import hosting
import labtools

SITE_CONFIG = labtools.REPO / "site"
SOURCE = labtools.REPO / "build" / "site-src"
OUT = labtools.REPO / "build" / "site"
BENCHMARKS = labtools.REPO / "benchmarks"
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
# Modules of the course's machinery rather than of its content: not listed per chapter.
NOT_CONTENT = {"checks", "spanish"}


# ------------------------------------------------------------------------------------- labs

def reading_notebook(lab: str) -> nbformat.NotebookNode:
    """The lab to read: the student's cells, with the outputs the solution produced around them.

    Cell by cell (nbgrader keeps ids and order): answer cells come from the release (their stub, no
    output), check cells from the release (no hidden test) with the solution's visible output, every
    other cell from the executed solution.
    """
    solution = labtools.load_json_notebook(labtools.solution_path(lab))
    release = labtools.load_json_notebook(labtools.release_path(lab))
    if [c.id for c in solution.cells] != [c.id for c in release.cells]:
        raise ValueError(f"{lab}: labs/ does not match solutions/: run `make release`")
    cells = []
    for solved, student in zip(solution.cells, release.cells):
        meta = solved.metadata.get("nbgrader", {})
        cell = nbformat.from_dict(json.loads(json.dumps(student)))
        cell.metadata = nbformat.from_dict({"tags": list(solved.metadata.get("tags", []))})
        if cell.cell_type == "code":
            cell.outputs = [] if meta.get("solution") else solved.get("outputs", [])
            cell.execution_count = None
        if cell.cell_type == "markdown":  # the badge drawn locally: nothing is fetched to read the page
            cell.source = cell.source.replace(COLAB_BADGE, "../_imagenes/colab-badge.svg").replace(
                hosting.badge_image(), "../_imagenes/colab-badge.svg")
        cells.append(cell)
    h = hosting.settings()
    intro = nbformat.v4.new_markdown_cell(
        "```{admonition} Versión para leer\n"
        "Este es el laboratorio con las salidas de una ejecución completa: el texto, los ejemplos y las "
        "gráficas. Tus ejercicios aparecen sin resolver, tal como los recibes, y sin pruebas ocultas. "
        f"Para hacerlo, {{download}}`descarga el cuaderno </_cuadernos/{lab}.ipynb>`, ábrelo en "
        f"[Colab]({h.colab_url(lab)}) o ejecuta `make lab` en tu copia del curso.\n```"
    )
    cells.insert(1, intro)
    nb = nbformat.v4.new_notebook(cells=cells, metadata=solution.metadata)
    return nb


def lab_title(lab: str) -> str:
    first = labtools.load_json_notebook(labtools.solution_path(lab)).cells[0].source
    return first.splitlines()[0].lstrip("# ").strip()


def lab_chapter(lab: str) -> str:
    """The chapter the lab belongs to, as its title cell says it in bold ("Capítulo 03")."""
    first = labtools.load_json_notebook(labtools.solution_path(lab)).cells[0].source
    match = re.search(r"\*\*(Capítulo[^*]*)\*\*", first)
    return match.group(1).strip() if match else lab


def chapter_title(lab: str) -> str:
    """ "Capítulo 03 · Atención a mano: Q, K, V y la máscara causal" """
    name = re.sub(r"^Lab \d+\s*·\s*", "", lab_title(lab))
    return f"{lab_chapter(lab)} · {name}"


def lab_summary(lab: str) -> list[str]:
    """The "Al terminar sabrás" list of the title cell."""
    first = labtools.load_json_notebook(labtools.solution_path(lab)).cells[0].source
    return re.findall(r"^\d+\.\s+(.*)$", first, re.M)


# --------------------------------------------------------------------------- library, benches

def llmlab_imports(source: str) -> list[str]:
    """llmlab modules (first level) that a Python source imports, in order of first use."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "llmlab":
            parts = node.module.split(".")
            names = [parts[1]] if len(parts) > 1 else [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".")[1] for a in node.names if a.name.startswith("llmlab.")]
        found += [n for n in names if n not in found]
    return found


def library_modules() -> list[str]:
    import llmlab

    return sorted(m.name for m in pkgutil.iter_modules(llmlab.__path__)
                  if not m.name.startswith("_"))


def lab_modules(lab: str) -> list[str]:
    source = "\n".join(c.source for c in labtools.load_json_notebook(labtools.solution_path(lab)).cells
                       if c.cell_type == "code")
    known = set(library_modules())
    return [m for m in llmlab_imports(source) if m in known and m not in NOT_CONTENT]


def benchmarks() -> dict[str, list[str]]:
    """Every benchmark script and the llmlab modules it exercises."""
    return {p.stem: llmlab_imports(p.read_text(encoding="utf-8")) for p in sorted(BENCHMARKS.glob("*.py"))}


def docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


# ------------------------------------------------------------------------------------ pages

def readme_page() -> str:
    """README.md as the landing page: links into the repository become links between pages."""
    text = (labtools.REPO / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"\]\(labs/([^/)]+)/\1\.ipynb\)", r"](labs/\1.ipynb)", text)
    text = text.replace("](CONTRIBUTING.md)", "](contribuir.md)")
    pages = ["capitulos/" + lab for lab in labtools.lab_names()]
    toc = "\n".join(
        ["", "```{toctree}", ":caption: Capítulos", ":maxdepth: 1", "", *pages, "```", "",
         "```{toctree}", ":caption: Referencia", ":maxdepth: 1", "", "biblioteca/index",
         "benchmarks/index", "contribuir", "```", ""])
    return text + "\n" + toc


def chapter_page(lab: str, benches: dict[str, list[str]]) -> str:
    h = hosting.settings()
    modules = lab_modules(lab)
    related = [b for b, used in benches.items() if set(used) & set(modules)]
    lines = [f"# {chapter_title(lab)}", ""]
    summary = lab_summary(lab)
    if summary:
        lines += ["Al terminar el laboratorio sabrás:", ""] + [f"- {s}" for s in summary] + [""]
    lines += ["## El laboratorio", "",
              f"- [Leer el laboratorio con sus resultados](../labs/{lab}.ipynb) (sin soluciones)",
              f"- {{download}}`Descargar el cuaderno de estudiante </_cuadernos/{lab}.ipynb>`",
              f"- [Abrirlo en Colab]({h.colab_url(lab)})", ""]
    lines += ["## La biblioteca", "", "Las implementaciones de referencia que usa este laboratorio:", ""]
    lines += [f"- [`llmlab.{m}`](../biblioteca/{m}.md)" for m in modules] or ["- (ninguna)"]
    lines += ["", "## Medidas", ""]
    if related:
        lines += ["Benchmarks que ejercitan esos módulos (cocientes medidos en la misma ejecución):", ""]
        lines += [f"- [`{b}`](../benchmarks/{b}.md)" for b in related]
    else:
        lines += ["Ningún benchmark ejercita todavía estos módulos."]
    lines += ["", "```{toctree}", ":hidden:", "", f"../labs/{lab}", "```"]  # the lab under its chapter
    return "\n".join(lines) + "\n"


def module_page(module: str) -> str:
    import importlib

    mod = importlib.import_module(f"llmlab.{module}")
    lines = [f"# `llmlab.{module}`", "", "```{automodule} llmlab." + module, ":members:", "```", ""]
    if hasattr(mod, "__path__"):  # a package: its modules too
        for sub in sorted(m.name for m in pkgutil.iter_modules(mod.__path__) if not m.name.startswith("_")):
            lines += [f"## `llmlab.{module}.{sub}`", "", "```{automodule} llmlab." + f"{module}.{sub}",
                      ":members:", "```", ""]
    return "\n".join(lines)


def benchmark_page(name: str, modules: list[str]) -> str:
    path = BENCHMARKS / f"{name}.py"
    uses = ", ".join(f"[`llmlab.{m}`](../biblioteca/{m}.md)" for m in modules if m in library_modules())
    return "\n".join([
        f"# `{name}`", "", f"`python benchmarks/{name}.py`" + (f" · usa {uses}" if uses else ""), "",
        "```text", docstring(path), "```", "", "## Código", "",
        "```{literalinclude} /_code/" + f"{name}.py", ":language: python", "```", ""])


def index_page(title: str, intro: str, entries: list[str]) -> str:
    return "\n".join([f"# {title}", "", intro, "", "```{toctree}", ":maxdepth: 1", "", *entries, "```", ""])


# ------------------------------------------------------------------------------------ build

def write_sources(src: Path = SOURCE) -> None:
    if src.exists():
        shutil.rmtree(src)
    # Files the pages point to, not pages themselves (site/conf.py excludes these folders).
    for folder in ("_cuadernos", "_code", "_imagenes"):
        (src / folder).mkdir(parents=True)
    shutil.copy2(SITE_CONFIG / "colab-badge.svg", src / "_imagenes" / "colab-badge.svg")
    (src / "index.md").write_text(readme_page(), encoding="utf-8")
    (src / "contribuir.md").write_text((labtools.REPO / "CONTRIBUTING.md").read_text(encoding="utf-8"),
                                       encoding="utf-8")
    benches = benchmarks()
    for lab in labtools.lab_names():
        (src / "capitulos").mkdir(exist_ok=True)
        (src / "capitulos" / f"{lab}.md").write_text(chapter_page(lab, benches), encoding="utf-8")
        (src / "labs").mkdir(exist_ok=True)
        nbformat.write(reading_notebook(lab), src / "labs" / f"{lab}.ipynb")
        shutil.copy2(labtools.release_path(lab), src / "_cuadernos" / f"{lab}.ipynb")
    (src / "biblioteca").mkdir()
    modules = library_modules()
    for module in modules:
        (src / "biblioteca" / f"{module}.md").write_text(module_page(module), encoding="utf-8")
    (src / "biblioteca" / "index.md").write_text(index_page(
        "La biblioteca `llmlab`", "Cada módulo es una idea del curso; su documentación sale de su código.",
        modules), encoding="utf-8")
    (src / "benchmarks").mkdir()
    for name, used in benches.items():
        shutil.copy2(BENCHMARKS / f"{name}.py", src / "_code" / f"{name}.py")
        (src / "benchmarks" / f"{name}.md").write_text(benchmark_page(name, used), encoding="utf-8")
    (src / "benchmarks" / "index.md").write_text(index_page(
        "Benchmarks", "Medidas de rendimiento: cocientes medidos lado a lado en la misma ejecución.",
        list(benches)), encoding="utf-8")


def build(out: Path = OUT, src: Path = SOURCE) -> Path:
    """Write the page sources and run Sphinx; returns the folder with index.html."""
    write_sources(src)
    if out.exists():
        shutil.rmtree(out)
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(SITE_CONFIG), str(src), str(out)],
        capture_output=True, text=True,
    )
    if proc.returncode != 0 or not (out / "index.html").exists():
        raise RuntimeError(f"sphinx-build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    warnings = [line for line in proc.stderr.splitlines() if "WARNING" in line]
    (out / "build-warnings.txt").write_text("\n".join(warnings) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the course site.")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    out = build(args.out.resolve())
    print(f"Sitio del curso en {out}/index.html ({time.perf_counter() - start:.1f} s)")
    print(f"Para verlo: python -m http.server -d {out} -b 127.0.0.1 8000, y abre http://127.0.0.1:8000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
