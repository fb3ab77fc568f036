"""pyfunc_debug.jax on real JAX (SPEC §10): pure_callback, io_callback and debug.callback
under jit emit events named after the callback, pause at breakpoints, step into pdb,
abort. Skipped without the jax extra."""
from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from jax.experimental import io_callback  # noqa: E402

from pyfunc_debug import events as ev  # noqa: E402
from pyfunc_debug import jax as pj  # noqa: E402
from pyfunc_debug.debug import Debugger, PdbRunner  # noqa: E402
from programs import odd_values  # noqa: E402

HERE = os.path.abspath(__file__)


def host_sin(x):
    return np.sin(x)


def show(x):
    pass


def log_io(x):
    return np.asarray(x + 1, dtype=np.float32)


def program(x):
    y = jax.pure_callback(host_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)  # PURE
    jax.debug.callback(show, y)
    jax.debug.print("y={y}", y=y)       # JAX's own callback: hidden
    z = io_callback(log_io, jax.ShapeDtypeStruct(x.shape, jnp.float32), y)
    return z * 2


@pytest.fixture
def inst():
    with pj.instrument() as i:
        yield i


@pytest.fixture
def events():
    seen = []
    with ev.subscribe(seen.append, capture="summary"):
        yield seen


def _line(text):
    with open(HERE) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_jit_callbacks_named_after_the_function(inst, events, capsys):
    f = jax.jit(program)
    f(jnp.arange(3.0))                  # traced before? no matter: instrument clears caches
    out = np.asarray(f(jnp.arange(3.0)))
    np.testing.assert_allclose(out, (np.sin(np.arange(3.0)) + 1) * 2, rtol=1e-6)
    ends = [e for e in events if type(e) is ev.OpEnd]
    assert [(e.op, e.op_type) for e in ends][:3] == [
        ("host_sin", "pure_callback"), ("show", "debug_callback"), ("log_io", "io_callback")]
    starts = [e for e in events if type(e) is ev.OpStart]
    assert starts[0].source == f"{HERE}:{_line('# PURE')}"
    assert ends[0].outputs[0].max == pytest.approx(np.sin(2.0))
    assert [e.kind for e in events if type(e) is ev.RunStart] == ["jax"]


def test_jitted_before_instrument_is_wrapped_after(events):
    f = jax.jit(program)
    f(jnp.arange(2.0))
    with pj.instrument():
        f(jnp.arange(2.0))
    assert {e.op for e in events if type(e) is ev.OpEnd} == {"host_sin", "show", "log_io"}


def test_breakpoint_step_into_and_abort(inst, events):
    out = io.StringIO()
    runner = PdbRunner(stdin=io.StringIO("p x\nc\n"), stdout=out)
    answers = iter(["step_into", "abort"])
    seen = []

    def frontend(pause):
        seen.append((pause.op_name, pause.op_type, pause.inputs[0].tolist()))
        return next(answers)

    dbg = Debugger(on_pause=frontend, pdb_runner=runner)
    dbg.break_on(op="host_*")
    f = jax.jit(program)
    with dbg:
        f(jnp.arange(2.0))
        with pytest.raises(Exception) as info:
            jax.block_until_ready(f(jnp.arange(2.0)))
    assert seen == [("host_sin", "pure_callback", [0.0, 1.0])] * 2
    assert "return np.sin(x)" in out.getvalue() and "Array([0., 1.]" in out.getvalue()
    assert "run aborted from the debugger at op 'host_sin'" in str(info.value)
    assert inst.run.aborted == "host_sin"


def host_inverse(x):
    with np.errstate(divide="ignore"):
        return (np.float32(1) / x).astype(np.float32)


def test_pure_callback_making_inf_is_a_non_finite_diagnostic_naming_its_call(inst, events):
    @jax.jit
    def f(x):
        return jax.pure_callback(host_inverse, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    for start in (1.0, -1.0, 4.0):          # the second call meets 0: Inf from finite inputs
        jax.block_until_ready(f(jnp.arange(start, start + 3.0, dtype=jnp.float32)))
    found = [e for e in events if type(e) is ev.Warning]
    assert [(w.kind, w.op, w.op_type) for w in found] == [
        ("non_finite", "host_inverse", "pure_callback")]
    assert "made 1 Inf in output 0 from finite inputs" in found[0].message
    assert "in its call with in 0 = [-1, 0, 1] (float32)" in found[0].message
    assert found[0].hint


def test_internal_covers_debug_print_eager_and_jitted(events, capsys):
    """jax.debug.print binds its own primitive (JAX 0.10): shown with internal=True only,
    at the user's line, and the print still prints."""
    def f(x):
        jax.debug.print("v={v}", v=x)   # PRINT
        return x + 1

    with pj.instrument():
        jax.jit(f)(jnp.arange(2.0))
        assert [e for e in events if type(e) is ev.OpStart] == []
        pj.instrument(internal=True)    # compiled while hidden: lowered again, wrapped
        f(jnp.arange(2.0))
        jax.block_until_ready(jax.jit(f)(jnp.arange(2.0)))
    starts = [e for e in events if type(e) is ev.OpStart]
    assert [(e.op, e.op_type, e.source) for e in starts] == [
        ("jax.debug.print", "debug_print", f"{HERE}:{_line('# PRINT')}")] * 2
    assert capsys.readouterr().out == "v=[0. 1.]\n" * 3


def _outcome(call):
    try:
        return "ok", np.asarray(call()).tolist()
    except Exception as exc:  # noqa: BLE001 - the outcome is what we compare
        return type(exc).__name__, str(exc).splitlines()[0]


@pytest.mark.parametrize("api", ["pure_callback", "debug.callback"])
def test_a_non_callable_callback_meets_jaxs_own_outcome(api, events):
    def call():
        x = jnp.arange(2.0)
        if api == "debug.callback":
            return jax.debug.callback("not a function", x)
        return jax.jit(lambda v: jax.pure_callback(
            "not a function", jax.ShapeDtypeStruct(v.shape, v.dtype), v))(x)

    plain = _outcome(call)
    assert plain[0] != "ok"
    with pj.instrument():
        assert _outcome(call) == plain
    assert [e for e in events if type(e) is ev.OpStart] == []


ODD_VALUES = {**odd_values(),   # plus what JAX's 32-bit default supports
              "uint32": np.array([0, 2**32 - 1], np.uint32),
              "scalar": np.float32(3.5)}


CALLS = []


def identity(x):
    CALLS.append(x.shape)
    return x


@pytest.mark.parametrize("name", list(ODD_VALUES))
def test_no_warning_of_ours_reaches_the_program(name):
    """Recorded, paused and continued with warnings as errors (JAX's CI runs so): the
    callback returns its value and the program sees no warning."""
    import pyfunc_debug as pfd
    value = ODD_VALUES[name]
    CALLS.clear()
    f = jax.jit(lambda v: jax.pure_callback(identity, jax.ShapeDtypeStruct(v.shape, v.dtype), v))
    dbg = Debugger(on_pause=lambda pause: "continue")
    dbg.break_on(op="*")
    with pj.instrument(), pfd.trace(capture="summary") as tr, dbg:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = np.asarray(f(jnp.asarray(value)))
    np.testing.assert_array_equal(out, value)
    ends = [e for e in tr.events if type(e) is ev.OpEnd]
    assert [e.op for e in ends] == ["identity"] * len(CALLS)  # none for an empty array
    assert [e.outputs[0].shape for e in ends] == CALLS


@pytest.mark.parametrize("traced", [False, True])
def test_a_failing_callbacks_logged_traceback_is_jaxs_own(traced, caplog):
    """JAX logs a failing callback's traceback ("jax.pure_callback failed"): instrumented,
    traced or not, it holds JAX's frames and the user's, as without us (3.11+: see
    ``external_calls._OUR_FILES``)."""
    def bad(x):
        raise KeyError("missing")   # the user's frame

    def f(x):
        return jax.pure_callback(bad, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    def logged() -> str:
        caplog.clear()
        with pytest.raises(Exception):
            jax.jit(f)(jnp.ones(3)).block_until_ready()
        (record,) = [r for r in caplog.records if r.exc_info]
        import traceback
        return "".join(traceback.format_exception(*record.exc_info))

    plain = logged()
    with pj.instrument(), (ev.subscribe(lambda e: None, capture="summary") if traced
                           else contextlib.nullcontext()):
        ours = logged()
    assert 'raise KeyError("missing")' in ours
    frames = re.findall(r'File "([^"]+)"', ours)
    if sys.version_info >= (3, 11):
        assert frames == re.findall(r'File "([^"]+)"', plain)
    assert not [f for f in frames if "pyfunc_debug" in f and not f.endswith("jax.py")]


def test_under_the_trace_command_jaxs_error_quotes_the_programs_stack_only(tmp_path):
    """A failing callback's ``JaxRuntimeError`` quotes the stack it ran in (every live
    frame, walked by JAX's C++): under ``pyfunc-debug trace --jax`` that named the
    command's frames, runpy's and our adapter's. The program's report reads as the
    program run by python alone."""
    from programs import quoted_alone_and_traced
    plain, ours = quoted_alone_and_traced(
        tmp_path,
        "import jax, jax.numpy as jnp\n"
        "def bad(x):\n"
        "    return {0: 1.0}[int(x[0])] + x\n"
        "@jax.jit\n"
        "def f(x):\n"
        "    return jax.pure_callback(bad, jax.ShapeDtypeStruct((3,), jnp.float32), x)\n"
        "f(jnp.arange(3, dtype=jnp.float32) + 2)\n",
        "--jax", "CpuCallback error calling callback", "KeyError: 2")
    assert 'prog.py", line 7, in <module>' in plain and 'prog.py", line 3, in bad' in plain
    assert ours == plain
