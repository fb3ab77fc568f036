"""Every code block of README.md and docs/**/*.md runs here, so the docs cannot rot.

How a block runs is decided by its fence's language and by an optional HTML comment
on the line before it (blank lines between are allowed; the comment is invisible on
GitHub, on PyPI and on the site)::

    ```python     runs with the venv's python (written to a file in the page's directory)
    ```bash       runs as one ``bash -e`` script, the venv's bin first on PATH
    ```text       output: each non-blank line must appear, in order, in what the command
                  block just before it printed (stdout and stderr, colours removed);
                  ``...`` inside a line matches anything, a run of spaces any run

    <!-- run: OPTIONS -->   before a python or bash block, space-separated:
        exit=N              the expected exit status (default 0)
        stdin="c\\nq\\n"      fed to standard input (default: nothing). There is no
                            terminal, so ``run`` and ``demo`` use the (pfd) prompt and
                            ``view`` refuses with status 2
        pty keys="q"        in a pseudo-terminal (80x24) instead: wait until the UI is
                            drawn (or until expect="TEXT" was printed), then type keys
        background ready="TEXT"   start it, wait until it printed TEXT, go on with the
                            page's next blocks; when they are done it must exit (status
                            ``exit``) by itself
        file=NAME           write the block to NAME in the page's directory instead of
                            running it (a script or test file that a later block runs)
        continue            python: continues the previous python block; both run again
                            as one program, here
        requires=MOD,MOD    skipped, naming the module, unless these import (the
                            tensorflow, jax and distributed extras)
        skip="REASON"       not run (it installs software, or runs for minutes): reported
                            as a skip with REASON
        timeout=S           seconds (default 60)
    <!-- output -->         before a text block whose text cannot be matched literally
                            (a UI screen, timings): only its place after a command block
                            is checked

Each page gets one temporary directory holding a copy of the repository's
``examples/``; its blocks run there in order, so a block can use the files an
earlier one wrote. Pages run at the same time (threads; each block is a process),
and a block's test waits for its page; under xdist one worker runs a page for all.
A fence in another language, or an unknown option, fails
``test_every_block_is_classified``: no block is silently left out.

Also here: ``mkdocs build --strict`` (skipped without mkdocs), and the README's links
(absolute, to pages that exist).
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DOCS_URL = "https://pyfunc-debug.github.io/pyfunc-debug/"
BIN = Path(sys.executable).parent          # the venv's bin: pyfunc-debug, pytest, mkdocs
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])

PYTHON, SHELL, OUTPUT = "python", "bash", "text"
LANGUAGES = {PYTHON: PYTHON, "py": PYTHON, "bash": SHELL, "sh": SHELL, "console": SHELL,
             OUTPUT: OUTPUT}
FLAGS = {"pty", "background", "continue"}
VALUED = {"exit", "stdin", "keys", "expect", "ready", "file", "requires", "skip", "timeout"}
ANSI = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")
ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\"}


@dataclass
class Block:
    page: Path
    line: int              # the fence's line, 1-based
    kind: str              # PYTHON, SHELL, OUTPUT, or "" (unknown: an error)
    lang: str
    code: str
    options: dict = field(default_factory=dict)
    marked_output: bool = False
    errors: list = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _unescape(text: str) -> str:
    return re.sub(r"\\(x[0-9a-fA-F]{2}|.)",
                  lambda m: chr(int(m[1][1:], 16)) if m[1][0] == "x" and len(m[1]) == 3
                  else ESCAPES.get(m[1], "\\" + m[1]), text)


def _options(comment: str, errors: list) -> dict:
    options = {}
    for token in shlex.split(comment):
        key, eq, value = token.partition("=")
        if key in FLAGS and not eq:
            options[key] = True
        elif key in VALUED and eq:
            options[key] = _unescape(value)
        else:
            errors.append(f"unknown run option {token!r}")
    return options


def parse(page: Path) -> list:
    """The fenced blocks of a page, with the options of the comment before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, comment, i = [], None, 0
    while i < len(lines):
        text = lines[i].strip()
        fence = re.match(r"^(\s*)(```+|~~~+)\s*([\w+-]*)", lines[i])
        if text.startswith("<!--") and text.endswith("-->"):
            comment = (i + 1, text[4:-3].strip())
        elif fence:
            indent, marks, lang = fence.groups()
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(marks):
                end += 1
            body = [line[len(indent):] if line.startswith(indent) else line.lstrip()
                    for line in lines[i + 1:end]]
            block = Block(page, i + 1, LANGUAGES.get(lang.lower(), ""), lang,
                          "\n".join(body) + "\n")
            if not block.kind:
                block.errors.append(f"fence language {lang!r} is none of {sorted(LANGUAGES)}")
            if comment:
                what = comment[1]
                if what == "output":
                    block.marked_output = True
                elif what.startswith("run:"):
                    block.options = _options(what[4:], block.errors)
            blocks.append(block)
            comment, i = None, end
        elif text:
            comment = None
        i += 1
    _check(blocks)
    return blocks


def _check(blocks: list) -> None:
    for k, b in enumerate(blocks):
        o = b.options
        if b.kind == OUTPUT:
            before = blocks[k - 1] if k else None
            if o:
                b.errors.append("an output block takes no run options (<!-- output --> at most)")
            if before is None or before.kind not in (PYTHON, SHELL) or "file" in before.options:
                b.errors.append("an output block must follow a python or bash block that runs")
        elif b.marked_output:
            b.errors.append("<!-- output --> marks text blocks only")
        if "keys" in o and "pty" not in o or "expect" in o and "pty" not in o:
            b.errors.append("keys= and expect= go with pty")
        if "ready" in o and "background" not in o:
            b.errors.append("ready= goes with background")
        if "background" in o and ("ready" not in o or b.kind != SHELL):
            b.errors.append("background is for bash blocks and needs ready=")
        if "continue" in o and (b.kind != PYTHON or not any(x.kind == PYTHON and "file" not in
                                                            x.options for x in blocks[:k])):
            b.errors.append("continue needs an earlier python block that runs")
        if "pty" in o and ("stdin" in o or "background" in o):
            b.errors.append("pty takes no stdin= and cannot run in the background")
        for key in ("exit", "timeout"):
            if key in o and not str(o[key]).isdigit():
                b.errors.append(f"{key}= needs a number")


BLOCKS = {page: parse(page) for page in PAGES}
ALL = [b for blocks in BLOCKS.values() for b in blocks]


# -- running ---------------------------------------------------------------------------------

def _environment() -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "PYFUNC_DEBUG_", "COV_")) and k != "NO_COLOR"}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", PYTHONUNBUFFERED="1",
               PYTHONDONTWRITEBYTECODE="1", TERM="xterm-256color", COLUMNS="100",
               MPLBACKEND="Agg", TF_CPP_MIN_LOG_LEVEL="2")
    return env


def _clean(output: str) -> list:
    return [ANSI.sub("", line).replace("\r", "").rstrip() for line in output.splitlines()]


def match_lines(expected: str, output: str) -> str | None:
    """None when each non-blank expected line is in an output line, in order; else why not."""
    got, at = _clean(output), 0
    for want in (line.rstrip() for line in expected.splitlines()):
        if not want.strip():
            continue
        pattern = re.compile(".*".join(r"\s+".join(map(re.escape, re.split(r"\s+", part)))
                                       for part in want.strip().split("...")))
        while at < len(got) and not pattern.search(got[at]):
            at += 1
        if at == len(got):
            return f"not in the output (in order): {want.strip()!r}"
        at += 1
    return None


@dataclass
class Outcome:
    status: str            # "passed", "failed", "skipped"
    message: str = ""
    output: str = ""


class PageRun:
    """One page's directory and the outcomes of its blocks, run in order."""

    def __init__(self, page: Path, blocks: list):
        self.page, self.blocks, self.outcomes, self.background = page, blocks, [], []
        self.dir = Path(tempfile.mkdtemp(prefix="pfd-docs-"))
        shutil.copytree(ROOT / "examples", self.dir / "examples",
                        ignore=shutil.ignore_patterns("__pycache__"))
        self.env = _environment()

    def run_through(self, index: int) -> Outcome:
        while len(self.outcomes) <= index:
            k = len(self.outcomes)
            try:
                outcome = self._run(k)
            except Exception as e:     # a runner bug or a timeout: this block fails
                outcome = Outcome("failed", f"{type(e).__name__}: {e}")
            self.outcomes.append(outcome)
            if k == len(self.blocks) - 1:
                self.outcomes[k] = self._finish(outcome)
        return self.outcomes[index] if self.outcomes else None

    def close(self) -> None:
        for proc, _ in self.background:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _run(self, k: int) -> Outcome:
        b = self.blocks[k]
        if b.errors:
            return Outcome("failed", "; ".join(b.errors))
        if b.kind == OUTPUT:
            return self._check_output(k)
        o = b.options
        if "skip" in o:
            return Outcome("skipped", o["skip"])
        missing = [m for m in o.get("requires", "").split(",") if m and find_spec(m) is None]
        if missing:
            return Outcome("skipped", f"needs {', '.join(missing)}, which is not installed")
        if "pty" in o and find_spec("pexpect") is None:
            return Outcome("skipped", "needs pexpect (the dev extra)")
        if "file" in o:
            (self.dir / o["file"]).write_text(b.code, encoding="utf-8")
            return Outcome("passed")
        if b.kind == PYTHON:
            code = b.code
            if "continue" in o:
                code = self._program_before(k) + code
            (self.dir / f"docs_block_{b.line}.py").write_text(code, encoding="utf-8")
            argv = [sys.executable, f"docs_block_{b.line}.py"]
        else:
            argv = ["bash", "-e", "-c", b.code]
        if "background" in o:
            return self._start(b, argv)
        if "pty" in o:
            status, output = self._pty(b, argv)
        else:
            done = subprocess.run(argv, cwd=self.dir, env=self.env, input=o.get("stdin", ""),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=int(o.get("timeout", 60)))
            status, output = done.returncode, done.stdout
        want = int(o.get("exit", 0))
        if status != want:
            return Outcome("failed", f"exit status {status}, expected {want}; output:\n"
                           + "\n".join(_clean(output)[-40:]), output)
        return Outcome("passed", output=output)

    def _program_before(self, k: int) -> str:
        """The python blocks that block k continues (back to the first without continue)."""
        parts = []
        for b in reversed(self.blocks[:k]):
            if b.kind == PYTHON and "file" not in b.options:
                parts.insert(0, b.code)
                if "continue" not in b.options:
                    break
        return "".join(parts)

    def _check_output(self, k: int) -> Outcome:
        before = self.outcomes[k - 1]
        if before.status != "passed":
            return Outcome("skipped" if before.status == "skipped" else "failed",
                           f"its command block ({self.blocks[k - 1].id}) {before.status}")
        if self.blocks[k].marked_output:
            return Outcome("passed")
        why = match_lines(self.blocks[k].code, before.output)
        if why:
            return Outcome("failed", f"{why}\nthe command printed:\n"
                           + "\n".join(_clean(before.output)[-60:]))
        return Outcome("passed")

    def _pty(self, b: Block, argv: list) -> tuple:
        import pexpect
        child = pexpect.spawn(argv[0], argv[1:], cwd=str(self.dir), env=self.env,
                              dimensions=(24, 80), encoding="utf-8",
                              timeout=int(b.options.get("timeout", 60)))
        try:
            if "expect" in b.options:
                child.expect_exact(b.options["expect"])
            else:
                child.expect_exact("\x1b[?1049h")    # the UI took the screen
            time.sleep(1.0)                           # and drew it
            for key in b.options.get("keys", ""):
                child.send(key)
                time.sleep(0.2)
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        status = child.exitstatus if child.exitstatus is not None else -child.signalstatus
        return status, (child.before or "")

    def _start(self, b: Block, argv: list) -> Outcome:
        log = self.dir / f"docs_background_{b.line}.log"
        with open(log, "w") as out:
            proc = subprocess.Popen(argv, cwd=self.dir, env=self.env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, text=True)
        self.background.append((proc, b))
        deadline = time.monotonic() + int(b.options.get("timeout", 60))
        while b.options["ready"] not in log.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                return Outcome("failed", f"never printed {b.options['ready']!r}:\n"
                               + log.read_text())
            time.sleep(0.05)
        return Outcome("passed", output=log.read_text())

    def _finish(self, last: Outcome) -> Outcome:
        """At the page's end every background command must have exited as expected."""
        for proc, b in self.background:
            try:
                status = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                return Outcome("failed", f"the background command of {b.id} did not exit")
            want = int(b.options.get("exit", 0))
            if status != want:
                log = (self.dir / f"docs_background_{b.line}.log").read_text()
                return Outcome("failed", f"the background command of {b.id} exited {status}, "
                               f"expected {want}:\n{log}")
        return last


class Pages:
    """Runs pages at the same time, each page's blocks in order: most of a block's time is
    spent waiting (interpreter start-up, a UI being drawn, a cluster starting).

    Without xdist every selected page is queued at the first test, the slowest first. Under
    xdist a worker starts a page when it gets one of its blocks, and the first worker to
    do so runs it for all: the others wait on its lock file and read its outcomes (a page
    must not run twice at once: the attach page listens on a fixed port)."""

    WORKERS = 4
    FIRST = ("frameworks.md", "pytest.md", "attach.md")   # the longest pages
    LAST = ("dask.md",)   # its workers' heartbeats suffer beside TensorFlow's start-up

    def __init__(self, prefetch: set, shared: Path | None):
        self.pool = ThreadPoolExecutor(self.WORKERS, thread_name_prefix="docs-page")
        self.futures, self.lock, self.shared = {}, threading.Lock(), shared
        for page in sorted(prefetch, key=lambda p: (p.name in self.LAST, p.name not in self.FIRST,
                                                    p)):
            self._submit(page)

    def _submit(self, page: Path):
        with self.lock:
            if page not in self.futures:
                self.futures[page] = self.pool.submit(self._outcomes, page)
            return self.futures[page]

    def _outcomes(self, page: Path) -> list:
        if self.shared is None:
            return self._run(page)
        name = page.relative_to(ROOT).as_posix().replace("/", "__")
        with open(self.shared / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)       # released when the file closes
            done = self.shared / f"{name}.json"
            if done.exists():
                return [Outcome(**o) for o in json.loads(done.read_text(encoding="utf-8"))]
            outcomes = self._run(page)
            done.write_text(json.dumps([asdict(o) for o in outcomes]), encoding="utf-8")
            return outcomes

    @staticmethod
    def _run(page: Path) -> list:
        run = PageRun(page, BLOCKS[page])
        try:
            run.run_through(len(BLOCKS[page]) - 1)
        finally:
            run.close()
        return run.outcomes

    def outcome(self, block: Block) -> Outcome:
        return self._submit(block.page).result()[BLOCKS[block.page].index(block)]

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def pages(request, tmp_path_factory):
    selected, shared = set(), None
    if "PYTEST_XDIST_WORKER" in os.environ:   # the run's workers share basetemp's parent
        shared = tmp_path_factory.getbasetemp().parent / "pfd-docs-pages"
        shared.mkdir(exist_ok=True)
    else:
        selected = {item.callspec.params["block"].page for item in request.session.items
                    if "block" in getattr(getattr(item, "callspec", None), "params", {})}
    runner = Pages(prefetch=selected, shared=shared)
    yield runner
    runner.close()


@pytest.mark.parametrize("block", ALL, ids=[b.id for b in ALL])
def test_block(block, pages):
    outcome = pages.outcome(block)
    if outcome.status == "skipped":
        pytest.skip(outcome.message)
    if outcome.status == "failed":
        pytest.fail(f"{block.id}: {outcome.message}", pytrace=False)


# -- the pages themselves ----------------------------------------------------------------------

def test_every_block_is_classified():
    bad = [f"{b.id}: {e}" for b in ALL for e in b.errors]
    assert not bad, "\n".join(bad)
    assert len(ALL) > 50


def test_the_matcher():
    out = "a  1.25 ms\n\x1b[1mpaused\x1b[0m before 'x'\ncount      sum\nend"
    assert match_lines("a ... ms\npaused before 'x'\n\ncount sum\nend\n", out) is None
    assert match_lines("end\na", out) is not None


def test_no_page_cites_the_spec_or_points_outside_the_repository():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert "SPEC" not in text and "shared/" not in text and "TF#" not in text, page


def test_readme_links_are_absolute_and_name_pages_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)|<(https?://[^>]+)>|src=\"([^\"]+)\"", text)
    targets = [next(filter(None, groups)) for groups in links]
    assert targets
    for target in targets:
        assert target.startswith("https://"), f"a relative link breaks on PyPI: {target}"
        if target.startswith(DOCS_URL):
            path = target[len(DOCS_URL):].split("#")[0].strip("/")
            assert (DOCS / f"{path}.md").exists() or (DOCS / path / "index.md").exists() \
                or not path, f"no docs page for {target}"


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert f" {page.relative_to(DOCS).as_posix()}" in nav, f"{page} is not in mkdocs.yml's nav"


def test_mkdocs_build_strict(tmp_path):
    if any(find_spec(m) is None for m in ("mkdocs", "material", "mkdocstrings")):
        pytest.skip("needs the docs extra (mkdocs, mkdocs-material, mkdocstrings)")
    site = tmp_path / "site"
    env = dict(_environment(), NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("index.html", "api/engine/index.html", "tasks/nan/index.html"):
        assert (site / name).exists(), name
    pages = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    assert "SPEC §" not in pages and "TF#" not in pages
    assert "pyfunc_debug.Session" in pages or "Session" in pages
