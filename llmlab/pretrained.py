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
import json
import os
import pathlib
from importlib import resources

import torch

from . import _safetensors
from .model import ModelConfig, Transformer, count_parameters
from .tokenizer import BPETokenizer

__all__ = [
    "CHECKSUMS",
    "ChecksumError",
    "MANIFEST",
    "available",
    "info",
    "load",
    "load_tokenizer",
    "model_card",
    "models_dir",
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
    """
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
