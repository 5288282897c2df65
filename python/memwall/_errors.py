"""The exceptions of memwall: the C++ library's errors, with the CLI's message text."""

from __future__ import annotations


class Error(Exception):
    """Any error memwall reports.

    ``str(error)`` is the message the CLI prints after ``memwall: error:``; ``exit_code`` is the
    CLI's exit status for it (2 for bad input).
    """

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class ConfigError(Error):
    """A bad hardware config: the message reads ``FILE:LINE:COL: KEY.PATH: REASON``.

    ``file``, ``line`` and ``column`` (1-based; 0 when unknown) locate the problem, ``key`` is the
    dotted key path and ``reason`` the message without its position. For a ``set=`` override the
    file reads ``--set KEY=VALUE``, as on the command line.
    """

    def __init__(self, message: str, file: str = "", line: int = 0, column: int = 0,
                 key: str = "", reason: str = "") -> None:
        super().__init__(message, 2)
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.reason = reason


class UsageError(Error, ValueError):
    """Bad arguments: an unknown workload or parameter, a shape that does not fit, a bad list."""


class TraceError(Error):
    """A bad trace file: the message names the file, the byte offset and the reason."""
