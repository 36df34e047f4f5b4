"""The words of a refusal with its code (:class:`Reason`): left interpreted.

This module is not compiled with the core (mypyc refuses a subclass of ``str``: "Inheriting
from most builtin types is unimplemented"), so that ``protocol/fold_values.py``, which
re-exports :class:`Reason`, and every other module of ``protocol/`` can be (docs/latency.md,
session 42).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from p2p_nertz.protocol.fold_values import RefusalCode

__all__ = ["Reason"]


class Reason(str):
    """The words of a refusal (the string itself, for people) with its :class:`RefusalCode`
    (``code``, for machines).

    A string, so that a :class:`Violation` reads, compares and prints exactly as its text: the
    peer's effects carry violations (:class:`Refused`), and what a front end sees of them does
    not change with the code riding along. Read ``code``, never the words.

    >>> from p2p_nertz.protocol.fold_values import RefusalCode
    >>> r = Reason(RefusalCode.REPEATED, "a second nonce")
    >>> r.code, str(r)
    (<RefusalCode.REPEATED: 'repeated'>, 'a second nonce')
    """

    code: RefusalCode

    def __new__(cls, code: RefusalCode, text: str) -> Reason:
        self = super().__new__(cls, text)
        self.code = code
        return self

    def __reduce__(self) -> tuple[type[Reason], tuple[RefusalCode, str]]:
        return (Reason, (self.code, str(self)))
