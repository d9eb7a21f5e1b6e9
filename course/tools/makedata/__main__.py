"""python course/tools/makedata {corpus,models,adapters,quality} [options]: rebuild one part of llmlab/data/.

Each command's --help lists its options (--smoke, --out, --check, ...). The Makefile's `make corpus`,
`make model` and `make adapters` run the real builds.
"""

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a folder (python course/tools/makedata): put course/tools on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from makedata import adapters, models, quality  # noqa: E402
from makedata.corpus_writer import build as corpus  # noqa: E402

COMMANDS = {"corpus": corpus.main, "models": models.main, "adapters": adapters.main, "quality": quality.main}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python course/tools/makedata {{{','.join(COMMANDS)}}} [options]", file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
