"""Numbers printed the Spanish way (llmlab.spanish)."""

import numpy as np
import pytest

from llmlab.spanish import THIN, fmt_bytes, fmt_int, fmt_num, fmt_pct


def test_thousands_are_grouped_by_a_narrow_space_from_five_digits():
    assert fmt_int(6_442_450_944) == f"6{THIN}442{THIN}450{THIN}944"
    assert fmt_int(2048) == "2048"
    assert fmt_int(16_777_216) == f"16{THIN}777{THIN}216"
    assert fmt_int(-131_072) == f"-131{THIN}072"
    assert fmt_int(np.int64(12345)) == f"12{THIN}345"
    assert fmt_int(1e6) == f"1{THIN}000{THIN}000"


def test_decimals_keep_the_point_and_group_the_whole_part():
    assert fmt_num(1_234_567.891, 2) == f"1{THIN}234{THIN}567.89"
    assert fmt_num(0.767528, 3) == "0.768"
    assert fmt_num(np.float64(0.951), 3) == "0.951"
    assert fmt_num(-0.0001, 2) == "0.00"
    assert fmt_num(12, 0) == "12"
    assert fmt_num(float("inf")) == "∞"


def test_percentages_and_bytes():
    assert fmt_pct(0.00781) == f"0.8{THIN}%"
    assert fmt_bytes(14e9) == "14.00 GB"
    assert fmt_bytes(14e9, "GiB") == "13.04 GiB"
    assert fmt_bytes(2**31, "GiB", 0) == "2 GiB"


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="unit"):
        fmt_bytes(1, "gb")
    with pytest.raises(ValueError, match="integer"):
        fmt_int(2.5)
    with pytest.raises(TypeError, match="real number"):
        fmt_num("3")
    with pytest.raises(ValueError, match="decimals"):
        fmt_num(1.0, -1)
