"""Progress of long work: evaluation rows, ingest files and chunk batches.

    ProgressBar(label, total, note=)  .update(done, total, message) ... .close()
      in a Jupyter kernel  -> one text/plain display, redrawn in place
                              (update_display_data), at most every 0.2 s, and
                              at once when the phase (the message's first word)
                              or the total changes; elapsed time on the line;
                              close() always draws the final state
      anywhere else        -> a rich bar on stderr; close() refreshes before stopping
    bar.callback()          -> the ``(done, total, message)`` callable ingest takes
    reporter(progress)      ingest's ``progress=`` argument as that callable: the
                            caller's own, a bar (True), a no-op (False), or
                            (None, the default) a bar where a person watches:
                            a Jupyter kernel or a terminal on stderr

Why the phase forces a redraw: ingest reads files in milliseconds and then
embeds for minutes; with a time throttle alone the last "reading" update fell
between two redraws and the bar showed a stale count until the first batch.

Why not rich in notebooks: rich's live display skips its last refresh when
it runs in Jupyter (``Live.stop``), so a bar that finished between two
refresh ticks stayed at 22/24 for good. Here the last state is drawn
explicitly, in both modes. Messages (file names) go through
``text.printable``: a name cannot move the cursor or clear the output.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from selfrag_nb.text import printable

__all__ = ["ProgressBar", "bar_text", "fmt_elapsed", "in_jupyter_kernel", "reporter", "watched"]

#: Seconds between two redraws in a notebook (each redraw is a message to the browser).
_NOTEBOOK_INTERVAL = 0.2
_WIDTH = 24


def in_jupyter_kernel() -> bool:
    """True inside an IPython kernel (JupyterLab, Notebook, VS Code); never imports IPython."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def watched() -> bool:
    """Is a person watching: a Jupyter kernel, or stderr is a terminal."""
    if in_jupyter_kernel():
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def fmt_elapsed(seconds: float) -> str:
    """``4 s``, ``1 min 05 s``."""
    s = int(seconds)
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60:02d} s"


def bar_text(
    label: str, done: int, total: int | None, message: str = "", elapsed: float | None = None
) -> str:
    """One line: ``label  ██████░░░░ 22/24 · 12 s · message`` (no total: ``22 done``)."""
    if total:
        filled = round(_WIDTH * min(done, total) / total)
        count = f"{'█' * filled}{'░' * (_WIDTH - filled)} {done:,}/{total:,}"
    else:
        count = f"{done:,} done"
    clock = f" · {fmt_elapsed(elapsed)}" if elapsed is not None else ""
    return f"{label}  {count}{clock}" + (f" · {message}" if message else "")


def _phase(message: str) -> str:
    return message.split(" ", 1)[0]


class ProgressBar:
    """A progress bar that always shows where the work ended."""

    def __init__(
        self, label: str, total: int | None = None, *, notebook: bool | None = None, note: str = ""
    ) -> None:
        self.label = printable(label)
        #: A line shown above the bar (e.g. what a first run is doing and why it is slow).
        self.note = printable(note)
        self._started = time.monotonic()
        self.done = 0
        self.total = total
        self.message = ""
        self._notebook = in_jupyter_kernel() if notebook is None else notebook
        self._handle: Any = None
        self._drawn_at = 0.0
        self._drawn_key: tuple[str, int | None] = ("", total)
        self._rich: Any = None
        self._task: Any = None
        self._closed = False
        if self._notebook:
            self._draw(force=True)
        else:
            self._start_rich()

    # ------------------------------------------------------------ drawing

    def text(self) -> str:
        """What the bar shows now."""
        line = bar_text(self.label, self.done, self.total, self.message, time.monotonic() - self._started)
        return f"{self.note}\n{line}" if self.note else line

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._drawn_at < _NOTEBOOK_INTERVAL:
            return
        self._drawn_at = now
        self._drawn_key = (_phase(self.message), self.total)
        from IPython.display import display

        bundle = {"text/plain": self.text()}
        if self._handle is None:
            self._handle = display(bundle, raw=True, display_id=True)  # type: ignore[no-untyped-call]
        else:
            self._handle.update(bundle, raw=True)

    def _start_rich(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._rich = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[message]}", markup=False),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._rich.add_task(self.label, total=self.total, message="")
        if self.note:
            self._rich.console.print(self.note, markup=False, highlight=False)
        self._rich.start()

    # ------------------------------------------------------------ updates

    def update(self, done: int, total: int | None = None, message: str | None = None) -> None:
        """Set the count (and the total and message when given)."""
        self.done = done
        if total is not None:
            self.total = total
        if message is not None:
            self.message = printable(message)
        if self._closed:
            return
        if self._notebook:
            self._draw(force=(_phase(self.message), self.total) != self._drawn_key)
        elif self._rich is not None:
            self._rich.update(self._task, completed=done, total=self.total, message=self.message)

    def close(self) -> None:
        """Draw the final state, then stop (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self._notebook:
            self._draw(force=True)
        elif self._rich is not None:
            self._rich.update(self._task, completed=self.done, total=self.total, message=self.message)
            self._rich.refresh()
            self._rich.stop()

    def callback(self) -> Callable[[int, int, str], None]:
        """``(done, total, message)``: the form ``KnowledgeBase.ingest(progress=...)`` calls."""

        def report(done: int, total: int, message: str) -> None:
            self.update(done, total, message)

        return report

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def reporter(
    progress: Callable[[int, int, str], None] | bool | None,
    *,
    label: str = "ingest",
    note: str = "",
) -> Iterator[Callable[[int, int, str], None]]:
    """A ``(done, total, message)`` callback: the caller's, a bar (which
    always draws the final count), or a no-op. ``None`` is a bar where a
    person watches (:func:`watched`), a no-op elsewhere (tests, CI logs)."""
    if progress is None:
        progress = watched()
    if progress is False:
        yield lambda done, total, message: None
        return
    if callable(progress):
        yield progress
        return
    with ProgressBar(label, note=note) as bar:
        yield bar.callback()
