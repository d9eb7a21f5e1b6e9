"""Other worlds as vectors (chapter 05): CLIP-style similarity and ViT image patches, in NumPy.

- ``cosine_similarity(v, t) = v·t / (‖v‖ ‖t‖)``: how well an image vector and a text vector
  match, whatever their lengths (scaling either one changes nothing).
- ``zero_shot_rank``: candidate captions sorted by similarity to an image, CLIP's zero-shot
  classification.
- ``patchify`` / ``unpatchify``: a ViT cuts an ``(H, W, C)`` image into ``p × p`` patches and
  flattens each into one "token" of ``p·p·C`` numbers: 224×224×3 with ``p = 16`` gives 196 tokens
  of 768 values. Patches are numbered row by row from the top-left corner; inside a patch the
  numbers follow the image's own (row, column, channel) order.
"""

from __future__ import annotations

import numpy as np

from llmlab._arrays import as_float_array

__all__ = ["cosine_similarity", "zero_shot_rank", "patchify", "unpatchify"]


def _vector(name: str, x) -> np.ndarray:
    v = as_float_array(name, x, min_ndim=1, max_ndim=1)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite")
    return v


def cosine_similarity(v, t) -> float:
    """``v·t / (‖v‖ ‖t‖)`` for two vectors of the same length; a zero vector has no direction (``ValueError``)."""
    v, t = _vector("v", v), _vector("t", t)
    if v.shape != t.shape:
        raise ValueError(f"v and t must have the same length, got {v.shape[0]} and {t.shape[0]}")
    nv, nt = np.linalg.norm(v), np.linalg.norm(t)
    if nv == 0 or nt == 0:
        raise ValueError("cosine similarity is undefined for a zero vector")
    return float(v @ t / (nv * nt))


def zero_shot_rank(image_vec, text_vecs, labels) -> list[tuple[str, float]]:
    """``[(label, similarity), ...]`` sorted from the best match down (ties keep the given order)."""
    rows = as_float_array("text_vecs", text_vecs, min_ndim=2, max_ndim=2)
    labels = list(labels)
    if len(labels) != rows.shape[0]:
        raise ValueError(f"labels has {len(labels)} entries for {rows.shape[0]} text vectors")
    scored = [(label, cosine_similarity(image_vec, row)) for label, row in zip(labels, rows)]
    return sorted(scored, key=lambda pair: -pair[1])  # sorted() is stable


def patchify(image, patch: int = 16) -> np.ndarray:
    """``(H, W, C)`` image → ``(H/p · W/p, p·p·C)`` patch tokens (``ValueError`` if ``p`` does not divide H and W)."""
    img = as_float_array("image", image, min_ndim=3, max_ndim=3)
    if isinstance(patch, bool) or not isinstance(patch, (int, np.integer)) or patch < 1:
        raise ValueError(f"patch must be an int >= 1, got {patch!r}")
    H, W, C = img.shape
    if H % patch or W % patch:
        raise ValueError(f"patch={patch} must divide the image height and width, got {H}x{W}")
    grid = img.reshape(H // patch, patch, W // patch, patch, C)  # (rows, p, cols, p, C)
    return grid.transpose(0, 2, 1, 3, 4).reshape(-1, patch * patch * C)  # one row per patch


def unpatchify(patches, height: int, width: int, patch: int = 16) -> np.ndarray:
    """Inverse of ``patchify``: ``(N, p·p·C)`` tokens back to the ``(height, width, C)`` image."""
    P = as_float_array("patches", patches, min_ndim=2, max_ndim=2)
    if height % patch or width % patch:
        raise ValueError(f"patch={patch} must divide height and width, got {height}x{width}")
    rows, cols = height // patch, width // patch
    if P.shape[0] != rows * cols or P.shape[1] % (patch * patch):
        raise ValueError(f"patches of shape {P.shape} do not tile a {height}x{width} image with patch={patch}")
    C = P.shape[1] // (patch * patch)
    return P.reshape(rows, cols, patch, patch, C).transpose(0, 2, 1, 3, 4).reshape(height, width, C)
