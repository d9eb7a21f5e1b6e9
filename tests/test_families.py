"""llmlab.families: chapter 05's levers, levels and transformer families as data."""

import pytest

from llmlab.families import FAMILIES, LEVELS, LEVERS, family_of, level_of, lever_of


def test_lookups_ignore_case_and_spaces():
    assert lever_of(" Mezcla de expertos ") == "capacidad"
    assert lever_of("autoconsistencia") == "proceso" and lever_of("parches de imagen") == "entrada"
    assert level_of("RAG") == "arquitectura de sistema"  # a system, not a neural layer
    assert level_of("Mixtral") == "modelo entrenado" and level_of("MoE") == "arquitectura neuronal"
    assert family_of("GPT-2") == "solo decodificador" and family_of("T5") == "codificador-decodificador"
    with pytest.raises(KeyError, match="known"):
        family_of("llama")


def test_tables_use_only_their_labels():
    assert set(LEVERS.values()) == {"capacidad", "proceso", "entrada"}
    assert set(LEVELS.values()) == {"arquitectura neuronal", "modelo entrenado", "arquitectura de sistema"}
    assert len(set(FAMILIES.values())) == 6
