"""The exceptions of p2p-nertz: one root, a few precise kinds.

Every exception raised on purpose by the library derives from :class:`NertzError`. The split
follows h11: a *local* error means the caller asked for something illegal (an illegal move, bad
notation, invalid rules); a *remote* error means a peer sent something unacceptable. Losing a race
on a foundation is a result, never an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from p2p_nertz.rules.reasons import Illegality

__all__ = [
    "FaceDownError",
    "IllegalMoveError",
    "InvalidRulesError",
    "LocalProtocolError",
    "LogFormatError",
    "NertzError",
    "NotationError",
    "RemoteProtocolError",
    "TransportBrokenError",
    "TransportClosedError",
    "chained",
]

_Error = TypeVar("_Error", bound=BaseException)


def chained(error: _Error, cause: BaseException | None) -> _Error:
    """``error``, its ``__cause__`` set to ``cause``: ``raise chained(error, cause)`` is
    ``raise error from cause``, alike on both builds of the core.

    mypyc compiles a ``raise`` without its ``from`` (issue 18, session 43): compiled, an error
    raised ``from exc`` lost its cause, and one raised ``from None`` showed the error it
    replaced as its context. Setting ``__cause__`` sets ``__suppress_context__`` too, as
    ``from`` does. The compiled modules raise through this (``tests/test_build_refusals.py``
    finds a ``raise ... from`` in them).

    >>> try:
    ...     try:
    ...         {}["key"]
    ...     except KeyError as exc:
    ...         raise chained(ValueError("no key"), exc)
    ... except ValueError as error:
    ...     type(error.__cause__).__name__, error.__suppress_context__
    ('KeyError', True)
    """
    error.__cause__ = cause
    return error


class NertzError(Exception):
    """The root of every exception that p2p-nertz raises on purpose."""


class NotationError(NertzError, ValueError):
    """Raised when text does not parse as the notation of a card, move, claim, tableau or lake.

    ``hint``: what the text should be, in a few words, where the parser says (a front end
    shows it beside the text typed); ``None`` where it does not.
    """

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class FaceDownError(NertzError, LookupError):
    """Raised when code reads a card that lies face down in a view of the table
    (:meth:`~p2p_nertz.rules.Table.face_up`): a bot that peeks is a bug, not a strategy."""


class IllegalMoveError(NertzError, ValueError):
    """Raised when a move is not legal in the current state; the state is left unchanged.

    ``reason`` says why as a value (a :class:`~p2p_nertz.rules.reasons.Illegality`), where the
    rules engine refused the move; ``None`` where nothing gave one.
    """

    def __init__(self, message: str, *, reason: Illegality | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class InvalidRulesError(NertzError, ValueError):
    """Raised when a :class:`~p2p_nertz.rules.Rules` value or a table setup is inconsistent."""


class LocalProtocolError(NertzError):
    """Raised when the local side asks the protocol core for something it may not do now."""


class RemoteProtocolError(NertzError):
    """Describes a message from a peer that was rejected (malformed, forged, out of place).

    The receive path of the protocol core never raises this: it reports it as an event and
    changes nothing. It is an exception class so that callers who prefer raising can.
    """


class TransportClosedError(NertzError):
    """Raised when a socket or endpoint is used after it was closed on purpose."""


class TransportBrokenError(NertzError):
    """Raised when a socket or endpoint failed underneath (the network, not the caller)."""


class LogFormatError(NertzError, ValueError):
    """Raised when bytes are not a valid p2p-nertz log file, or a value cannot be written to one.

    ``offset`` is the byte offset in the file where the damage starts, when there is one.
    """

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset
