"""Export a ``.jsonl`` trace as a table (SPEC §3b): ``pyfunc-debug export TRACE
--format csv|parquet [-o OUT]``.

One row per op call (``rows.op_rows``): CSV through the ``csv`` module
(nothing to install), Parquet through ``pyarrow`` (the ``parquet`` extra), in
record batches, so rows stream from the loaded events to the file.
"""
from __future__ import annotations

import csv
import itertools
import os
import sys

from .bulk import paused_gc
from .jsonl import load_trace
from .rows import COLUMNS, FLOAT, INT, STATUSES, STR, VALUE_FIELDS, column_kind, columns_for, \
    op_rows

__all__ = ["ExportError", "FORMATS", "COLUMNS", "VALUE_FIELDS", "STATUSES", "export_trace",
           "op_rows", "columns_for"]

FORMATS = ("csv", "parquet")
BATCH_ROWS = 16_384   # rows per Parquet record batch (and row group): bounds memory


class ExportError(ValueError):
    """A trace that cannot be exported: one line naming the file at fault and why."""


def _load(trace_path: str):
    try:
        return load_trace(trace_path)
    except FileNotFoundError:
        raise ExportError(f"{trace_path}: no such trace file") from None
    except OSError as e:
        raise ExportError(f"{trace_path}: cannot read the trace: {e.strerror or e}") from None
    except ValueError as e:   # TraceFormatError: names the file and line already
        raise ExportError(str(e).splitlines()[0] if str(e) else
                          f"{trace_path}: not a readable trace") from None


def _pyarrow(trace_path: str):
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError(f"{trace_path}: parquet needs pyarrow: "
                          "pip install 'pyfunc-debug[parquet]'") from None
    return pa, pq


def _write_csv(f, rows, columns) -> int:
    writer = csv.writer(f, lineterminator="\n")   # None is written as an empty cell
    writer.writerow(columns)
    n = 0
    for row in rows:
        writer.writerow(map(row.get, columns))
        n += 1
    return n


def _write_parquet(path, rows, columns, pa, pq) -> int:
    types = {INT: pa.int64(), FLOAT: pa.float64(), STR: pa.string()}
    schema = pa.schema([(c, types[column_kind(c)]) for c in columns])
    n = 0
    with pq.ParquetWriter(path, schema) as writer, paused_gc():
        while batch := list(itertools.islice(rows, BATCH_ROWS)):   # bounded memory
            writer.write_batch(pa.RecordBatch.from_pylist(batch, schema=schema))
            n += len(batch)
    return n


def _default_out(trace_path: str, fmt: str) -> str:
    base = trace_path[:-len(".jsonl")] if trace_path.endswith(".jsonl") else trace_path
    return f"{base}.{fmt}"


def export_trace(trace_path: str, fmt: str = "csv", out: str | None = None) -> tuple[str, int]:
    """Write one row per op call of the ``.jsonl`` trace at ``trace_path``; returns
    (output path, rows written).

    ``fmt`` is ``"csv"`` or ``"parquet"`` (needs pyarrow: the ``parquet``
    extra). ``out=None`` writes beside the trace (``run.jsonl`` ->
    ``run.csv`` / ``run.parquet``); ``out="-"`` (CSV only) writes to stdout.
    The file appears complete or not at all (written under a temporary name,
    then renamed).

    Columns, in order (``COLUMNS``, then per value):

    - ``run``: the run id the events carry; ``op``, ``op_type``; ``thread``:
      the thread ident (negative for a Dask worker's thread); ``worker``: the
      Dask worker's address when the op ran on one (else empty); ``pid``: the
      process it ran in;
    - ``start_ns``, ``duration_ns``: ``time.perf_counter_ns`` readings;
    - ``status``: ``ok``, ``error``, ``interrupted``, ``folded``,
      ``deduplicated`` or ``unfinished`` (see ``op_rows``);
    - ``parent``: the py_function an eager op ran inside; ``source``: where
      the op was made; ``error_type``, ``message``: an error's;
    - per input ``i`` and output ``j`` (as many as the op with most has):
      ``in{i}_shape`` (e.g. ``(16, 1)``), ``in{i}_dtype``, ``in{i}_min``,
      ``in{i}_max``, ``in{i}_mean`` (NaN when the value is all NaN),
      ``in{i}_nan``, ``in{i}_inf`` (counts), and ``out{j}_...`` likewise;
      empty where the trace has no summaries (capture="none").

    CSV is written with the ``csv`` module (``\\n`` line ends, empty cells for
    missing values; ``pandas.read_csv`` reads it back). Raises
    ``ExportError`` naming the path for a missing, unreadable or damaged
    trace, an unwritable output, or Parquet without pyarrow.
    """
    trace_path = os.fspath(trace_path)
    if fmt not in FORMATS:
        raise ExportError(f"{trace_path}: unknown export format {fmt!r} "
                          f"(one of {', '.join(FORMATS)})")
    if out == "-" and fmt != "csv":
        raise ExportError(f"{trace_path}: only csv can be written to stdout (-o -)")
    arrow = _pyarrow(trace_path) if fmt == "parquet" else None   # before a long load
    out = _default_out(trace_path, fmt) if out is None else os.fspath(out)
    if out != "-" and os.path.abspath(out) == os.path.abspath(trace_path):
        raise ExportError(f"{out}: the output would overwrite the trace it is made from")
    events = _load(trace_path)
    columns = columns_for(events)
    rows = op_rows(events, events.header.get("pid"))
    if out == "-":
        return out, _write_csv(sys.stdout, rows, columns)
    return out, _write_file(out, rows, columns, arrow, trace_path)


def _write_file(out: str, rows, columns, arrow, trace_path: str) -> int:
    """Write the rows (Parquet with ``arrow``, else CSV) under a temporary name, then
    rename it to ``out``: a failed export leaves no half-written file."""
    tmp = os.path.join(os.path.dirname(out) or ".", f".{os.path.basename(out)}.{os.getpid()}.tmp")
    try:
        if arrow is None:
            with open(tmp, "w", newline="", encoding="utf-8") as f:
                n = _write_csv(f, rows, columns)
        else:
            n = _write_parquet(tmp, rows, columns, *arrow)
        os.replace(tmp, out)
    except OSError as e:
        _remove(tmp)
        raise ExportError(f"{out}: cannot write the export: {e.strerror or e}") from None
    except (ValueError, OverflowError) as e:   # pyarrow: a number beyond int64, say
        _remove(tmp)
        raise ExportError(f"{trace_path}: a value {'parquet' if arrow else 'csv'} cannot "
                          f"hold: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
                          ) from None
    except BaseException:
        _remove(tmp)
        raise
    return n


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
