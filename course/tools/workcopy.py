"""Give a student a working copy of every lab, so that `make release` or `git pull` never touches their work.

    python course/tools/workcopy.py            # copies labs/<lab>/ to mis-labs/<lab>/ where it is missing
    python course/tools/workcopy.py --to DIR   # ... to DIR/<lab>/ instead

A lab already in the working folder is left exactly as it is (never overwritten, never merged): the student's
notebook is theirs. `make lab` runs this and opens JupyterLab there. mis-labs/ is ignored by git.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import labtools

WORK = labtools.REPO / "mis-labs"


def copy_missing(labs_dir: Path, work: Path) -> list[str]:
    """Copy each lab folder of labs_dir that work/ lacks; returns the labs copied now."""
    copied = []
    for lab in sorted(p for p in labs_dir.iterdir() if p.is_dir() and (p / f"{p.name}.ipynb").exists()):
        target = work / lab.name
        if target.exists():
            continue
        work.mkdir(parents=True, exist_ok=True)
        scratch = work / f".{lab.name}.copiando"
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(lab, scratch, ignore=shutil.ignore_patterns("*.copia-*", ".ipynb_checkpoints"))
        scratch.rename(target)  # all or nothing: an interrupted copy is retried next time
        copied.append(lab.name)
    return copied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Working copies of the labs for a student.")
    parser.add_argument("--to", type=Path, default=WORK, help="where the copies go (default: mis-labs/)")
    args = parser.parse_args(argv)
    copied = copy_missing(labtools.LABS, args.to)
    for lab in copied:
        print(f"copia de trabajo: {args.to / lab}/")
    print(f"Trabaja en {args.to}/: ahí nada lo sobrescribe (ni make release ni git pull).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
