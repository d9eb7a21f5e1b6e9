"""llmlab.multimodal: cosine similarity, CLIP-style ranking and ViT patches (chapter 05)."""

import numpy as np
import pytest

from llmlab.multimodal import cosine_similarity, patchify, unpatchify, zero_shot_rank


def test_cosine_similarity_basics():
    assert cosine_similarity([1, 0], [0, 3]) == 0.0
    assert cosine_similarity([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0, abs=1e-15)
    rng = np.random.default_rng(0)
    v, t = rng.normal(size=8), rng.normal(size=8)
    assert cosine_similarity(10 * v, t) == pytest.approx(cosine_similarity(v, t), abs=1e-15)  # scale invariant
    with pytest.raises(ValueError, match="zero vector"):
        cosine_similarity([0, 0], [1, 1])
    with pytest.raises(ValueError, match="same length"):
        cosine_similarity([1, 2], [1, 2, 3])


def test_zero_shot_rank_of_the_chapter_example():
    # unit text vectors and an image vector built to have similarities 0.82, 0.31, 0.08
    texts = np.eye(4)[:3]
    image = np.array([0.82, 0.31, 0.08, np.sqrt(1 - 0.82**2 - 0.31**2 - 0.08**2)]) * 7.0
    ranked = zero_shot_rank(image, texts, ["auriculares rotos", "caja de zapatos", "perro en un parque"])
    assert [label for label, _ in ranked] == ["auriculares rotos", "caja de zapatos", "perro en un parque"]
    np.testing.assert_allclose([s for _, s in ranked], [0.82, 0.31, 0.08], atol=1e-12)
    # a distractor with a huge norm but a poor direction does not win (mistake 5-M4)
    ranked = zero_shot_rank(image, np.vstack([texts, 100 * np.array([0.1, 0.1, 0.1, 1.0])]), ["a", "b", "c", "grande"])
    assert ranked[0][0] == "a"


def test_patchify_shapes_order_and_round_trip():
    img = np.arange(224 * 224 * 3, dtype=float).reshape(224, 224, 3)
    patches = patchify(img, 16)
    assert patches.shape == (196, 768)
    np.testing.assert_array_equal(patches[0], img[:16, :16].reshape(-1))  # top-left first
    np.testing.assert_array_equal(patches[1], img[:16, 16:32].reshape(-1))  # then to the right
    np.testing.assert_array_equal(patches[14], img[16:32, :16].reshape(-1))  # then the next row
    np.testing.assert_array_equal(unpatchify(patches, 224, 224, 16), img)
    assert patchify(np.zeros((6, 4, 2)), 2).shape == (6, 8)
    with pytest.raises(ValueError, match="divide"):
        patchify(np.zeros((30, 32, 3)), 16)
    with pytest.raises(ValueError):
        patchify(np.zeros((32, 32)), 16)
