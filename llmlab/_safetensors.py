"""A small reader and writer for the safetensors format (the file format of Hugging Face weights).

``safetensors`` is not a core dependency of llmlab, and the format is simple enough to write in a
page, so the shipped models are read and written here. A file is::

    8 bytes       N, the length of the header, an unsigned little-endian 64-bit integer
    N bytes       a UTF-8 JSON header, padded with spaces to a multiple of 8 bytes:
                  {"__metadata__": {"key": "value", ...},           (optional, strings only)
                   "name": {"dtype": "F16", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
    the rest      the raw bytes of every tensor, little-endian, row-major, back to back;
                  ``data_offsets`` count from the start of this block

There is no pickle anywhere, so loading a file cannot run code (unlike ``torch.load`` of old
checkpoints), and a reader can check every size before it trusts the bytes.

What is byte-for-byte the same as the ``safetensors`` library (``tests/test_pretrained.py``
compares them): the tensor order (largest dtype first, then by name), the compact JSON and the
padding. The one difference: the library writes ``__metadata__`` keys in a random order
(a Rust hash map), this module writes them sorted, so files with two or more metadata keys have the
same content but not always the same bytes.
"""

from __future__ import annotations

import json
import os
import sys

import torch

__all__ = ["DTYPES", "load", "load_file", "read_metadata", "save", "save_file"]

# Format names and torch dtypes, in the order of the library's Dtype enum: tensors are written
# largest-rank dtype first, so the biggest elements come first and every tensor stays aligned.
DTYPES: dict[str, torch.dtype] = {
    "BOOL": torch.bool,
    "U8": torch.uint8,
    "I8": torch.int8,
    "I16": torch.int16,
    "U16": torch.uint16,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I32": torch.int32,
    "U32": torch.uint32,
    "F32": torch.float32,
    "F64": torch.float64,
    "I64": torch.int64,
    "U64": torch.uint64,
}
_NAME_OF = {dtype: name for name, dtype in DTYPES.items()}
_RANK = {name: i for i, name in enumerate(DTYPES)}
_ALIGN = 8  # the header is padded so that the data block starts at a multiple of 8 bytes
_MAX_HEADER = 100_000_000  # bytes; the library refuses larger headers too


def _check_little_endian() -> None:
    if sys.byteorder != "little":
        raise RuntimeError("llmlab._safetensors only supports little-endian machines (as do x86 and ARM)")


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def save(tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of ``tensors`` (a dict name -> tensor) and optional string ``metadata``."""
    _check_little_endian()
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be a dict of name -> torch.Tensor, got {type(tensors).__name__}")
    for name, tensor in tensors.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"tensor names must be non-empty strings, got {name!r}")
        if name == "__metadata__":
            raise ValueError("'__metadata__' is reserved for the metadata and cannot name a tensor")
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"tensors[{name!r}] must be a torch.Tensor, got {type(tensor).__name__}")
        if tensor.layout != torch.strided:
            raise ValueError(f"tensors[{name!r}] is a {tensor.layout} tensor; only dense tensors can be saved")
        if tensor.dtype not in _NAME_OF:
            raise ValueError(f"tensors[{name!r}] has dtype {tensor.dtype}, which safetensors cannot store")
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("metadata must be a dict of str -> str")

    header: dict = {}
    if metadata:
        header["__metadata__"] = {key: metadata[key] for key in sorted(metadata)}
    # Largest dtype first, then by name: the library's order, which keeps every tensor aligned.
    order = sorted(tensors, key=lambda name: (-_RANK[_NAME_OF[tensors[name].dtype]], name))
    chunks, offset = [], 0
    for name in order:
        tensor = tensors[name].detach().to("cpu").contiguous()
        raw = tensor.reshape(-1).view(torch.uint8).numpy().tobytes()
        header[name] = {
            "dtype": _NAME_OF[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % _ALIGN)
    return len(text).to_bytes(8, "little") + text + b"".join(chunks)


def save_file(tensors: dict[str, torch.Tensor], path: str | os.PathLike, metadata: dict[str, str] | None = None) -> None:
    """Write ``save(tensors, metadata)`` to ``path``."""
    data = save(tensors, metadata)
    with open(path, "wb") as f:
        f.write(data)


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------


def _parse_header(data: bytes) -> tuple[dict, dict[str, str] | None, int]:
    """Check the header of ``data`` and return (entries, metadata, start of the data block)."""
    if len(data) < 8:
        raise ValueError(f"not a safetensors file: {len(data)} bytes, shorter than the 8-byte header length")
    n = int.from_bytes(data[:8], "little")
    if n > _MAX_HEADER or 8 + n > len(data):
        raise ValueError(f"not a safetensors file (or truncated): header length {n} does not fit in {len(data)} bytes")
    try:
        header = json.loads(data[8 : 8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"the safetensors header is not valid UTF-8 JSON: {err}") from None
    if not isinstance(header, dict):
        raise ValueError("the safetensors header must be a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and (
        not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values())
    ):
        raise ValueError("__metadata__ must be an object of strings")
    return header, metadata, 8 + n


def load(data: bytes) -> dict[str, torch.Tensor]:
    """Tensors from safetensors bytes, checking every dtype, shape and offset first.

    The tensors own their memory (they are copies, not views of ``data``). Raises ``ValueError``
    for anything malformed: a bad header, an unknown dtype, sizes that do not add up, holes or
    overlaps between tensors, or bytes left over at the end.
    """
    _check_little_endian()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    data = bytes(data)
    entries, _, start = _parse_header(data)
    body = len(data) - start

    spans = []
    for name, info in entries.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise ValueError(f"tensor {name!r}: expected the keys dtype, shape, data_offsets, got {info!r}")
        dtype_name, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dtype_name not in DTYPES:
            raise ValueError(f"tensor {name!r}: unknown dtype {dtype_name!r}; known: {list(DTYPES)}")
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ValueError(f"tensor {name!r}: shape must be a list of non-negative ints, got {shape!r}")
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            and 0 <= offsets[0] <= offsets[1] <= body
        ):
            raise ValueError(f"tensor {name!r}: data_offsets {offsets!r} are not a valid range of the {body}-byte data block")
        numel = 1
        for d in shape:
            numel *= d
        expected = numel * torch.empty((), dtype=DTYPES[dtype_name]).element_size()
        if offsets[1] - offsets[0] != expected:
            raise ValueError(
                f"tensor {name!r}: {dtype_name} of shape {shape} needs {expected} bytes, "
                f"data_offsets give {offsets[1] - offsets[0]}"
            )
        spans.append((offsets[0], offsets[1], name))

    # The tensors must tile the data block exactly: no gap, no overlap, nothing left over.
    position = 0
    for begin, end, name in sorted(spans):
        if begin != position:
            raise ValueError(f"tensor {name!r} starts at byte {begin} of the data block, expected {position} (gap or overlap)")
        position = end
    if position != body:
        raise ValueError(f"the data block has {body} bytes but the tensors cover {position}: the file is corrupted")

    tensors = {}
    for name, info in entries.items():
        dtype, shape = DTYPES[info["dtype"]], info["shape"]
        begin, end = (start + o for o in info["data_offsets"])
        if end == begin:
            tensors[name] = torch.empty(shape, dtype=dtype)
        else:
            raw = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.uint8)
            tensors[name] = raw.view(dtype).reshape(shape)
    return tensors


def load_file(path: str | os.PathLike) -> dict[str, torch.Tensor]:
    """Tensors from a safetensors file (see ``load``)."""
    with open(path, "rb") as f:
        return load(f.read())


def read_metadata(path_or_data: str | os.PathLike | bytes) -> dict[str, str]:
    """The ``__metadata__`` strings of a safetensors file or bytes (``{}`` if there are none)."""
    if isinstance(path_or_data, (bytes, bytearray)):
        data = bytes(path_or_data)
    else:
        with open(path_or_data, "rb") as f:
            head = f.read(8)
            n = int.from_bytes(head, "little") if len(head) == 8 else 0
            data = head + f.read(min(n, _MAX_HEADER))
    _, metadata, _ = _parse_header(data)
    return dict(metadata or {})
