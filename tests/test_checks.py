"""The checks students read: they must fail when they should, and say why in Spanish."""

import numpy as np
import pytest

from llmlab import checks, metrics
from llmlab.checks import check_close, check_equal, check_raises, check_shape, check_type, hidden, reference_blocked


def test_check_close_accepts_within_tolerance_and_rejects_outside():
    check_close([0.1, 0.2], [0.1, 0.2 + 1e-8], atol=1e-6)
    with pytest.raises(AssertionError, match="se esperaba"):
        check_close([0.1, 0.2], [0.1, 0.3], atol=1e-6)


def test_check_close_shape_nan_and_none():
    with pytest.raises(AssertionError, match="forma"):
        check_close([[1.0, 2.0]], [1.0, 2.0])
    with pytest.raises(AssertionError, match="NaN"):
        check_close([float("nan")], [1.0])
    with pytest.raises(AssertionError, match="None"):
        check_close(None, 1.0)


def test_check_close_handles_torch_tensors():
    torch = pytest.importorskip("torch")
    check_close(torch.tensor([0.5, 0.25]), [0.5, 0.25])


def test_hint_is_shown():
    with pytest.raises(AssertionError, match="Pista: resta el máximo"):
        check_close(1.0, 2.0, hint="resta el máximo")


def test_check_equal_type_shape_raises():
    check_equal(np.int64(15), 15)
    with pytest.raises(AssertionError):
        check_equal(2, 15)
    with pytest.raises(AssertionError, match="tipo int"):
        check_type(15.0, int)
    with pytest.raises(AssertionError):
        check_shape(np.zeros((2, 3)), (3, 2))
    check_raises(lambda: int("x"), ValueError)
    with pytest.raises(AssertionError, match="no lanzó"):
        check_raises(lambda: None, ValueError)
    with pytest.raises(AssertionError, match="lanzó TypeError"):
        check_raises(lambda: len(3), ValueError)


def test_hidden_reveals_nothing_of_the_case():
    with pytest.raises(AssertionError) as info:
        with hidden("casos aleatorios"):
            check_close(0.123456, 0.654321)
    message = str(info.value)
    assert "prueba oculta" in message and "casos aleatorios" in message
    assert "0.123456" not in message and "0.654321" not in message


def test_reference_blocked_catches_every_binding_and_restores():
    original = metrics.nll
    alias = metrics.nll

    def wrapper(p):
        return metrics.nll(p)

    with reference_blocked(metrics.nll):
        with pytest.raises(AssertionError, match="referencia"):
            wrapper([0.5])
        assert metrics.nll is not original
    assert metrics.nll is original
    assert alias is original
    assert wrapper([0.5]) == pytest.approx(0.693147, abs=1e-6)


def test_checks_survive_a_rebound_numpy(monkeypatch):
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)  # what a student might try in a notebook
    monkeypatch.setattr(np, "asarray", lambda *a, **k: np.zeros(1))
    with pytest.raises(AssertionError):
        check_close([1.0], [2.0])
    assert checks.check_close is check_close


def test_show_caught_prints_how_a_mistake_is_caught(capsys):
    from llmlab.checks import show_caught

    show_caught("exp(L)", lambda: check_close(10.0, 2.154435, what="perplejidad"))
    show_caught("no es un error", lambda: check_close(1.0, 1.0))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "✘ exp(L)" and "se esperaba 2.154435" in out[1]
    assert out[2].startswith("?? no es un error")


# --- checks v2: calling student code, types, rendering --------------------------------------------------------

def test_checked_call_passes_copies_and_catches_in_place_modification():
    data = np.array([1.0, 2.0, 3.0])

    def in_place(x):
        x -= x.max()
        return x

    with pytest.raises(AssertionError, match="modifica su entrada `x`"):
        checks.checked_call(in_place, data)
    assert data.tolist() == [1.0, 2.0, 3.0]  # the caller's data was never touched

    def honest(x):
        return np.asarray(x) - np.max(x)

    assert checks.checked_call(honest, data).tolist() == [-2.0, -1.0, 0.0]


def test_checked_call_sees_lists_tensors_dicts_and_keyword_arguments():
    torch = pytest.importorskip("torch")

    def appends(xs):
        xs.append(0)
        return xs

    def scales_tensor(t, *, factor=2.0):
        t.mul_(factor)
        return t

    def edits_dict(config):
        config["d_model"] = 0
        return config

    with pytest.raises(AssertionError, match="`xs`"):
        checks.checked_call(appends, [1, 2])
    with pytest.raises(AssertionError, match="`t`"):
        checks.checked_call(scales_tensor, torch.ones(3), factor=3.0)
    with pytest.raises(AssertionError, match="`config`"):
        checks.checked_call(edits_dict, {"d_model": 8})
    nan_in = np.array([np.nan, 1.0])
    assert checks.checked_call(lambda x: x.sum(), nan_in) != 0  # NaN inputs left as they were are unchanged


def test_checked_call_turns_crashes_into_spanish_messages():
    def crashes(x):
        return x + "a"

    def unwritten(x):
        raise checks.EjercicioSinHacer()

    with pytest.raises(checks.FalloComprobacion, match="lanzó TypeError") as info:
        checks.checked_call(crashes, 1)
    assert info.value.reason == "tu función lanzó TypeError"
    with pytest.raises(checks.FalloComprobacion, match="sin hacer") as info:
        checks.checked_call(unwritten, 1)
    assert "NotImplementedError" not in str(info.value)  # the student sees what to do, not a Python class
    with pytest.raises(checks.FalloComprobacion, match="no es una función"):
        checks.checked_call(3.0, 1)


def test_hidden_tells_the_kind_of_problem_but_not_the_case():
    def in_place(x):
        x *= 2
        return x

    with pytest.raises(AssertionError) as info:
        with hidden("lotes grandes"):
            checks.checked_call(in_place, np.array([123.456]))
    message = str(info.value)
    assert "modifica su entrada" in message and "123.456" not in message


def test_type_checks_say_what_was_expected():
    torch = pytest.importorskip("torch")
    checks.check_array(np.zeros(3, dtype=np.float32), dtype="float", ndim=1)
    with pytest.raises(AssertionError, match="array de NumPy.*una lista"):
        checks.check_array([0.0, 1.0])
    with pytest.raises(AssertionError, match="decimales.*int64"):
        checks.check_array(np.arange(3), dtype="float")
    with pytest.raises(AssertionError, match="dimensión"):
        checks.check_array(np.zeros((2, 2)), ndim=1)
    checks.check_tensor(torch.zeros(2), dtype="float")
    with pytest.raises(AssertionError, match="tensor de PyTorch.*array de NumPy"):
        checks.check_tensor(np.zeros(2))
    with pytest.raises(AssertionError, match="enteros"):
        checks.check_tensor(torch.zeros(2), dtype="int")
    checks.check_tensor(torch.zeros(2, dtype=torch.bool), dtype="bool")
    checks.check_list([1, np.int64(2)], of=int, length=2)
    with pytest.raises(AssertionError, match="elemento 1"):
        checks.check_list([1, 2.5], of=int)
    with pytest.raises(AssertionError, match="elemento 0"):
        checks.check_list([True], of=int)
    with pytest.raises(AssertionError, match="lista de Python"):
        checks.check_list(np.array([1, 2]))
    checks.check_number(np.float32(0.5))
    checks.check_number(3, kind="float")
    with pytest.raises(AssertionError, match="entero"):
        checks.check_number(14.0, kind="int")
    with pytest.raises(AssertionError, match=r"\.item\(\)"):
        checks.check_number(np.array([0.5]))
    with pytest.raises(AssertionError, match="booleano"):
        checks.check_number(True)
    with pytest.raises(ValueError):
        checks.check_array(np.zeros(2), dtype="double")


def test_failed_checks_render_as_the_spanish_message_only(monkeypatch):
    monkeypatch.delenv("LLMLAB_TRACEBACK", raising=False)
    try:
        check_close(1.0, 2.0, what="la perplejidad", hint="exp de la pérdida")
    except checks.FalloComprobacion as exc:
        lines = exc._render_traceback_()
    assert "Comprobación no superada" in lines[0]
    assert any("la perplejidad" in line for line in lines) and lines[-1] == "Pista: exp de la pérdida"
    assert not any("checks.py" in line for line in lines)
    monkeypatch.setenv("LLMLAB_TRACEBACK", "full")
    try:
        check_close(1.0, 2.0)
    except checks.FalloComprobacion as exc:
        assert any("checks.py" in line for line in exc._render_traceback_())  # the instructor's view
    todo = checks.EjercicioSinHacer()
    assert isinstance(todo, NotImplementedError) and "ESCRIBE TU CÓDIGO AQUÍ" in str(todo)


def test_reference_blocked_reaches_aliases_the_names_cannot_see():
    import functools

    hidden_alias = functools.partial(metrics.nll)

    def default_arg(p, _ref=metrics.nll):
        return _ref(p)

    with reference_blocked(metrics.nll):
        for attempt in (lambda: hidden_alias([0.5]), lambda: default_arg([0.5]), lambda: [metrics.nll][0]([0.5])):
            with pytest.raises(checks.FalloComprobacion, match="propia implementación"):
                attempt()
    assert default_arg([0.5]) == pytest.approx(0.693147, abs=1e-6)  # restored
    assert hidden_alias([0.5]) == pytest.approx(0.693147, abs=1e-6)


def test_checked_call_lets_generators_and_modifiable_arguments_change():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    first = checks.checked_call(lambda n, generator=None: torch.rand(n, generator=generator), 2, generator=g)
    second = checks.checked_call(lambda n, generator=None: torch.rand(n, generator=generator), 2, generator=g)
    assert not torch.equal(first, second)  # the caller's generator advanced, as with a direct call
    rng = np.random.default_rng(0)
    checks.checked_call(lambda r: r.normal(), rng)

    def fill(cache, k):
        cache.append(k)
        return len(cache)

    cache = []
    assert checks.checked_call(fill, checks.modifiable(cache), 1.0) == 1
    assert cache == [1.0]  # the very object was filled
    with pytest.raises(AssertionError, match="`cache`"):
        checks.checked_call(fill, [], 1.0)  # without modifiable(...) it is an in-place change


# --- numbers in messages: as many digits as the dtype and the tolerance support ---------------------------

def _message(actual, expected, **kw):
    with pytest.raises(AssertionError) as info:
        check_close(actual, expected, **kw)
    return str(info.value)


def test_float32_values_print_at_six_digits_so_last_bit_rounding_never_shows():
    torch = pytest.importorskip("torch")
    # two float32 results of the same product on two CPUs (the case that broke lab 06 on another machine)
    here, there = np.float32(0.1997449845), np.float32(0.1997449547)
    expected = torch.tensor([0.25, 0.5])
    a = _message(torch.tensor([here, np.float32(0.3)]), expected, atol=1e-6)
    b = _message(torch.tensor([there, np.float32(0.3)]), expected, atol=1e-6)
    assert a == b and "0.199745" in a and "0.1997449" not in a


def test_float64_values_keep_the_digits_the_tolerance_needs():
    msg = _message(0.5008308497, 0.3191826969, atol=1e-3)
    assert "se esperaba 0.319 y se obtuvo 0.501" in msg  # 3 decimals resolve a tolerance of 1e-3
    msg = _message([1.0, 0.01999866669], [1.0, 0.0299955002], atol=1e-6)
    assert "se esperaba [1, 0.029996] y se obtuvo [1, 0.019999]" in msg  # 6 decimals for 1e-6
    assert "1.6e-28" in _message([1.603810891e-28], [0.000335], atol=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_values_that_fail_a_comparison_never_print_alike(seed):
    rng = np.random.default_rng(seed)
    for _ in range(2000):
        atol = 10.0 ** rng.integers(-9, 1)
        rtol = float(rng.choice([0.0, 1e-3, 1e-2]))
        y = float(rng.normal() * 10.0 ** rng.integers(-3, 4))
        x = y + float(rng.choice([-1, 1])) * (atol + rtol * abs(y)) * float(rng.uniform(1.0001, 3.0))
        msg = _message(x, y, atol=atol, rtol=rtol)
        shown = msg.split("se esperaba ", 1)[1].split(";", 1)[0]
        expected_text, actual_text = shown.split(" y se obtuvo ")
        assert expected_text != actual_text, (x, y, atol, rtol, msg)
