"""Comprobaciones para los cuadernos del curso (mensajes en español).

The labs' test cells use these helpers so that a student who gets something wrong reads, in
Spanish, *what* was expected and *what* their code produced. Two of them exist for the grader:

- ``hidden(description)`` wraps the hidden tests: any failure inside becomes a generic message, so
  the feedback a student receives never reveals the hidden cases.
- ``reference_blocked(*functions)`` temporarily replaces llmlab reference implementations with a
  stub that fails, so a solution that merely calls the library's version of the exercise earns
  nothing.

Comparisons are done on plain Python floats, so they keep working if a student rebinds
``numpy.allclose`` (the grader also flags such code for review).
"""

from __future__ import annotations

import contextlib
import math
import sys
from typing import Any, Callable, Iterable

import numpy as _np

__all__ = [
    "check_close",
    "check_equal",
    "check_true",
    "check_shape",
    "check_raises",
    "check_type",
    "hidden",
    "reference_blocked",
    "ok",
    "show_caught",
]

# Keep private handles so that rebinding numpy attributes in a notebook does not change the checks.
_asarray = _np.asarray
_isfinite = math.isfinite
_builtin_abs = abs


class FalloComprobacion(AssertionError):
    """An AssertionError whose message is written for the student."""


def _to_floats(x: Any) -> tuple[tuple[int, ...], list[float]]:
    """Convert numbers, lists, NumPy arrays or torch tensors to (shape, flat list of floats)."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch tensor without importing torch
        x = x.detach().cpu().numpy()
    try:
        arr = _asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise FalloComprobacion(
            f"no se puede interpretar {x!r} como número o lista de números ({exc})"
        ) from None
    return tuple(arr.shape), [float(v) for v in arr.reshape(-1).tolist()]


def _fmt_number(v: float) -> str:
    return f"{v:.10g}" if isinstance(v, float) else repr(v)


def _short(x: Any, limit: int = 160) -> str:
    """A compact, readable rendering of a value for messages (floats to 10 significant digits)."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    if hasattr(x, "tolist"):
        x = x.tolist()

    def render(v: Any) -> str:
        if isinstance(v, (list, tuple)):
            inner = ", ".join(render(e) for e in v)
            return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
        return _fmt_number(v) if isinstance(v, float) else repr(v)

    text = render(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fail(what: str, message: str, hint: str | None) -> None:
    text = f"{what}: {message}"
    if hint:
        text += f"\nPista: {hint}"
    raise FalloComprobacion(text)


def ok(message: str) -> None:
    """Print a success line (deterministic text, so stored outputs stay comparable)."""
    print(f"✔ {message}")


def show_caught(description: str, check: Callable[[], Any]) -> None:
    """Run a check that MUST fail (a common mistake, on purpose) and print how it is caught.

    Used by the "Errores frecuentes" sections: each mistake runs, and the same checks that grade the
    exercises show the first line of the message they fail with.
    """
    try:
        check()
    except AssertionError as error:
        print(f"✘ {description}\n    {str(error).splitlines()[0]}")
    else:
        print(f"?? {description}: la comprobación no lo ha detectado")


def check_close(
    actual: Any,
    expected: Any,
    *,
    atol: float = 1e-6,
    rtol: float = 0.0,
    what: str = "el resultado",
    hint: str | None = None,
) -> None:
    """Assert ``|actual - expected| <= atol + rtol * |expected|`` element by element.

    Shapes must match exactly (a (3,) vector is not a (1, 3) matrix). NaN never matches.
    """
    if actual is None:
        _fail(what, "tu función devolvió None. ¿Te falta el return?", hint)
    a_shape, a = _to_floats(actual)
    e_shape, e = _to_floats(expected)
    if a_shape != e_shape:
        _fail(what, f"la forma es {a_shape} y se esperaba {e_shape}", hint)
    for i, (x, y) in enumerate(zip(a, e)):
        if x != x:  # NaN
            _fail(what, f"hay un NaN en la posición {i} (suele venir de exp de números enormes sin restar el "
                  "máximo, o de una fila entera a -inf)", hint)
        if x == y:  # also covers matching infinities
            continue
        if not (_isfinite(x) and _isfinite(y)) or _builtin_abs(x - y) > atol + rtol * _builtin_abs(y):
            where = "" if a_shape == () else f" (posición {i} de {len(a)})"
            _fail(
                what,
                f"se esperaba {_short(expected)} y se obtuvo {_short(actual)}{where}; "
                f"tolerancia {atol:g}",
                hint,
            )


def check_equal(actual: Any, expected: Any, *, what: str = "el resultado", hint: str | None = None) -> None:
    """Assert exact equality (integers, strings, lists of them)."""
    if hasattr(actual, "tolist"):
        actual = actual.tolist()
    if hasattr(expected, "tolist"):
        expected = expected.tolist()
    if actual != expected:
        _fail(what, f"se esperaba {_short(expected)} y se obtuvo {_short(actual)}", hint)


def check_true(condition: Any, message: str, *, hint: str | None = None) -> None:
    """Assert a condition, with a message that explains what should have held."""
    if not bool(condition):
        _fail("Comprobación", message, hint)


def check_type(value: Any, types: type | tuple[type, ...], *, what: str = "el resultado") -> None:
    """Assert ``isinstance(value, types)`` with a readable message."""
    if not isinstance(value, types):
        names = types.__name__ if isinstance(types, type) else " o ".join(t.__name__ for t in types)
        _fail(what, f"debe ser de tipo {names}, pero es {type(value).__name__}", None)


def check_shape(value: Any, shape: Iterable[int], *, what: str = "el resultado", hint: str | None = None) -> None:
    """Assert the exact shape of an array or tensor."""
    expected = tuple(int(s) for s in shape)
    got = tuple(getattr(value, "shape", _asarray(value).shape))
    if got != expected:
        _fail(what, f"la forma es {got} y se esperaba {expected}", hint)


def check_raises(
    function: Callable[[], Any],
    exceptions: type[BaseException] | tuple[type[BaseException], ...] = ValueError,
    *,
    what: str = "la función",
    hint: str | None = None,
) -> None:
    """Assert that calling ``function()`` raises one of ``exceptions``."""
    names = (
        exceptions.__name__
        if isinstance(exceptions, type)
        else " o ".join(e.__name__ for e in exceptions)
    )
    try:
        function()
    except exceptions:
        return
    except Exception as exc:  # the wrong kind of error
        _fail(what, f"debía lanzar {names}, pero lanzó {type(exc).__name__}: {exc}", hint)
    _fail(what, f"debía lanzar {names} con esta entrada inválida, y no lanzó nada", hint)


@contextlib.contextmanager
def hidden(description: str):
    """Run hidden tests; a failure is reported without revealing the hidden case.

    >>> with hidden("casos aleatorios frente a la referencia"):
    ...     pass
    """
    try:
        yield
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure of a hidden test counts
        kind = type(exc).__name__
        raise FalloComprobacion(
            f"Ha fallado una prueba oculta ({description}; error de tipo {kind}). "
            "Las pruebas ocultas usan entradas que no ves: casos aleatorios, bordes y errores "
            "típicos del capítulo. Repasa el enunciado y los casos límite."
        ) from None


def _blocking_stub(name: str) -> Callable[..., Any]:
    def stub(*args: Any, **kwargs: Any) -> Any:
        raise FalloComprobacion(
            f"tu solución llama a la implementación de referencia de llmlab ({name}). "
            "En este ejercicio tienes que escribir tú el cálculo."
        )

    stub.__name__ = f"blocked_{name}"
    return stub


@contextlib.contextmanager
def reference_blocked(*functions: Callable[..., Any]):
    """Within the block, every name bound to one of ``functions`` fails when called.

    Rebinds the function wherever it is reachable by name: in every loaded module (which
    includes the notebook's namespace, ``__main__``) and in class dictionaries of those modules
    is not attempted. Everything is restored on exit.
    """
    targets = {id(f): f for f in functions}
    stubs = {key: _blocking_stub(getattr(f, "__qualname__", repr(f))) for key, f in targets.items()}
    patched: list[tuple[dict, str, Any]] = []
    try:
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for name, value in list(namespace.items()):
                if id(value) in targets and value is targets[id(value)]:
                    patched.append((namespace, name, value))
                    namespace[name] = stubs[id(value)]
        yield
    finally:
        for namespace, name, value in reversed(patched):
            namespace[name] = value
