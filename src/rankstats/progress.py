"""Progress bars for long operations, through the optional `tqdm <https://tqdm.github.io>`_.

tqdm is the most widely used progress library in scientific Python: small, pure Python, quiet
on request, and it writes to ``stderr`` so results on ``stdout`` stay clean. It is an optional
extra (``pip install rankstats[progress]``), imported only when a bar is shown.

Every long operation of the library takes ``progress``:

- ``False`` (the default): no bar;
- ``True``: a bar, which needs tqdm (a clear :class:`ImportError` otherwise);
- ``None``: automatic, a bar only when ``stderr`` is a terminal and tqdm is installed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

__all__ = ["ProgressBar", "check_progress", "progress_bar", "progress_enabled"]

_INSTALL = "pip install 'rankstats[progress]'"


class ProgressBar(Protocol):
    """What :func:`progress_bar` yields: something that counts finished units of work."""

    def update(self, n: int = 1) -> Any:
        """Record ``n`` more units of work as done."""


class _Silent:
    """A progress bar that shows nothing."""

    def update(self, n: int = 1) -> None:
        """Do nothing."""


def check_progress(progress: Any) -> bool | None:
    """Validate a ``progress`` argument: ``True``, ``False`` or ``None``.

    Examples
    --------
    >>> check_progress(None) is None
    True
    >>> check_progress("yes")
    Traceback (most recent call last):
    ...
    TypeError: progress must be True, False or None (automatic), got 'yes'
    """
    if progress is None or progress is True or progress is False:
        return progress
    raise TypeError(f"progress must be True, False or None (automatic), got {progress!r}")


def _has_tqdm() -> bool:
    try:
        import tqdm  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def progress_enabled(progress: bool | None) -> bool:
    """Whether a bar is to be shown: resolve ``None`` (automatic) and check tqdm for ``True``.

    Raises
    ------
    ImportError
        If ``progress`` is ``True`` and tqdm is not installed.
    """
    progress = check_progress(progress)
    if progress is None:
        stream = sys.stderr
        return stream is not None and stream.isatty() and _has_tqdm()
    if progress and not _has_tqdm():
        raise ImportError(f"progress=True needs tqdm, an optional dependency: {_INSTALL}")
    return progress


@contextmanager
def progress_bar(total: int, desc: str, enabled: bool | None = False) -> Iterator[ProgressBar]:
    """A progress bar over ``total`` units of work, closed when the block ends.

    Parameters
    ----------
    total : int
        The number of units of work (blocks, groups, samples, ...).
    desc : str
        What is being done, shown left of the bar.
    enabled : bool or None, default=False
        ``True`` to show the bar (needs tqdm), ``False`` for none, ``None`` to show it only
        when ``stderr`` is a terminal and tqdm is installed.

    Yields
    ------
    ProgressBar
        Call ``.update(n)`` after finishing ``n`` units.

    Examples
    --------
    >>> with progress_bar(3, "sampling", enabled=False) as bar:
    ...     for _ in range(3):
    ...         bar.update(1)
    """
    if not progress_enabled(enabled):
        yield _Silent()
        return
    from tqdm.auto import tqdm  # type: ignore[import-untyped,import-not-found,unused-ignore]

    bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False, dynamic_ncols=True)
    try:
        yield bar
    finally:
        bar.close()
