"""Everything the UI shows is true (SPEC §4b), and the root cause is on screen with no key.

Values and durations belong to the op's own call (a framework op runs many calls
in one run); a pause before a call shows no duration and time in pdb is not an
op's; the status bar's state and counts follow the run; a failed run ends with
the user's exception line; an op with no values says why; the summary columns
that hold the answer stay whole; when a run ends the op with the most important
diagnostic is selected and its text and fix are at the top of the inspector.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import time
import warnings

import numpy as np
import pytest
from textual.app import App
from textual.geometry import Region

import pyfunc_debug as pfd
from pyfunc_debug.debug.external import ExternalOp
from pyfunc_debug.errors import CancelledError, OpError
from pyfunc_debug.external_calls import CallbackRun
from pyfunc_debug.tui.app import PfdApp
from pyfunc_debug.tui.replay import ReplayApp
from pyfunc_debug.tui.values import values_for
from pyfunc_debug.tui.widgets.event_log import EventLog
from pyfunc_debug.tui.widgets.inspector import Inspector
from pyfunc_debug.tui.widgets.op_list import OpList

from test_tui_pilot import _finished, _paused_at, _running, _status, _stop, _text, _until


def _app(target, pdb_input: str = "c\n", size=None, **kw) -> PfdApp:
    kw.setdefault("break_on", ())
    kw.setdefault("show_timings", True)
    return PfdApp(target, suspend=contextlib.nullcontext,
                  pdb_io=(io.StringIO(pdb_input), io.StringIO()), **kw)


def _shown(app, selector: str) -> list[str]:
    """The lines a widget puts on screen, at the size it has."""
    widget = app.query_one(selector)
    region = Region(0, 0, widget.size.width, widget.size.height)
    return [strip.text.rstrip() for strip in widget.render_lines(region)]


class _InspectorApp(App):
    """An inspector showing op ``name`` from what ``app`` (now gone) kept of its run."""

    def __init__(self, app, name: str):
        super().__init__()
        self.source, self.op_name = app, name

    def compose(self):
        yield Inspector()

    def on_mount(self) -> None:
        model = self.source.model
        values, from_run = values_for(self.source.bridge, model, self.op_name, None)
        self.query_one(Inspector).show(model.rows[self.op_name], values, None, from_run=from_run)


def _grid_first_column(app) -> list[str]:
    grid = app.query_one("#insp-grid")
    return [row[1] for row in grid.rows]


# -- a framework's callback op: many calls in one run, as TF's Dataset.map makes -------------

def standardize(row):
    return ((row - row.mean()) / (row.std() + 1)).astype(np.float32)


def callbacks(n: int = 4):
    """``n`` calls of ``features/standardize`` on rows 0, i, 2i, 3i, in one run."""
    def target():
        run = CallbackRun("tensorflow")
        op = ExternalOp("features/standardize", "PyFunc", "pipeline.py:7")
        try:
            for i in range(n):
                run.call(op, standardize, [np.arange(4, dtype=np.float32) * i])
        except CancelledError:
            return 1
        finally:
            run.end()
        return 0
    return target


@pytest.mark.asyncio
async def test_an_aborted_call_shows_its_own_inputs_not_another_calls():
    app = _app(callbacks(), pdb_input="q\n", breaks=("features/*",))
    async with _running(app) as pilot:
        for _ in range(2):                     # calls 0 and 1 run
            await _paused_at(pilot, "features/standardize")
            await pilot.press("c")
        await _until(pilot, lambda: app.model.rows["features/standardize"].calls == 2
                     and app.pause is not None, "the pause before call 2")
        await pilot.press("s")                 # pdb: q aborts call 2 (rows 0, 2, 4, 6)
        await _until(pilot, lambda: not app.is_running, "the app to leave (one q quits)")
    assert app.target_done
    row = app.model.rows["features/standardize"]
    assert row.status == "aborted"
    assert [s.max for s in row.inputs] == [6.0] and row.outputs == ()
    # the op as the inspector shows it from what the app kept (it left at once)
    shown = _InspectorApp(app, "features/standardize")
    async with shown.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.1)
        assert _grid_first_column(shown) == ["0", "2", "4", "6"]
        caption = _text(shown, "#insp-caption")
        assert "input 0" in caption and "from" not in caption
        assert "ran under pdb: no duration" in _text(shown, "#insp-header")
        # which call the table shows: the latest of three (two ran, the third aborted)
        assert "· latest of 3 calls" in _text(shown, "#insp-header").splitlines()[0]


@pytest.mark.asyncio
async def test_a_pause_before_a_call_shows_no_duration_and_pdb_time_is_not_one():
    app = _app(callbacks(2), pdb_input="!import time; time.sleep(0.3)\nc\n",
               breaks=("features/*",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "features/standardize")
        await pilot.press("c")                  # call 0 runs: it has a duration
        await _until(pilot, lambda: app.model.rows["features/standardize"].calls == 1
                     and app.pause is not None, "the pause before call 1")
        header = _text(app, "#insp-header").splitlines()[0]
        assert header == "features/standardize  PyFunc  PAUSED", header
        await pilot.press("s")                  # 0.3 s in pdb: not the op's duration
        await _finished(pilot)
        app.select_op("features/standardize")
        await pilot.pause(0.1)
        assert "ran under pdb: no duration" in _text(app, "#insp-header")
        done = [line for line in app.query_one(EventLog).lines if "done  features" in line]
        assert done[-1].endswith("[ran under pdb: no duration] float32[4] min=-0.7454 "
                                 "max=0.7454 mean=0") or "[ran under pdb" in done[-1], done
        assert "ms" not in done[-1].split("PyFunc)")[1].split("float32")[0]


def scaled_in_a_py_function(x):
    return pfd.multiply(pfd.tanh(x), 2.0)


def graph_with_a_py_function():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        y = pfd.py_function(scaled_in_a_py_function, [x], pfd.float32, name="scale")
        pfd.identity(y, name="out")
    with pfd.Session(graph=g) as sess:
        sess.run("out:0", {x: np.ones(3, np.float32)})
    return 0


@pytest.mark.asyncio
async def test_time_paused_inside_an_op_is_not_its_duration():
    app = _app(graph_with_a_py_function, breaks=("scale",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "scale")
        await pilot.press("n")                  # into its eager ops: pauses inside it
        await _until(pilot, lambda: app.pause is not None and app.pause.parent == "scale",
                     "a pause inside scale")
        await pilot.pause(0.5)
        await pilot.press("c")
        await _finished(pilot)
        row = app.model.rows["scale"]
        assert row.waited_ns >= 400_000_000                 # the half second paused …
        assert row.duration_ns < 300_000_000                # … is not in its duration
        app.select_op("scale")
        await pilot.pause(0.05)
        assert "paused)" in _text(app, "#insp-header")


def test_two_pauses_in_a_row_both_count_as_waiting():
    """A pause after one op, then one before the next with no event between them: the
    first pause's time counted as the run's own ("ok 14.2s (+5.0s paused)")."""
    from pyfunc_debug.tui.timing import Waits
    s = 1_000_000_000
    waits = Waits()
    waits.paused(7, 0)           # after op A
    waits.paused(7, 15 * s)      # before op B, 15 s later (the user pressed c)
    waits.moved_on(7, 20 * s)    # B starts, 5 s later
    assert waits.within(0, 21 * s) == (20 * s, False)
    assert waits.within(0, 21 * s, thread=7) == (20 * s, False)


# -- the status bar follows the run ---------------------------------------------------------

def gated_chain(gate):
    def target():
        def wait(v):
            gate.wait(10)
            return v
        g = pfd.Graph()
        with g.as_default():
            x = pfd.compat.v1.placeholder(pfd.float32, name="x")
            a = pfd.numpy_function(lambda v: v * 2, [x], pfd.float32, name="first")
            b = pfd.numpy_function(wait, [a], pfd.float32, name="slow")
            pfd.identity(b, name="last")
        with pfd.Session(graph=g) as sess:
            sess.run("last:0", {x: np.ones(2, np.float32)})
        return 0
    return target


@pytest.mark.asyncio
async def test_the_status_bar_follows_the_run_after_c_and_counts_what_ran():
    import threading
    gate = threading.Event()
    app = _app(gated_chain(gate))
    app.bridge.link.break_on(op="first", when="outputs[0].max() > 0")   # a pause after it
    try:
        async with _running(app) as pilot:
            await _paused_at(pilot, "first", when="after")
            assert "ops 1/3" in _status(app), _status(app)    # it has run
            await pilot.press("c")
            await _until(pilot, lambda: app.model.rows["slow"].status == "running", "slow")
            await pilot.pause(0.2)
            assert "RUNNING" in _status(app) and "PAUSED" not in _status(app), _status(app)
            gate.set()
            await _finished(pilot)
            assert "FINISHED" in _status(app) and "ops 3/3" in _status(app)
    finally:
        gate.set()


@pytest.mark.asyncio
async def test_a_constant_folded_on_the_first_run_is_counted_apart():
    from pyfunc_debug.tui.launch import demo_target
    app = _app(demo_target, breaks=("normalize",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "normalize")     # run 1: factor (folded now) and validate ran
        assert any("start session: 9 ops" in line for line in app.query_one(EventLog).lines)
        assert "ops 1/9 +1 folded" in _status(app), _status(app)


# -- the user's exception line ---------------------------------------------------------------

def lookup_fails_on_step_2():
    schedule = {0: 0.1, 1: 0.05}
    g = pfd.Graph()
    with g.as_default():
        step = pfd.compat.v1.placeholder(pfd.int64, name="step")
        lr = pfd.numpy_function(lambda s: np.float32(schedule[int(s)]), [step], pfd.float32,
                                name="lr")
    with pfd.Session(graph=g) as sess:
        for s in range(3):
            sess.run(lr, {step: s})
    return 0


@pytest.mark.asyncio
async def test_a_failed_run_ends_with_the_users_exception_line():
    app = _app(lookup_fails_on_step_2)
    async with _running(app) as pilot:
        await _finished(pilot)
        end = [line for line in app.query_one(EventLog).lines if "end   FAILED" in line]
        assert len(end) == 1 and end[0].endswith("KeyError: 2 (op 'lr')"), end
        assert "UnknownError" not in end[0]
        assert "KeyError: 2" in _status(app)


# -- an op with no values says why ----------------------------------------------------------

def folded_twice():
    g = pfd.Graph()
    with g.as_default():
        c = pfd.constant(np.ones(3, np.float32), name="c")
        noisy = pfd.compat.v1.py_func(lambda v: v + np.float32(np.random.rand()), [c],
                                      pfd.float32, stateful=False, name="augment")
        pfd.identity(noisy, name="out")
    with pfd.Session(graph=g) as sess:
        for _ in range(2):
            sess.run("out:0")
    return 0


@pytest.mark.asyncio
async def test_view_at_the_start_shows_nothing_of_an_op(tmp_path):
    path = tmp_path / "t.jsonl"
    with pfd.trace(str(path), capture="full"):
        graph_with_a_py_function()
    app = ReplayApp(str(path), show_timings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.05)
        assert _text(app, "#insp-summaries").strip() or app.query_one(OpList).selected
        await pilot.press("home")
        await pilot.pause(0.05)
        assert _text(app, "#insp-header") == "Select an op."
        assert all(not line.strip() for line in _shown(app, "#insp-summaries"))
        assert _text(app, "#insp-caption") == "" and app.query_one("#insp-grid").rows == []


# -- the columns that hold the answer ---------------------------------------------------------

def nan_column():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, shape=[16, 1], name="a_rather_long_input")
        with np.errstate(invalid="ignore"):
            pfd.numpy_function(lambda v: np.log(v - 8).astype(np.float32), [x], pfd.float32,
                               name="features/log_of_the_centred_values")
    with pfd.Session(graph=g) as sess:
        with np.errstate(invalid="ignore", divide="ignore"):
            sess.run("features/log_of_the_centred_values:0",
                     {x: np.arange(16, dtype=np.float32).reshape(16, 1)})
    return 0


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_shape_nan_and_inf_columns_stay_whole(size):
    app = _app(nan_column, show_timings=False)
    async with app.run_test(size=size) as pilot:
        try:
            await _finished(pilot)
            app.select_op("features/log_of_the_centred_values")
            await pilot.pause(0.2)
            lines = [line for line in _shown(app, "#insp-summaries") if line.strip()]
            header, rows = lines[0].split(), lines[1:]
            assert header[:1] == ["shape"] and header[-2:] == ["nan", "inf"], lines
            out = next(line for line in rows if line.startswith("out 0"))
            assert "(16, 1)" in out and out.split()[-2:] == ["8", "1"], lines  # 8 NaN, 1 -inf
        finally:
            app.stop_ticking()
        await _stop(app)


# -- the root cause with zero keys ----------------------------------------------------------------

def blocked_gradient():
    g = pfd.Graph()
    with g.as_default():
        w = pfd.compat.v1.placeholder(pfd.float32, shape=[3], name="w")
        h = pfd.multiply(w, 2.0, name="h")
        clipped = pfd.numpy_function(lambda v: np.clip(v, -1, 1), [h], pfd.float32, name="clip")
        loss = pfd.reduce_sum(pfd.square(clipped, name="sq"), name="loss")
        with warnings.catch_warnings():       # the UI shows it; not for pytest here
            warnings.simplefilter("ignore")
            pfd.gradients(loss, [w])
        other = pfd.identity(w, name="other")
    with pfd.Session(graph=g) as sess:
        sess.run([loss, other], {w: np.ones(3, np.float32)})
    return 0


def shape_drift():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, shape=[None, 1], name="x")
        a = pfd.identity(x, name="inputs")
        p = pfd.numpy_function(lambda v: v[:, 0] * 2, [a], pfd.float32, name="predict")
        loss = pfd.reduce_mean(pfd.square(pfd.subtract(p, x, name="err")), name="loss")
        pfd.identity(loss, name="z_last")
    with pfd.Session(graph=g) as sess:
        sess.run("z_last:0", {x: np.arange(16, dtype=np.float32).reshape(16, 1)})
    return 0


def stateless_shared():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.compat.v1.placeholder(pfd.float32, name="x")
        draw = lambda v: v + np.float32(np.random.rand())            # noqa: E731
        a = pfd.compat.v1.py_func(draw, [x], pfd.float32, stateful=False, name="noise_a")
        b = pfd.compat.v1.py_func(draw, [x], pfd.float32, stateful=False, name="noise_b")
        pfd.identity(pfd.add(a, b), name="total")
    with pfd.Session(graph=g) as sess:
        sess.run("total:0", {x: np.float32(1)})
    return 0


def writes_into_its_input():
    def clip_in_place(v):
        v[v > 1] = 1
        return v * 10
    g = pfd.Graph()
    with g.as_default():
        x = pfd.identity(pfd.compat.v1.placeholder(pfd.float32, name="x"), name="given")
        y = pfd.numpy_function(clip_in_place, [x], pfd.float32, name="clip")
        pfd.identity(y, name="after")
    with pfd.Session(graph=g) as sess:
        sess.run("after:0", {"x:0": np.array([0.5, 3.0], np.float32)})
    return 0


def makes_nan():
    g = pfd.Graph()
    with g.as_default():
        x = pfd.identity(pfd.compat.v1.placeholder(pfd.float32, name="x"), name="given")
        y = pfd.numpy_function(lambda v: np.log(v - 2).astype(np.float32), [x], pfd.float32,
                               name="log_it")
        pfd.reduce_mean(pfd.identity(y, name="passes_it_on"), name="loss")
    with pfd.Session(graph=g) as sess, np.errstate(invalid="ignore"):
        sess.run("loss:0", {"x:0": np.array([1.0, 5.0], np.float32)})
    return 0


CAUSES = [(blocked_gradient, "clip", "no gradient flows"),
          (folded_twice, "augment", "stateless on constant inputs"),
          (stateless_shared, "noise_b", "did not run"),
          (shape_drift, "predict", "returned shape (16,)"),
          (writes_into_its_input, "clip", "wrote into"),
          (makes_nan, "log_it", "made 1 NaN")]


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@pytest.mark.parametrize("target,op,text", CAUSES, ids=[c[0].__name__ for c in CAUSES])
async def test_the_root_cause_is_selected_and_on_screen_with_no_key(target, op, text, size):
    app = _app(target, show_timings=False)
    async with app.run_test(size=size) as pilot:
        try:
            await _finished(pilot)
            await pilot.pause(0.1)
            assert app.query_one(OpList).selected == op
            visible = app.query_one(Inspector).size.height
            on_screen = " ".join(_shown(app, "#insp-header")[:visible])
            assert on_screen.startswith(op)
            assert text in " ".join(on_screen.split()), (text, on_screen)
            assert "fix:" in on_screen, on_screen
            header = _text(app, "#insp-header")
            assert header.count("⚠") == len(app.model.rows[op].warnings)   # never twice
        finally:
            app.stop_ticking()
        await _stop(app)


@pytest.mark.asyncio
async def test_an_op_that_did_not_run_says_so_not_a_size_limit():
    app = _app(stateless_shared)
    async with _running(app) as pilot:
        await _finished(pilot)
        app.select_op("noise_b")
        await pilot.pause(0.1)
        caption = _text(app, "#insp-caption")
        assert app.model.rows["noise_b"].status == "dedup"
        assert "did not run in this run" in caption and "same stateless call as 'noise_a'" \
            in caption and "64 KB" not in caption, caption


@pytest.mark.asyncio
async def test_a_breakpoints_op_and_the_users_choice_keep_the_selection():
    app = _app(makes_nan, breaks=("passes_it_on",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "passes_it_on")
        assert app.query_one(OpList).selected == "passes_it_on"      # the breakpoint chose
        await pilot.press("down")
        chosen = app.query_one(OpList).selected
        assert chosen == "loss"
        await pilot.press("c")
        await _finished(pilot)
        assert app.query_one(OpList).selected == chosen               # the user chose


@pytest.mark.asyncio
async def test_after_a_pause_the_run_end_selects_the_root_cause():
    app = _app(makes_nan, breaks=("passes_it_on",))
    async with _running(app) as pilot:
        await _paused_at(pilot, "passes_it_on")
        await pilot.press("c")
        await _finished(pilot)
        assert app.query_one(OpList).selected == "log_it"


def test_the_exit_summary_lists_each_warning_once_with_its_runs():
    from pyfunc_debug import events as ev
    from pyfunc_debug.tui.exit_summary import exit_summary
    from pyfunc_debug.tui.model import RunModel
    model = RunModel()
    with pfd.trace() as tr:
        folded_twice()
        folded_twice()
    for e in tr.events:
        model.apply(e)
    text = exit_summary("t.py", model, 0)
    assert sum(1 for w in tr.events if type(w) is ev.Warning) == 4
    assert text.count("warning") == 1 and "more" not in text, text
    assert "warning (4 runs): op 'augment'" in text


def test_the_exit_summary_says_the_users_exception_of_a_script(tmp_path):
    from pyfunc_debug.script import Program, run_program
    from pyfunc_debug.tui.exit_summary import ending
    from pyfunc_debug.tui.model import RunModel
    script = tmp_path / "lr.py"
    script.write_text("import numpy as np\nimport pyfunc_debug as tf\n"
                      "g = tf.Graph()\nwith g.as_default():\n"
                      "    s = tf.compat.v1.placeholder(tf.int64, name='s')\n"
                      "    lr = tf.numpy_function(lambda v: np.float32({0: 1}[int(v)]), [s], "
                      "tf.float32, name='lr')\n"
                      "with tf.Session(graph=g) as sess:\n    sess.run(lr, {s: 2})\n")
    with pfd.trace() as tr:
        outcome = run_program(Program(path=str(script)))
    model = RunModel()
    for e in tr.events:
        model.apply(e)
    assert isinstance(outcome.error, OpError)
    assert ending(outcome, model) == "KeyError: 2 (op 'lr') (exit status 1)"


# -- in a real terminal ---------------------------------------------------------------------------

class Terminal:
    """Just enough of a VT100 to read back a Textual screen: cursor moves and text."""

    CSI = re.compile(r"\x1b\[([0-9;?<=>]*)([ -/]*)([@-~])|\x1b[()][0-9A-Za-z]|\x1b[=>78]"
                     r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")

    def __init__(self, rows: int = 40, cols: int = 120):
        self.rows, self.cols = rows, cols
        self.grid = [[" "] * cols for _ in range(rows)]
        self.y = self.x = 0

    def feed(self, data: str) -> None:
        pos = 0
        for m in self.CSI.finditer(data):
            self._text(data[pos:m.start()])
            pos = m.end()
            if m.group(3) in ("H", "f") and not m.group(2):
                parts = [int(p) if p.isdigit() else 1 for p in (m.group(1) or "1;1").split(";")]
                self.y, self.x = (parts + [1, 1])[0] - 1, (parts + [1, 1])[1] - 1
            elif m.group(3) == "J" and m.group(1) == "2":
                self.grid = [[" "] * self.cols for _ in range(self.rows)]
        self._text(data[pos:])

    def _text(self, text: str) -> None:
        for ch in text:
            if ch == "\r":
                self.x = 0
            elif ch == "\n":
                self.y = min(self.y + 1, self.rows - 1)
            elif ch >= " " and 0 <= self.y < self.rows and 0 <= self.x < self.cols:
                self.grid[self.y][self.x] = ch
                self.x += 1

    def lines(self) -> list[str]:
        return ["".join(row) for row in self.grid]


def _spawn(tmp_path, script: str, *args):
    pexpect = pytest.importorskip("pexpect")
    path = tmp_path / "script.py"
    path.write_text(script)
    env = dict(os.environ, HOME=str(tmp_path), TERM="xterm-256color", COLUMNS="120",
               LINES="40")
    return pexpect, pexpect.spawn(sys.executable, ["-m", "pyfunc_debug", "run", *args,
                                                   str(path)],
                                  env=env, cwd=str(tmp_path), dimensions=(40, 120),
                                  encoding="utf-8", timeout=60)


def _read_until(pexpect, child, term, done, timeout: float = 90) -> str:
    seen = ""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            chunk = child.read_nonblocking(65536, timeout=0.2)
        except pexpect.TIMEOUT:
            chunk = ""
        except pexpect.EOF:
            break
        seen += chunk
        if term is not None:
            term.feed(chunk)
        if done(seen):
            return seen
    raise AssertionError(f"timed out; last output: {seen[-1500:]!r}")


MANY_EVENTS = """
import time
import numpy as np
import pyfunc_debug as tf
g = tf.Graph()
with g.as_default():
    x = tf.compat.v1.placeholder(tf.float32, name="x")
    y = x
    for i in range(25):
        y = tf.numpy_function(lambda v: v + 1, [y], tf.float32, name=f"f{i}")
with tf.compat.v1.Session(graph=g) as sess:
    for r in range(320):
        sess.run(y, {x: np.float32(r)})
        time.sleep(0.004)
"""


def test_the_log_follows_the_newest_event_at_16000_events(tmp_path):
    pexpect, child = _spawn(tmp_path, MANY_EVENTS)
    term = Terminal()
    try:
        _read_until(pexpect, child, term, lambda seen: "done — q to quit" in seen[-20000:])
        time.sleep(0.5)          # the last redraw
        try:
            term.feed(child.read_nonblocking(1 << 20, timeout=0.5))
        except pexpect.TIMEOUT:
            pass
        pane = [line[:72] for line in term.lines()[22:37]]
        shown = [line for line in pane if " run " in line]
        assert shown and "run 320" in shown[-1] and "end   ok" in shown[-1], "\n".join(pane)
        child.send("q")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close()


PRINTS = """
import sys
import numpy as np
import pyfunc_debug as tf
g = tf.Graph()
with g.as_default():
    c = tf.constant(np.ones(2, np.float32), name="c")
    noisy = tf.compat.v1.py_func(lambda v: v * np.float32(np.random.rand()), [c], tf.float32,
                                 stateful=False, name="augment")
    loss = tf.reduce_mean(tf.math.log(noisy - 2.0), name="loss")
with tf.compat.v1.Session(graph=g) as sess:
    for step in range(3):
        print("loss =", sess.run(loss))
        print("step", step, "done", file=sys.stderr)
"""


def test_the_scripts_output_is_on_the_terminal_after_the_ui_closes(tmp_path):
    pexpect, child = _spawn(tmp_path, PRINTS)
    try:
        _read_until(pexpect, child, None, lambda seen: "done — q to quit" in seen[-20000:])
        child.send("q")
        rest = child.read()
    finally:
        child.close()
    after = rest.replace("\r\n", "\n")
    after = after[after.rfind("\x1b[?1049l"):] if "\x1b[?1049l" in after else after
    text = re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", after)
    expected = ["loss = nan", "step 0 done", "loss = nan", "step 1 done", "loss = nan",
                "step 2 done", "pyfunc-debug: "]
    positions, start = [], 0
    for line in expected:
        start = text.find(line, start)
        assert start >= 0, (line, text)
        positions.append(start)
    assert positions == sorted(positions)
    assert text.count("warning (3 runs): op 'augment'") == 1, text
    assert "more warnings" not in text


def test_an_attached_sessions_summary_gives_the_targets_exit_status():
    """Attached, the session ends with status 0 after the target's goodbye; the summary
    line must not say "exit status 0" for a target that failed."""
    from pyfunc_debug.tui.exit_summary import exit_summary
    from pyfunc_debug.tui.model import RunModel
    text = exit_summary("attached to h:1 — pid 7: t.py", RunModel(), 0, target_status=1)
    assert text.endswith("0 runs; the target's exit status 1") and "exit status 0" not in text
    assert exit_summary("t.py", RunModel(), 0).endswith("0 runs; exit status 0")
    # detached from a target that runs on: no exit status of anyone's ("exit status 0")
    text = exit_summary("attached to h:1 — pid 7: t.py", RunModel(), 0, detached=True)
    assert text.endswith("0 runs; detached: the target runs on")


@pytest.mark.asyncio
async def test_a_program_that_ran_no_op_is_told_why_on_screen(monkeypatch):
    """A script that ran nothing we watch (a real TF program without --tf, eager code):
    not an empty screen saying "done", but why nothing was recorded."""
    for module in ("tensorflow", "jax._src.xla_bridge"):   # imported by other tests
        monkeypatch.delitem(sys.modules, module, raising=False)
    app = _app(lambda: print("eager only") or 0)
    async with _running(app) as pilot:
        await _finished(pilot)
        header = _text(app, "#insp-header")
        assert header.startswith("Nothing was recorded: the script ran no Session.run")
        assert "done, no op ran (see the inspector)" in _status(app)


class _RowApp(App):
    """An inspector showing ``row`` (no values), as the live app shows it between pauses."""

    def __init__(self, row):
        super().__init__()
        self.row = row

    def compose(self):
        yield Inspector()

    def on_mount(self) -> None:
        self.query_one(Inspector).show(self.row, None, None)


@pytest.mark.asyncio
async def test_a_running_framework_op_shows_its_latest_ended_call_and_says_so():
    """A framework op has a call in flight nearly all the time: between pauses the
    inspector shows the summaries of its latest call that ended (dimmed, the header says
    which), not an empty table that comes and goes with each call."""
    from pyfunc_debug.tui.model import RunModel
    with pfd.trace(capture="summary") as tr:
        callbacks(3)()
    events = tr.events
    third = [i for i, e in enumerate(events) if type(e).__name__ == "OpStart"][2]
    model = RunModel()
    for e in events[:third + 1]:          # calls 0 and 1 ended, call 2 runs
        model.apply(e)
    row = model.rows["features/standardize"]
    assert row.status == "running" and row.calls == 2 and row.inputs == ()
    app = _RowApp(row)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.1)
        header = _text(app, "#insp-header").splitlines()[0]
        assert "RUNNING" in header and "shown: latest of 2 ended" in header
        table = "\n".join(_shown(app, "#insp-summaries"))
        assert re.search(r"in 0 +\(4,\) +float32 +0 +3 ", table), table   # call 1's row
        assert re.search(r"out 0 ", table), table
    # the op done: its own call, as before
    model.apply(next(e for e in events[third:] if type(e).__name__ == "OpEnd"))
    app = _RowApp(model.rows["features/standardize"])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.1)
        header = _text(app, "#insp-header").splitlines()[0]
        assert "DONE" in header and "latest of 3 calls" in header
        assert re.search(r"in 0 +\(4,\) +float32 +0 +6 ",
                         "\n".join(_shown(app, "#insp-summaries")))


def test_a_pause_after_a_framework_call_describes_that_call_not_a_later_one():
    """A framework op's calls run in parallel: while one thread is paused after its call,
    another ends a call of the same op. The header showed the other call's duration and
    NaN diagnostic above the paused call's values."""
    from pyfunc_debug import events as ev
    from pyfunc_debug.debug.pause import Pause
    from pyfunc_debug.tui.model import RunModel
    model = RunModel()
    op = "prep/scale_row"

    def nan_warning(seq, thread, given):
        return ev.Warning(seq, 1, seq * 1000, thread, op, "PyFunc", None,
                          f"op '{op}' (PyFunc) made 1 NaN in output 0 from finite inputs, in "
                          f"its call with in 0 = {given} (float32)", "non_finite")
    for e in (ev.RunStart(1, 1, 0, 5, "tensorflow", "callbacks"),
              ev.OpStart(2, 1, 1_000, 11, op, "PyFunc"),
              ev.OpEnd(3, 1, 101_000, 11, op, "PyFunc", None, 100_000),
              nan_warning(4, 11, "[0, -1, -2]"),
              ev.BreakpointHit(5, 1, 102_000, 11, op, "PyFunc", None, "after",
                               "breakpoint 1: when=nan_producer"),
              ev.OpStart(6, 1, 103_000, 22, op, "PyFunc"),
              ev.OpEnd(7, 1, 139_000, 22, op, "PyFunc", None, 36_000),
              nan_warning(8, 22, "[0, -2, -4]")):
        model.apply(e)
    pause = Pause(None, op, "PyFunc", "after", [], [], thread=11, run_id=1)
    header = Inspector._header(None, model.rows[op], pause, lambda p: p, True).plain
    assert "100.0µs" in header and "36.0µs" not in header
    assert "in 0 = [0, -1, -2]" in header and "[0, -2, -4]" not in header
    # which call that is: the paused one (it said "latest of 2 calls": the other's)
    first = header.splitlines()[0]
    assert "shown: the paused call, of 2" in first and "latest" not in first


def test_the_value_grid_says_where_the_first_nan_is():
    """The grid shows the first 200 rows: a NaN at element 1333 was on no screen, and no
    index was given (the plain script printed it)."""
    from pyfunc_debug.tui.widgets.inspector import grid_of
    a = np.ones(2000, np.float32)
    a[1333] = np.nan
    a[1500] = np.inf
    assert grid_of(a)[2] == "float32[2000] — first NaN at [1333] — first 200 of 2000"
    b = np.ones((3, 4))
    b[2, 1] = -np.inf
    assert grid_of(b)[2] == "float64[3, 4] — first Inf at [2, 1]"
    assert grid_of(np.ones(3))[2] == "float64[3]"


def test_runs_are_numbered_as_the_events_number_them():
    """Attached to a running target (or in a pytest process), the status bar, the warnings
    and the exit summary counted the runs this UI saw ("run 3") while the log said the
    target's run ids ("run 84")."""
    from pyfunc_debug import events as ev
    from pyfunc_debug.tui.exit_summary import exit_summary
    from pyfunc_debug.tui.model import RunModel
    model = RunModel()
    for e in (ev.RunStart(1, 84, 0, 5, "session", ""),
              ev.OpStart(2, 84, 10, 5, "b/maybe_fail", "PyFunc"),
              ev.OpError(3, 84, 20, 5, "b/maybe_fail", "PyFunc", None, "ValueError",
                         "ValueError: bad step 83", "x.py:3", 10),
              ev.RunEnd(4, 84, 30, 5, 30, False, "ValueError: bad step 83")):
        model.apply(e)
    assert model.run_id == 84 and [f.run for f in model.failures] == [84]
    assert "run 84: op 'b/maybe_fail'" in exit_summary("t", model, 1)


def test_the_ui_checks_breakpoint_globs_against_every_op_it_saw():
    """The ops a glob is checked against at the end (``unmatched``): the planned ones, the
    ones that ran, and eager ops inside a py_function."""
    from pyfunc_debug import events as ev
    from pyfunc_debug.debug.breakpoints import Breakpoint, unmatched
    from pyfunc_debug.tui.model import RunModel
    model = RunModel()
    for e in (ev.RunStart(1, 7, 0, 5, "session", "", ("prep/scale", "loss"), (), (),
                          ("PyFunc", "Mean")),
              ev.OpStart(2, 7, 10, 5, "loss/soft/Square", "Square", "loss")):
        model.apply(e)
    bps = [Breakpoint(op="prep/*", id=1), Breakpoint(op="loss/soft/*", id=2),
           Breakpoint(op="prpe/*", id=3)]
    assert unmatched(bps, model.types.items()) == [
        "breakpoint 3: op=prpe/* matched no op that ran (did you mean 'prep/*'?)"]
