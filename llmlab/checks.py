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

What a test cell looks like (see CONTRIBUTING.md, "Authoring a lab"):

- ``checked_call(fn, *args)`` calls the student's function on *copies* of the inputs, fails if the function
  modified them in place, and turns any crash into a Spanish message;
- ``check_array`` / ``check_tensor`` / ``check_list`` / ``check_number`` check the type the statement promises;
- ``check_close`` / ``check_equal`` compare values with an explicit tolerance;
- a failed check raises ``FalloComprobacion``, which IPython shows as the Spanish message alone (no
  traceback into this file); ``EjercicioSinHacer`` is what an untouched exercise raises. Set the environment
  variable ``LLMLAB_TRACEBACK=full`` (the grader does) to get the full traceback as well.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import math
import numbers
import os
import sys
import traceback
from types import FunctionType
from typing import Any, Callable, Iterable

import numpy as _np

from . import mistakes as _mistakes
from .spanish import fmt_int

__all__ = [
    "FalloComprobacion",
    "EjercicioSinHacer",
    "checked_call",
    "modifiable",
    "check_array",
    "check_tensor",
    "check_list",
    "check_number",
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


def _render(title: str, exc: BaseException) -> list[str]:
    """What IPython shows for our exceptions: the Spanish message, or everything when asked for."""
    lines = [f"\x1b[1;31m{title}\x1b[0m", *str(exc).splitlines()]
    if os.environ.get("LLMLAB_TRACEBACK") == "full":  # the instructor's view (set by the grader)
        lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).splitlines() + lines
    return lines


class FalloComprobacion(AssertionError):
    """An AssertionError whose message is written for the student.

    ``reason`` is a short description that is safe to show even when the check is hidden (it says what
    kind of problem was found, never the hidden input).
    """

    def __init__(self, message: str = "", reason: str | None = None):
        super().__init__(message)
        self.reason = reason

    def _render_traceback_(self) -> list[str]:  # IPython protocol: replaces the traceback
        return _render("✘ Comprobación no superada", self)


class EjercicioSinHacer(NotImplementedError):
    """Raised by the code a student has not written yet (the stub of every exercise cell)."""

    def __init__(self, message: str | None = None):
        super().__init__(
            message
            or "Este ejercicio está sin hacer: escribe tu código donde pone «ESCRIBE TU CÓDIGO AQUÍ» "
            "(borra la línea `raise EjercicioSinHacer()`) y vuelve a ejecutar la celda."
        )

    def _render_traceback_(self) -> list[str]:
        return _render("✎ Ejercicio sin hacer", self)


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


# How many significant digits a value of each dtype can honestly show. A float32 result of a matrix product
# differs in its last bits from one CPU (or thread count, or BLAS code path) to another, so printing it at ten
# digits makes a stored message depend on the machine; six digits is what float32 guarantees (FLT_DIG).
# float64 prints 10 digits, or up to 15 (what it guarantees) when a tight tolerance needs them.
_DTYPE_DIGITS = {"float16": 3, "bfloat16": 2, "float32": 6, "float64": 15}
_DEFAULT_DIGITS = 10


def _dtype_digits(x: Any) -> int:
    """Significant digits worth printing for ``x``: by its dtype when it has one (Python floats: float64)."""
    name = str(getattr(x, "dtype", "float64")).replace("torch.", "")
    return _DTYPE_DIGITS.get(name, _DTYPE_DIGITS["float64"])


def _digits_for(value: float, tol: float | None, cap: int) -> int:
    """Significant digits for ``value``: enough to show a difference of ``tol`` (so two values that fail a
    comparison with that tolerance never print alike), never more than the dtype holds."""
    if not tol or not _isfinite(value) or value == 0.0:
        return min(cap, _DEFAULT_DIGITS)
    # decimals that resolve tol, turned into significant digits at this value's magnitude
    decimals = math.ceil(-math.log10(tol))
    digits = math.floor(math.log10(_builtin_abs(value))) + 1 + decimals
    return max(2, min(cap, digits))


def _fmt_number(v: Any, tol: float | None = None, cap: int = _DTYPE_DIGITS["float64"]) -> str:
    if isinstance(v, float):
        return f"{v:.{_digits_for(v, tol, cap)}g}"
    return repr(v)


def _short(x: Any, limit: int = 160, *, tol: float | None = None) -> str:
    """A compact, readable rendering of a value for messages.

    Floats show no more significant digits than their dtype holds (float32: 6) and than a comparison with
    tolerance ``tol`` needs (10 when there is none), so the text is the same on every machine.
    """
    cap = _dtype_digits(x)
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    if hasattr(x, "tolist"):
        x = x.tolist()

    def render(v: Any) -> str:
        if isinstance(v, (list, tuple)):
            inner = ", ".join(render(e) for e in v)
            return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
        if isinstance(v, float):
            return _fmt_number(v, tol, cap)
        if isinstance(v, int) and not isinstance(v, bool):
            return fmt_int(v)  # 1 048 576, grouped as every number the labs print
        return repr(v)

    text = render(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fail(what: str, message: str, hint: str | None, reason: str | None = None) -> None:
    text = f"{what}: {message}"
    if hint:
        text += f"\nPista: {hint}"
    raise FalloComprobacion(text + _mistakes.note(), reason)


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
            tol = atol + rtol * _builtin_abs(y)  # the failing element's tolerance sets the printed precision
            _fail(
                what,
                f"se esperaba {_short(expected, tol=tol)} y se obtuvo {_short(actual, tol=tol)}{where}; "
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


# --- Calling the student's function -----------------------------------------------------------------------

def _describe(value: Any) -> str:
    """A Spanish name for the type of a value, for messages ("un array de NumPy", "una lista", ...)."""
    if isinstance(value, _np.ndarray):
        return f"un array de NumPy de dtype {value.dtype}"
    if _is_tensor(value):
        return f"un tensor de PyTorch de dtype {str(value.dtype).replace('torch.', '')}"
    if isinstance(value, bool):
        return "un booleano (bool)"
    if isinstance(value, list):
        return "una lista"
    if isinstance(value, tuple):
        return "una tupla"
    if isinstance(value, dict):
        return "un diccionario"
    if value is None:
        return "None"
    return f"un valor de tipo {type(value).__name__}"


def _is_tensor(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach") and hasattr(value, "dtype")


class _Modifiable:
    """Marks an argument the student's function is *meant* to change (see ``modifiable``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def modifiable(value: Any) -> _Modifiable:
    """Hand ``value`` to ``checked_call`` as is: no copy, no in-place check.

    For arguments whose change is the point of the exercise, such as a KV cache that ``decode_step`` fills:
    ``checked_call(decode_step, x_t, modifiable(cache), W_Q, W_K, W_V)``.
    """
    return _Modifiable(value)


def _is_rng(value: Any) -> bool:
    """Random generators are consumed on purpose: drawing from one is not "modifying the input"."""
    import random

    if isinstance(value, (random.Random, _np.random.Generator, _np.random.RandomState)):
        return True
    return type(value).__module__.startswith("torch") and type(value).__name__ == "Generator"


def _copy(value: Any) -> Any:
    """An independent copy of an argument (arrays keep their dtype; objects that cannot be copied are shared)."""
    if isinstance(value, _Modifiable):
        return value.value
    if _is_rng(value):
        return value  # the caller's generator advances, exactly as when calling the function directly
    if isinstance(value, _np.ndarray):
        return value.copy()
    if _is_tensor(value):
        return value.detach().clone()
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - e.g. generators or handles: nothing sensible to copy
        return value


def _same(before: Any, after: Any) -> bool:
    """Whether an argument is unchanged: same type, shape, dtype and values (NaN equals NaN)."""
    if before is after:  # passed through on purpose (modifiable arguments, random generators)
        return True
    if isinstance(before, _np.ndarray):
        if not isinstance(after, _np.ndarray) or before.shape != after.shape or before.dtype != after.dtype:
            return False
        if before.dtype.kind in "fc":
            return bool(_np.array_equal(before, after, equal_nan=True))
        return bool(_np.array_equal(before, after))
    if _is_tensor(before):
        if not _is_tensor(after) or before.shape != after.shape or before.dtype != after.dtype:
            return False
        a, b = before.detach().cpu(), after.detach().cpu()
        if a.is_floating_point():
            return bool(((a == b) | (a.isnan() & b.isnan())).all())
        return bool((a == b).all())
    if isinstance(before, (list, tuple)):
        return (type(before) is type(after) and len(before) == len(after)
                and all(_same(x, y) for x, y in zip(before, after)))
    if isinstance(before, dict):
        return (isinstance(after, dict) and before.keys() == after.keys()
                and all(_same(before[k], after[k]) for k in before))
    if hasattr(before, "state_dict") and hasattr(after, "state_dict"):  # a torch module: its weights
        return _same(dict(before.state_dict()), dict(after.state_dict()))
    if isinstance(before, float) and before != before:
        return isinstance(after, float) and after != after
    try:
        return bool(before == after)
    except Exception:  # noqa: BLE001 - objects without a usable ==: nothing to compare
        return True


def _parameter_names(fn: Callable[..., Any], n: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"n.º {i + 1}" for i in range(n)]


def checked_call(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Call a student's function the way every check should, and return its result.

    - the function receives *copies* of the arguments, so example data shared between cells is never harmed;
    - if the function modifies an argument in place, the check fails and says which one;
    - if the function crashes (``TypeError``, ``IndexError`` …) or is still unwritten, the check fails with a
      Spanish message instead of a traceback. A ``FalloComprobacion`` raised inside passes through.

    Random generators (``torch.Generator``, ``np.random.Generator``, ``random.Random``) are passed as they are,
    and so is any argument wrapped in ``modifiable(...)``: those are meant to change.
    """
    name = getattr(fn, "__name__", "la función")
    _mistakes.remember(fn)  # a failing check names the common mistake fn behaves like (llmlab.mistakes)
    if not callable(fn):
        _fail(name, f"no es una función sino {_describe(fn)}", None, "no es una función")
    call_args = [_copy(a) for a in args]
    call_kwargs = {k: _copy(v) for k, v in kwargs.items()}
    # The snapshot of a modifiable argument is the object itself, which `_same` accepts as unchanged.
    before_args = [a.value if isinstance(a, _Modifiable) else _copy(c) for a, c in zip(args, call_args)]
    before_kwargs = {k: v.value if isinstance(v, _Modifiable) else _copy(call_kwargs[k]) for k, v in kwargs.items()}
    try:
        result = fn(*call_args, **call_kwargs)
    except FalloComprobacion:
        raise
    except NotImplementedError:
        _fail(name, "todavía está sin hacer: escribe tu código en su celda (donde pone «ESCRIBE TU CÓDIGO "
              "AQUÍ») y ejecútala antes de la comprobación", None, "ejercicio sin hacer")
    except Exception as exc:  # noqa: BLE001 - any crash of student code becomes a check failure
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        _fail(name, f"tu función lanzó {type(exc).__name__}" + (f": {detail}" if detail else "")
              + ". Revisa el enunciado: qué recibe (tipos y formas) y qué debe devolver.", None,
              f"tu función lanzó {type(exc).__name__}")
    names = _parameter_names(fn, len(args))
    changed = [f"`{names[i]}`" for i, (b, a) in enumerate(zip(before_args, call_args)) if not _same(b, a)]
    changed += [f"`{k}`" for k in call_kwargs if not _same(before_kwargs[k], call_kwargs[k])]
    if changed:
        _fail(name, f"tu función modifica su entrada {', '.join(changed)} en su sitio. Una función así "
              "estropea los datos de quien la llama: trabaja sobre una copia (por ejemplo "
              "`x = np.array(x, dtype=float)`) o crea arrays nuevos en vez de usar `+=`, `-=`, `/=` o "
              "asignaciones por índice sobre la entrada.", None, "tu función modifica su entrada")
    return result


# --- Types the statement promises ---------------------------------------------------------------------------

_DTYPE_KINDS = {"float": ("fc", "números decimales (float32 o float64)"), "int": ("iu", "enteros"),
                "bool": ("b", "booleanos")}


def _check_dtype_kind(kind: str, dtype_name: str, dtype: str | None, what: str, hint: str | None = None) -> None:
    if dtype is None:
        return
    if dtype not in _DTYPE_KINDS:
        raise ValueError(f"dtype must be one of {sorted(_DTYPE_KINDS)} or None, got {dtype!r}")
    kinds, label = _DTYPE_KINDS[dtype]
    if kind not in kinds:
        _fail(what, f"debe contener {label}, pero su dtype es {dtype_name}", hint, "dtype equivocado")


def _check_dims(value: Any, ndim: int | None, shape: Iterable[int] | None, what: str,
                hint: str | None = None) -> None:
    if ndim is not None and len(value.shape) != ndim:
        _fail(what, f"debe tener {ndim} dimensión(es), pero su forma es {tuple(value.shape)}", hint, "forma equivocada")
    if shape is not None:
        check_shape(value, shape, what=what, hint=hint)


def check_array(value: Any, *, what: str = "el resultado", dtype: str | None = None,
                ndim: int | None = None, shape: Iterable[int] | None = None, hint: str | None = None) -> None:
    """Assert a NumPy array (not a list, not a tensor), optionally of a dtype kind ("float", "int", "bool")."""
    if not isinstance(value, _np.ndarray):
        _fail(what, f"debe ser un array de NumPy (np.ndarray), pero es {_describe(value)}", hint,
              "no devuelve un array de NumPy")
    _check_dtype_kind(value.dtype.kind, str(value.dtype), dtype, what, hint)
    _check_dims(value, ndim, shape, what, hint)


def check_tensor(value: Any, *, what: str = "el resultado", dtype: str | None = None,
                 ndim: int | None = None, shape: Iterable[int] | None = None, hint: str | None = None) -> None:
    """Assert a torch tensor, optionally of a dtype kind ("float", "int", "bool")."""
    if not _is_tensor(value):
        _fail(what, f"debe ser un tensor de PyTorch (torch.Tensor), pero es {_describe(value)}", hint,
              "no devuelve un tensor de PyTorch")
    kind = "b" if value.dtype.is_floating_point is False and str(value.dtype) == "torch.bool" else (
        "f" if value.dtype.is_floating_point else ("c" if value.dtype.is_complex else "i"))
    _check_dtype_kind(kind, str(value.dtype).replace("torch.", ""), dtype, what, hint)
    _check_dims(value, ndim, shape, what, hint)


def check_list(value: Any, *, what: str = "el resultado", of: type | tuple[type, ...] | None = None,
               length: int | None = None) -> None:
    """Assert a Python list, optionally of a given length and element type (``of=int`` excludes bools)."""
    if not isinstance(value, list):
        _fail(what, f"debe ser una lista de Python, pero es {_describe(value)}", None, "no devuelve una lista")
    if length is not None and len(value) != length:
        _fail(what, f"debe tener {length} elementos, pero tiene {len(value)}", None, "longitud equivocada")
    if of is not None:
        for i, item in enumerate(value):
            if isinstance(item, bool) and bool not in (of if isinstance(of, tuple) else (of,)):
                bad = True
            elif of is int:
                bad = not isinstance(item, numbers.Integral)
            elif of is float:
                bad = not isinstance(item, numbers.Real)
            else:
                bad = not isinstance(item, of)
            if bad:
                names = of.__name__ if isinstance(of, type) else " o ".join(t.__name__ for t in of)
                _fail(what, f"el elemento {i} debe ser de tipo {names}, pero es {_describe(item)}", None,
                      "elementos de tipo equivocado")


def check_number(value: Any, *, what: str = "el resultado", kind: str = "float", hint: str | None = None) -> None:
    """Assert a single number: ``kind="float"`` accepts any real number (int, float, NumPy scalars),
    ``kind="int"`` only integers. Arrays, tensors, lists and bools are rejected."""
    if kind not in ("float", "int"):
        raise ValueError(f"kind must be 'float' or 'int', got {kind!r}")
    ok_type = numbers.Integral if kind == "int" else numbers.Real
    if isinstance(value, bool) or not isinstance(value, ok_type):
        expected = "un número entero (int)" if kind == "int" else "un número (float)"
        extra = " (usa float(...) o .item() para sacar el número del array)" if hasattr(value, "shape") else ""
        _fail(what, f"debe ser {expected}, pero es {_describe(value)}{extra}", hint, "tipo de número equivocado")


# --- For the grader -------------------------------------------------------------------------------------------

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
        reason = getattr(exc, "reason", None) if isinstance(exc, FalloComprobacion) else None
        why = f"motivo: {reason}" if reason else f"error de tipo {type(exc).__name__}"
        raise FalloComprobacion(
            f"Ha fallado una prueba oculta ({description}; {why}). "
            "Las pruebas ocultas usan entradas que no ves: casos aleatorios, bordes y errores "
            "típicos del capítulo. Repasa el enunciado y los casos límite." + _mistakes.note(),
            reason,
        ) from None


def _blocked(name: str) -> FalloComprobacion:
    return FalloComprobacion(
        f"tu solución llama a la implementación de referencia de llmlab ({name}). "
        "Este ejercicio pide tu propia implementación: escribe tú el cálculo.",
        "llama a la implementación de referencia de llmlab",
    )


def _blocking_stub(name: str) -> Callable[..., Any]:
    def stub(*args: Any, **kwargs: Any) -> Any:
        raise _blocked(name)

    stub.__name__ = f"blocked_{name}"
    return stub


def _blocking_code(name: str):
    """The code object of a stub that fails; swapped into a reference function while it is blocked.

    It finds ``_blocked`` through an import, because it runs with the reference module's globals.
    """
    source = (f"def stub(*args, **kwargs):\n"
              f"    raise __import__('llmlab.checks', fromlist=['_blocked'])._blocked({name!r})\n")
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<blocked {name}>", "exec"), namespace)  # noqa: S102 - our own constant source
    return namespace["stub"].__code__


@contextlib.contextmanager
def reference_blocked(*functions: Callable[..., Any]):
    """Within the block, every call to one of ``functions`` fails with a Spanish message.

    Two layers, both undone on exit: (1) every name bound to a blocked object in any loaded module (the
    notebook's namespace, ``__main__``, included) is rebound to a failing stub; (2) a plain Python function
    without closure variables also gets its ``__code__`` replaced, so aliases the first layer cannot see
    (default arguments, closures, containers, ``functools.partial``) fail as well.
    """
    targets = {id(f): f for f in functions}
    stubs = {key: _blocking_stub(getattr(f, "__qualname__", repr(f))) for key, f in targets.items()}
    patched: list[tuple[dict, str, Any]] = []
    swapped: list[tuple[FunctionType, Any]] = []
    try:
        for f in targets.values():
            if isinstance(f, FunctionType) and not f.__code__.co_freevars:
                swapped.append((f, f.__code__))
                f.__code__ = _blocking_code(f.__qualname__)
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
        for f, code in reversed(swapped):
            f.__code__ = code
