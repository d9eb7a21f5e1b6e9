"""The machinery that makes ``llmlab/data/``: course tooling, not part of the library (nor of its wheel).

    make corpus      # python -m makedata.corpus_writer: the generated part of the corpus and its REPORT.md
    make model       # python -m makedata.models: the tokenizer and the tiny models, measured (REPORT.md)
    make adapters    # python -m makedata.adapters: the shipped LoRA adapters and lab 06's measurements

Run from the repository root with ``course/tools`` on the path (the Makefile does). ``quality`` holds the
measures of the models' own text that ``models`` reports; ``models_report`` writes the models' REPORT.md.
Everything here imports only ``llmlab``'s public modules; ``llmlab`` imports nothing from here.
"""

from pathlib import Path

import llmlab

# Where the builds write: the data folder of the llmlab being imported (the checkout's, with PYTHONPATH=.).
DATA = Path(llmlab.__file__).resolve().parent / "data"
