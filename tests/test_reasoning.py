"""llmlab.reasoning: voting, answer extraction, the binomial majority and the departure plan (chapter 05)."""

import math
import random

import pytest

from llmlab.reasoning import (extract_answer, extract_number, majority_vote_accuracy, parse_time, plan_start_time,
                              self_consistency, vote_over_rationales)


def test_self_consistency_of_the_chapter():
    assert self_consistency(["14:30", "14:30", "14:00", "14:30", "14:45"]) == "14:30"
    assert self_consistency(["14:30 ", "14:00", " 14:30"]) == "14:30"  # spaces do not split votes
    assert self_consistency(["b", "a", "a", "b"]) == "b"  # tie: the first seen wins
    with pytest.raises(ValueError, match="empty"):
        self_consistency([])
    with pytest.raises(TypeError):
        self_consistency("14:30")


def test_extract_answer_takes_the_last_time():
    assert extract_answer("Salgo a las 14:00... no, mejor a las 14:30.") == "14:30"
    assert extract_answer("a las 9:05 en punto") == "09:05"
    assert extract_answer("sin hora") is None
    assert extract_answer("25:00 no es una hora") is None


def test_extract_number_takes_the_last_number_with_sign_and_either_decimal_mark():
    assert extract_number("Había −3,5 grados y subió 6, así que hay 2,5.") == 2.5
    assert extract_number("x = -12.75") == -12.75
    assert extract_number("son 3, 4 y 5") == 5.0  # a comma followed by a space is not a decimal comma
    assert extract_number("quedan 69.") == 69.0 and type(extract_number("quedan 69.")) is float
    assert extract_number("el experto E4") == 4.0
    assert extract_number("no lo sé") is None and extract_number("") is None
    assert extract_number("٣ no es una cifra ASCII") is None
    with pytest.raises(TypeError):
        extract_number(3)


def test_vote_over_rationales_skips_the_ones_without_a_number_and_breaks_ties_by_first_seen():
    assert vote_over_rationales(["da 3,5", "da 2", "da 3.5", "no sé", "da 2"]) == (3.5, 2)
    answer, votes = vote_over_rationales(["1", "x", "1.0", "2"])
    assert (answer, votes) == (1.0, 2) and type(answer) is float and type(votes) is int
    with pytest.raises(ValueError):
        vote_over_rationales(["nada", "tampoco"])
    with pytest.raises(ValueError):
        vote_over_rationales([])
    with pytest.raises(TypeError):
        vote_over_rationales("3")


def test_majority_vote_accuracy_is_the_binomial_tail_and_matches_a_simulation():
    assert majority_vote_accuracy(0.6, 5) == pytest.approx(0.68256, abs=1e-12)
    assert majority_vote_accuracy(0.6, 1) == pytest.approx(0.6, abs=1e-15)
    assert majority_vote_accuracy(0.5, 11) == pytest.approx(0.5, abs=1e-12)  # symmetric
    assert majority_vote_accuracy(0.4, 21) < 0.4 < majority_vote_accuracy(0.4, 1) + 1e-12  # voting hurts below 1/2
    rng = random.Random(0)
    wins = sum(sum(rng.random() < 0.7 for _ in range(7)) >= 4 for _ in range(20000))
    assert wins / 20000 == pytest.approx(majority_vote_accuracy(0.7, 7), abs=0.01)
    for bad in [(1.2, 3), (0.5, 4), (0.5, 0), (0.5, 3.0)]:
        with pytest.raises(ValueError):
            majority_vote_accuracy(*bad)


def test_plan_start_time():
    assert plan_start_time("16:00") == "15:10"
    assert plan_start_time("16:00", 10, 25, 15) == "15:10"
    assert plan_start_time("00:20", 0, 45, 0) == "23:35"
    assert plan_start_time("9:05", 5, 0, 0) == "09:00"
    start = plan_start_time("08:15", 12, 50, 33)
    assert (parse_time(start) + 12 + 50 + 33) % (24 * 60) == parse_time("08:15")  # adding back gives the meeting
    for bad in [("24:00",), ("16.00",), ("16:00", -5), ("16:00", 10, 2.5)]:
        with pytest.raises(ValueError):
            plan_start_time(*bad)
    assert math.isclose(parse_time("23:59"), 1439)
