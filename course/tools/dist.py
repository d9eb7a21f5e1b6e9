"""The instructor release: llmlab's wheel and a versioned bundle of the course.

    python course/tools/dist.py --wheel-only      # build/wheel/llmlab-<version>-py3-none-any.whl  (make wheel)
    python course/tools/dist.py                   # dist/llmlab-curso-<version>.zip                (make dist)
    python course/tools/dist.py --tag             # the git tag v<version> the Colab badges open      (make tag)

The bundle holds what an instructor hands out or installs, and nothing students must not see:

    llmlab-curso-<version>/
        cuadernos-<version>.zip          the student notebooks (labs/), as released by nbgrader
        llmlab-<version>-py3-none-any.whl  the library with its data (models, tokenizer, corpus)
        curso/                            the nbgrader course configuration, with the modules and templates it loads
        CORREGIR.md                       how to grade, in Spanish
        CHANGELOG.md                      this version's entry
        SHA256SUMS                        a checksum for every file above

Releasing a version: `make release`, commit labs/, then `make tag`: every lab's "Abrir en Colab" badge and the
setup cell's wheel address name the ref of this version (`hosting`, `v<version>`), and `make tag` creates that tag
on the current commit (it refuses when labs/ or solutions/ have uncommitted changes, or when the tag exists on
another commit); push it with `git push origin v<version>` and attach the wheel to the GitHub release of that tag.

No solution and no hidden test goes in (checked here and by tests/test_dist.py): grading needs the
instructor sources in solutions/, which stay in the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

import labtools
import release

BUILD = labtools.REPO / "build"
DIST = labtools.REPO / "dist"
# What the wheel is built from: the package and the files its metadata points to.
WHEEL_SOURCES = ["pyproject.toml", "README.md", "LICENSE", "llmlab"]
# The course configuration and the modules it imports (course/tools/<name>.py).
COURSE_CONFIG = ["nbgrader_config.py"]
# A fixed timestamp inside the zips: the same release gives the same bytes.
ZIP_DATE = (2020, 1, 1, 0, 0, 0)


def version() -> str:
    return tomllib.loads((labtools.REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def tracked_files(paths: list[str]) -> list[Path]:
    """The files under `paths` that git tracks (so stray local files never ship); all files without git."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=labtools.REPO,
                             capture_output=True, text=True, check=True).stdout
        files = [labtools.REPO / name for name in out.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        files = [p for name in paths for p in ([labtools.REPO / name] if (labtools.REPO / name).is_file()
                 else sorted((labtools.REPO / name).rglob("*")))]
    return [p for p in files if p.is_file() and "__pycache__" not in p.parts]


def build_wheel(out: Path = BUILD / "wheel") -> Path:
    """Build the wheel with `python -m build` from a clean copy of the tracked package files."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"llmlab-{version()}-py3-none-any.whl"
    wheel.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "llmlab"
        for path in tracked_files(WHEEL_SOURCES):
            dest = src / path.relative_to(labtools.REPO)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
        proc = subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)],
            capture_output=True, text=True,
        )
        if proc.returncode != 0 or not wheel.exists():
            raise RuntimeError(f"python -m build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return wheel


def changelog_entry(ver: str, path: Path = labtools.REPO / "CHANGELOG.md") -> str:
    """The section of CHANGELOG.md for `ver` (a heading `## <ver>`), or an error if there is none."""
    text = path.read_text(encoding="utf-8")
    match = re.search(rf"^## \[?{re.escape(ver)}\]?\b.*?(?=^## |\Z)", text, re.M | re.S)
    if not match:
        raise SystemExit(f"CHANGELOG.md has no entry for version {ver}: add a '## {ver}' section first")
    return match.group(0).strip() + "\n"


def _zip_files(target: Path, files: dict[str, Path]) -> None:
    """Write `files` ({name in zip: file}) with fixed dates and sorted names: reproducible bytes."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name].read_bytes())


def student_notebooks() -> dict[str, Path]:
    """labs/<lab>/... for every lab: what nbgrader released (no checkpoints, no caches)."""
    files = {}
    for lab in labtools.lab_names():
        for path in sorted((labtools.LABS / lab).rglob("*")):
            if path.is_file() and ".ipynb_checkpoints" not in path.parts and "__pycache__" not in path.parts:
                files[f"labs/{path.relative_to(labtools.LABS)}"] = path
    return files


def _local_imports(path: Path) -> list[Path]:
    """The course/tools modules (and package __init__ files) a Python file imports."""
    import ast

    tools = labtools.COURSE / "tools"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        for name in names:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                base = tools.joinpath(*parts[:i])
                for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                    if candidate.is_file():
                        found.append(candidate)
    return found


def course_config_files() -> dict[str, Path]:
    """course/nbgrader_config.py, the course/tools modules it loads (with what they import), its templates."""
    config = labtools.COURSE / "nbgrader_config.py"
    files = {"curso/nbgrader_config.py": config}
    text = config.read_text(encoding="utf-8")
    named = set(re.findall(r'"(\w+)\.\w+"', text))  # "feedback.CleanTestTracebacks", "mathml.markdown2html"
    todo = [labtools.COURSE / "tools" / f"{name}.py" for name in sorted(named)]
    while todo:
        module = todo.pop()
        rel = f"curso/{module.relative_to(labtools.COURSE).as_posix()}"
        if module.is_file() and rel not in files:
            files[rel] = module
            todo += _local_imports(module)
    for path in tracked_files(["course/jupyter"]):
        files[f"curso/{path.relative_to(labtools.COURSE).as_posix()}"] = path
    return dict(sorted(files.items()))


def leaks(folder: Path) -> list[str]:
    """Solution or hidden-test text anywhere in the bundle (inside zips and wheels too).

    Notebooks and Python files are scanned for nbgrader's markers; notebooks also line by line for the
    solution and hidden-test lines of their lab (release.leaks' rule). The library's own code is not:
    it *is* the reference the labs ask students to rebuild, and students install it.
    """
    markers = (labtools.SOLUTION_BEGIN, labtools.SOLUTION_END, labtools.HIDDEN_BEGIN, labtools.HIDDEN_END)
    secrets = {lab: labtools.secret_lines(labtools.load_json_notebook(labtools.solution_path(lab)))
               for lab in labtools.lab_names()}
    found = []

    def scan(name: str, data: bytes) -> None:
        if name.endswith((".zip", ".whl")):
            with zipfile.ZipFile(io.BytesIO(data)) as inner:
                for member in inner.namelist():
                    scan(f"{name}!{member}", inner.read(member))
            return
        text = data.decode("utf-8", errors="replace")
        if name.endswith((".ipynb", ".py")):  # (the README, in the wheel's metadata, documents the markers)
            for marker in markers:
                if marker in text:
                    found.append(f"{name}: contains {marker!r}")
        if re.search(r"(^|[/!])solutions/", name):
            found.append(f"{name}: instructor notebook")
        if name.endswith(".ipynb"):
            labs = [lab for lab in secrets if f"/{lab}/" in f"/{name}"] or list(secrets)
            import nbformat

            try:
                nb = nbformat.reads(text, as_version=4)
                lines = {line.strip() for cell in nb.cells for line in cell.source.splitlines()}
            except Exception:  # noqa: BLE001 - not a notebook after all: scan its raw lines
                lines = {line.strip() for line in text.splitlines()}
            for lab in labs:
                for secret in sorted(secrets[lab] & lines):
                    found.append(f"{name}: contains a solution/hidden line of {lab}: {secret[:70]!r}")

    for path in sorted(folder.rglob("*")):
        if path.is_file():
            scan(str(path.relative_to(folder)), path.read_bytes())
    return found


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_bundle(out: Path = DIST) -> Path:
    """Build dist/llmlab-curso-<version>/ and its zip; returns the zip."""
    ver = version()
    entry = changelog_entry(ver)  # before anything slow: a release needs its notes
    problems = release.leaks(labtools.lab_names(), labtools.LABS)
    if problems:
        raise SystemExit("labs/ leaks solutions; run `make release`:\n" + "\n".join(problems))
    name = f"llmlab-curso-{ver}"
    folder = Path(out).resolve() / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)

    _zip_files(folder / f"cuadernos-{ver}.zip", student_notebooks())
    shutil.copy2(build_wheel(BUILD / "wheel"), folder)
    for rel, path in course_config_files().items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, folder / rel)
    instructions = (labtools.COURSE / "CORREGIR.md").read_text(encoding="utf-8")
    (folder / "CORREGIR.md").write_text(instructions.replace("{version}", ver), encoding="utf-8")
    (folder / "CHANGELOG.md").write_text(f"# llmlab {ver}\n\n{entry}", encoding="utf-8")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    (folder / "SHA256SUMS").write_text(
        "".join(f"{sha256(p)}  {p.relative_to(folder).as_posix()}\n" for p in files), encoding="utf-8")

    problems = leaks(folder)
    if problems:
        raise SystemExit("the bundle would leak solutions:\n" + "\n".join(problems))
    target = folder.parent / f"{name}.zip"
    _zip_files(target, {f"{name}/{p.relative_to(folder).as_posix()}": p
                        for p in sorted(folder.rglob("*")) if p.is_file()})
    return target


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=labtools.REPO, capture_output=True, text=True)


def tag() -> str:
    """Create the tag the badges open (hosting's ref, `v<version>`) on HEAD; returns it. Spanish errors."""
    import hosting

    ref = hosting.settings().ref
    if _git("rev-parse", "--git-dir").returncode != 0:
        raise SystemExit(f"{labtools.REPO} no es un repositorio git: no se puede crear la etiqueta {ref}.")
    dirty = _git("status", "--porcelain", "--", "labs", "solutions").stdout.strip()
    if dirty:
        raise SystemExit(f"labs/ o solutions/ tienen cambios sin confirmar: haz commit (tras `make release`) y "
                         f"vuelve a ejecutar `make tag`.\n{dirty[:1000]}")
    head = _git("rev-parse", "HEAD").stdout.strip()
    existing = _git("rev-parse", "--verify", "--quiet", f"refs/tags/{ref}^{{commit}}")
    if existing.returncode == 0:
        if existing.stdout.strip() == head:
            return ref
        raise SystemExit(f"La etiqueta {ref} ya existe en otro commit ({existing.stdout.strip()[:12]}): sube la "
                         "versión en pyproject.toml (project.version), ejecuta `make release` y luego `make tag`.")
    made = _git("tag", "-a", ref, "-m", f"llmlab {version()}")
    if made.returncode != 0:
        raise SystemExit(f"git no pudo crear la etiqueta {ref}: {made.stderr.strip()[:500]}")
    return ref


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build llmlab's wheel and the instructor bundle.")
    parser.add_argument("--wheel-only", action="store_true", help="only build the wheel (make wheel)")
    parser.add_argument("--out", type=Path, help="output folder (default: build/wheel or dist/)")
    parser.add_argument("--tag", action="store_true", help="create the git tag the Colab badges open (make tag)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.tag:
        ref = tag()
        print(f"Etiqueta {ref} en el commit actual: los botones «Abrir en Colab» de labs/ la abren. Súbela con "
              f"`git push origin {ref}` y adjunta la rueda (make wheel) a esa versión en GitHub.")
        return 0
    if args.wheel_only:
        wheel = build_wheel(args.out or BUILD / "wheel")
        print(f"{wheel} ({wheel.stat().st_size / 1e6:.1f} MB) en {time.perf_counter() - start:.1f} s")
        return 0
    bundle = build_bundle(args.out or DIST)
    print(f"Paquete del curso: {bundle} ({bundle.stat().st_size / 1e6:.1f} MB) en {time.perf_counter() - start:.1f} s")
    print(f"Contenido y sumas de comprobación: {bundle.with_suffix('')}/SHA256SUMS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
