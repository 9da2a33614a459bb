r"""Text safe to show: every non-printable character written as its escape.

The one rule shared by the report's renderers and the plots: a character Python does not
consider printable (control characters such as the ANSI escape ``\x1b``, bidirectional overrides,
zero-width and format characters, line separators) is written ``\xNN``, ``\uNNNN`` or
``\UNNNNNNNN``, so no text from the data can move a terminal's cursor, recolour it, reorder a
line or hide part of a label.
"""

from __future__ import annotations

__all__ = ["visible"]


def _escape_char(c: str) -> str:
    code = ord(c)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: str) -> str:
    r"""``text`` with every non-printable character written as its escape.

    Examples
    --------
    >>> visible("a\x1b[31mb\u202ec")
    'a\\x1b[31mb\\u202ec'
    >>> visible("ok é 中")
    'ok é 中'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape_char(c) for c in text)
