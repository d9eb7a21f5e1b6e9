"""The shipped models (llmlab.pretrained), their safetensors files (llmlab._safetensors) and the build."""

import hashlib
import json
import pathlib
import shutil
import socket

import pytest
import torch

from llmlab import _safetensors, corpus, lora, pretrained
from llmlab.model import count_parameters, generate
from llmlab.tokenizer import BPETokenizer

NAMES = ["es-base", "es-mini", "es-chat"]
SHIPPED = pretrained.models_dir()


# ----------------------------------------------------------------------------------------------
# safetensors: byte-compatible with the real library
# ----------------------------------------------------------------------------------------------


def assorted_tensors():
    g = torch.Generator().manual_seed(0)
    return {
        "model.w": torch.randn(3, 5, generator=g).half(),
        "model.b": torch.randn(5, generator=g).to(torch.bfloat16),
        "a.scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 4),
        "ids": torch.arange(7, dtype=torch.int64),
        "flags": torch.tensor([True, False, True]),
        "bytes": torch.arange(5, dtype=torch.uint8),
        "small": torch.tensor([-3, 4], dtype=torch.int8),
        "i16": torch.tensor([-300, 7], dtype=torch.int16),
        "i32": torch.tensor([[1, -2], [3, 4]], dtype=torch.int32),
        "f64": torch.randn(2, 2, generator=g, dtype=torch.float64),
        "transposed": torch.randn(4, 3, generator=g).t(),  # not contiguous
    }


@pytest.mark.parametrize("metadata", [None, {"format": "pt"}])
def test_safetensors_bytes_equal_the_real_library(metadata):
    st = pytest.importorskip("safetensors.torch")
    tensors = assorted_tensors()
    ours = _safetensors.save(tensors, metadata)
    theirs = st.save({k: v.contiguous() for k, v in tensors.items()}, metadata=metadata)
    assert ours == theirs


def test_safetensors_reads_and_is_read_by_the_real_library(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    tensors = assorted_tensors()
    metadata = {"format": "pt", "note": "ñandú", "z": "1"}  # several keys: same content, maybe not the same bytes
    _safetensors.save_file(tensors, tmp_path / "ours.safetensors", metadata)
    st.save_file({k: v.contiguous() for k, v in tensors.items()}, tmp_path / "theirs.safetensors", metadata=metadata)
    for path in ("ours.safetensors", "theirs.safetensors"):
        for loaded in (_safetensors.load_file(tmp_path / path), st.load_file(tmp_path / path)):
            assert set(loaded) == set(tensors)
            for k, v in tensors.items():
                assert loaded[k].dtype == v.dtype and torch.equal(loaded[k], v), k
        assert _safetensors.read_metadata(tmp_path / path) == metadata
    from safetensors import safe_open

    with safe_open(str(tmp_path / "ours.safetensors"), "pt") as f:
        assert f.metadata() == metadata


def test_safetensors_rejects_malformed_files():
    data = _safetensors.save({"w": torch.ones(4)})
    with pytest.raises(ValueError, match="not a valid range of the 15-byte data block"):
        _safetensors.load(data[:-1])  # truncated
    with pytest.raises(ValueError, match="has 17 bytes but the tensors cover 16"):
        _safetensors.load(data + b"\0")  # extra bytes
    with pytest.raises(ValueError, match="header length"):
        _safetensors.load((10**6).to_bytes(8, "little") + data[8:])
    with pytest.raises(ValueError, match="shorter"):
        _safetensors.load(b"abc")
    header = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                         "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode()
    with pytest.raises(ValueError, match="overlap"):
        _safetensors.load(len(header).to_bytes(8, "little") + header + bytes(12))
    header = json.dumps({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}).encode()
    with pytest.raises(ValueError, match="needs 12 bytes"):
        _safetensors.load(len(header).to_bytes(8, "little") + header + bytes(8))
    header = json.dumps({"a": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 1]}}).encode()
    with pytest.raises(ValueError, match="unknown dtype"):
        _safetensors.load(len(header).to_bytes(8, "little") + header + bytes(1))
    with pytest.raises(ValueError, match="reserved"):
        _safetensors.save({"__metadata__": torch.ones(1)})


# ----------------------------------------------------------------------------------------------
# The shipped models
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loaded():
    return {name: pretrained.load(name) for name in NAMES}


def test_available_lists_the_three_models_with_spanish_descriptions():
    models = pretrained.available()
    assert list(models) == NAMES
    for description in models.values():
        assert isinstance(description, str) and 20 < len(description) < 200 and "\n" not in description
    assert "parámetros" in models["es-base"] and "chatml" in models["es-chat"]


def test_load_works_offline(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("llmlab.pretrained tried to open a network connection")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    model, tok = pretrained.load("es-mini")
    assert model.config.vocab_size == len(tok)


def test_config_tokenizer_and_weights_agree(loaded):
    base_params = count_parameters(loaded["es-base"][0])
    for name, (model, tok) in loaded.items():
        card = pretrained.info(name)
        assert model.config.to_dict() == card["config"]
        assert model.config.vocab_size == len(tok) and 2048 <= len(tok) <= 4096
        assert count_parameters(model) == card["parameters"]
        assert all(p.dtype == torch.float32 for p in model.parameters())
        assert not model.training
        c = model.config
        assert (c.pos_encoding, c.norm, c.mlp) == ("rope", "rmsnorm", "swiglu")
        assert c.n_kv_heads < c.n_heads  # grouped-query attention
        assert tok.to_dict() == loaded["es-base"][1].to_dict()  # one tokenizer for all
    assert 1_000_000 <= base_params <= 12_000_000
    # es-mini is es-base's draft: narrower (d_model) and smaller, with the same tokenizer. With a 4096-token
    # vocabulary most of both models is their two embedding tables, so the draft is not 3 times smaller
    # (d96 against d128: 1.19 M against 1.77 M parameters).
    assert count_parameters(loaded["es-mini"][0]) * 1.4 < base_params
    assert loaded["es-mini"][0].config.d_model < loaded["es-base"][0].config.d_model
    assert loaded["es-chat"][0].config == loaded["es-base"][0].config
    assert pretrained.info("es-chat")["chat_style"] == "chatml"
    assert pretrained.info("es-base")["chat_style"] is None


def test_weights_are_float16_on_disk_and_match_the_loaded_model(loaded):
    model, _ = loaded["es-base"]
    tensors = _safetensors.load_file(SHIPPED / "es-base.safetensors")
    state = model.state_dict()
    assert set(tensors) == set(state)
    for k, t in tensors.items():
        assert t.dtype == torch.float16
        assert torch.equal(t.float(), state[k])


def test_shipped_weights_are_exactly_what_the_real_library_writes():
    st = pytest.importorskip("safetensors.torch")
    data = (SHIPPED / "es-mini.safetensors").read_bytes()
    theirs = st.load(data)
    assert st.save(theirs, metadata={"format": "pt"}) == data
    ours = _safetensors.load(data)
    assert all(torch.equal(ours[k], theirs[k]) for k in theirs) and set(ours) == set(theirs)


def test_shipped_files_are_small_and_checksummed():
    sums = {}
    for line in (SHIPPED / pretrained.CHECKSUMS).read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ")
        sums[name] = digest
    for name in NAMES:
        card = pretrained.info(name)
        assert f"{name}.json" in sums
        if card["adapter"]:  # es-chat ships as a LoRA adapter on its parent, not as a copy of the weights
            assert {f"{card['adapter']}/adapter_config.json", f"{card['adapter']}/adapter_model.safetensors"} <= set(sums)
            assert f"{name}.safetensors" not in sums and not (SHIPPED / f"{name}.safetensors").is_file()
        else:
            assert f"{name}.safetensors" in sums
    assert {"tokenizer.json", "manifest.json"} <= set(sums)
    for name, digest in sums.items():
        assert hashlib.sha256((SHIPPED / name).read_bytes()).hexdigest() == digest
    total = sum(f.stat().st_size for f in pathlib.Path(str(SHIPPED)).rglob("*") if f.is_file())
    assert total <= 25e6, f"shipped models take {total / 1e6:.1f} MB (limit: 25 MB)"
    pretrained.verify()  # everything listed


def test_a_corrupted_or_missing_file_is_detected(tmp_path):
    folder = tmp_path / "models"
    shutil.copytree(SHIPPED, folder)
    pretrained.load("es-mini", models_dir=folder)  # the copy is fine

    weights = folder / "es-mini.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x01  # one flipped bit in the middle of the weights
    weights.write_bytes(bytes(data))
    with pytest.raises(pretrained.ChecksumError, match="es-mini.safetensors.*corrupted"):
        pretrained.load("es-mini", models_dir=folder)
    pretrained.load("es-base", models_dir=folder)  # other models are unaffected

    weights.unlink()
    with pytest.raises(FileNotFoundError, match="es-mini.safetensors.*missing"):
        pretrained.load("es-mini", models_dir=folder)

    (folder / "tokenizer.json").write_text((SHIPPED / "tokenizer.json").read_text(encoding="utf-8") + " ", encoding="utf-8")
    with pytest.raises(pretrained.ChecksumError, match="tokenizer.json"):
        pretrained.load("es-base", models_dir=folder)

    (folder / pretrained.CHECKSUMS).unlink()
    with pytest.raises(FileNotFoundError, match="checksums.sha256 is missing"):
        pretrained.load("es-base", models_dir=folder)


def test_chat_model_is_a_lora_adapter_merged_into_the_base(loaded):
    card = pretrained.info("es-chat")
    assert card["parent"] == "es-base" and card["adapter"] and card["weights"] is None
    folder = pathlib.Path(str(SHIPPED / card["adapter"]))
    assert sum(f.stat().st_size for f in folder.iterdir()) < 2e6  # a few hundred KB, not a second es-base
    # load("es-chat") is exactly: es-base + the adapter, merged (W + s·B·A).
    base, _ = pretrained.load("es-base")
    lora.load_adapter(base, folder)
    lora.unload(base, merge=True)
    chat_state, base_state = loaded["es-chat"][0].state_dict(), loaded["es-base"][0].state_dict()
    assert all(torch.equal(v, chat_state[k]) for k, v in base.state_dict().items())
    changed = [k for k in base_state if not torch.equal(base_state[k], chat_state[k])]
    assert changed and not any("norm" in k or "emb" in k for k in changed)  # only the adapted linear layers moved


def test_an_adapter_on_another_base_is_refused(tmp_path):
    folder = tmp_path / "models"
    shutil.copytree(SHIPPED, folder)
    tensors = _safetensors.load_file(folder / "es-base.safetensors")
    key = sorted(tensors)[0]
    tensors[key] = tensors[key] + 1  # another base: same shapes, other weights
    _safetensors.save_file(tensors, folder / "es-base.safetensors", metadata={"format": "pt"})
    sums = [line.split("  ")[1] for line in (folder / pretrained.CHECKSUMS).read_text(encoding="utf-8").splitlines()]
    pretrained.write_checksums(folder, sums)
    pretrained.load("es-base", models_dir=folder)  # the base itself loads
    with pytest.raises(ValueError, match="adapter of es-chat.*does not fit es-base"):
        pretrained.load("es-chat", models_dir=folder)


def test_a_chat_model_shipped_as_full_weights_still_loads(tmp_path, loaded):
    # Builds before the adapter (es-chat.safetensors, no "adapter" in the card) keep loading.
    folder = tmp_path / "models"
    shutil.copytree(SHIPPED, folder)
    card = json.loads((folder / "es-chat.json").read_text(encoding="utf-8"))
    pretrained.save_model(loaded["es-chat"][0], folder / "es-chat.safetensors", dtype=torch.float32)
    card.update(adapter=None, weights="es-chat.safetensors")
    (folder / "es-chat.json").write_text(json.dumps(card), encoding="utf-8")
    sums = [line.split("  ")[1] for line in (folder / pretrained.CHECKSUMS).read_text(encoding="utf-8").splitlines()]
    pretrained.write_checksums(folder, sums + ["es-chat.safetensors"])
    model, _ = pretrained.load("es-chat", models_dir=folder)
    expected = loaded["es-chat"][0].state_dict()
    assert all(torch.equal(v, expected[k]) for k, v in model.state_dict().items())


def test_unknown_model_and_bad_dtype():
    with pytest.raises(ValueError, match="unknown model 'gpt-5'.*es-base"):
        pretrained.load("gpt-5")
    with pytest.raises(TypeError, match="dtype"):
        pretrained.load("es-mini", dtype=torch.int64)


def test_load_in_another_dtype():
    model, _ = pretrained.load("es-mini", dtype=torch.float16)
    assert all(p.dtype == torch.float16 for p in model.parameters())


def test_tokenizer_is_the_one_trained_on_the_train_split():
    # Rebuilding it from the train documents gives exactly the shipped one (BPE training is deterministic).
    shipped = pretrained.load_tokenizer()
    rebuilt = BPETokenizer.train(corpus.load_documents("train"), len(shipped))
    assert rebuilt.to_dict() == shipped.to_dict()


# Greedy continuation of «Había una vez» by es-base (20 tokens). This snapshot belongs to the
# shipped weights: after `make model` rebuilds them, update it from the printed value.
GREEDY_SNAPSHOT = " una niña llamada Celia que vivía en un pueblo junto al mar. Era una niña muy generosa y le"


def test_greedy_generation_is_deterministic_and_matches_the_snapshot(loaded):
    model, tok = loaded["es-base"]
    prompt = torch.tensor([tok.bos_id] + tok.encode("Había una vez"))
    a = generate(model, prompt, 20)
    b = generate(model, prompt, 20, use_cache=False)
    assert torch.equal(a, b)
    text = tok.decode(a[len(prompt):].tolist())
    assert text == GREEDY_SNAPSHOT, f"update GREEDY_SNAPSHOT to {text!r} if the models were rebuilt"


def test_chat_model_answers_and_stops(loaded):
    from llmlab.chat import encode_chat

    model, tok = loaded["es-chat"]
    ids = encode_chat([{"role": "user", "content": "¿Qué es la fotosíntesis?"}], tok, "chatml", add_generation_prompt=True)
    end = tok.special_tokens["<|end|>"]
    out = generate(model, torch.tensor(ids), 80, eos_token_id=[end, tok.eos_id])[len(ids):].tolist()
    assert out[-1] == end, "the chat model should close its answer with <|end|>"
    answer = tok.decode(out[:-1])
    assert len(answer.split()) >= 3
