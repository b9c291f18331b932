"""Progress bars for long work (tqdm), on a terminal only.

A bar appears once the work has taken `DELAY` seconds (short runs print nothing extra) and
is cleared when it ends, so the driver's output is the same with or without it; when stderr
is not a terminal (a pipe, a file, CI) there is no bar and the interpreter is given no
callback at all.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from contextlib import contextmanager
from typing import TextIO

from xdsl_tmem.interpreter.run import Progress

DELAY = 2.0
"""Seconds before a bar is shown."""
REFRESH = 0.2
"""Seconds between redraws at most."""


@contextmanager
def progress_bar(what: str, unit: str, stream: TextIO | None = None) -> Generator[Progress | None]:
    """A `Progress` drawing a tqdm bar on `stream` (stderr) named `what`, counting `unit`s
    (with their rate), or None when `stream` is not a terminal."""
    out: TextIO = sys.stderr if stream is None else stream
    if not out.isatty():
        yield None
        return
    from tqdm import tqdm  # only on a terminal

    with tqdm(desc=what, unit=unit, file=out, delay=DELAY, mininterval=REFRESH, leave=False, dynamic_ncols=True) as bar:

        def update(done: int, total: int | None) -> None:
            if total != bar.total:
                bar.total = total
            bar.update(done - bar.n)

        yield update
