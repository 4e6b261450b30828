"""Lex kernel source once with pygments and return per-line ``(start, length, style_key)`` spans.

The code view's syntax highlighter then only looks up the spans of the line it is
asked to paint, instead of re-lexing the document for every block. Results are
cached per (language, source), so switching back to a kernel costs nothing.
"""

from __future__ import annotations

from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import CppLexer, PythonLexer
from pygments.token import Comment, Keyword, Literal, Name, Operator, String

Span = tuple[int, int, str]  # start column, length (both in str characters), style key
LineSpans = tuple[Span, ...]

# The style keys a theme has to provide a format for.
STYLE_KEYS = (
    "keyword",
    "type",
    "builtin",
    "string",
    "number",
    "comment",
    "preproc",
    "decorator",
    "name.function",
    "name.class",
    "operator",
)

# Most specific first: a token type maps to the first entry it is a subtype of.
_TOKEN_KEYS = (
    (Keyword.Type, "type"),
    (Keyword, "keyword"),
    (Operator.Word, "keyword"),  # Python's `and`, `not`, `in`
    (Operator, "operator"),
    (Name.Builtin.Pseudo, "builtin"),  # self, None-like names
    (Name.Builtin, "builtin"),
    (Name.Decorator, "decorator"),
    (Name.Function, "name.function"),
    (Name.Class, "name.class"),
    (String, "string"),
    (Literal.Number, "number"),
    (Comment.Preproc, "preproc"),
    (Comment.PreprocFile, "preproc"),
    (Comment, "comment"),
)

LANGUAGES = ("python", "cpp", "text")


def language_for(backend: str, source: str = "") -> str:
    """The language a kernel's source is written in, from its backend.

    Triton kernels are Python functions and extern kernels are a one-line Python
    call; C++ kernels (``cpp_fused_*``) are C++. A source that is plainly C++ wins
    over an unknown backend name.
    """
    if backend == "cpp" or source.lstrip().startswith("#include") or 'extern "C"' in source:
        return "cpp"
    return "python"


def style_key(token_type) -> str | None:
    """The style key of a pygments token type, or None for unstyled text."""
    for parent, key in _TOKEN_KEYS:
        if token_type in parent:
            return key
    return None


@lru_cache(maxsize=512)
def line_spans(source: str, language: str) -> tuple[LineSpans, ...]:
    """Styled spans of every line of ``source`` (lines split on ``\\n``).

    Parameters
    ----------
    source
        The whole text, lexed in one pass so multi-line strings and comments
        are styled correctly on every line they cover.
    language
        One of ``LANGUAGES``; ``"text"`` gives no spans.

    Returns
    -------
    One tuple of spans per line (``len == source.count("\\n") + 1``); adjacent
    tokens with the same key are merged into one span.
    """
    lines: list[list[Span]] = [[] for _ in range(source.count("\n") + 1)]
    lexer = _lexer(language)
    if lexer is None:
        return tuple(() for _ in lines)
    row, col, key = 0, 0, None
    for token_type, text in lexer.get_tokens(source):
        key = _continued_key(key, token_type, text)
        for i, piece in enumerate(text.split("\n")):
            if i:
                row, col = row + 1, 0
            if key is not None and piece and row < len(lines):
                _append(lines[row], (col, len(piece), key))
            col += len(piece)
    return tuple(tuple(spans) for spans in lines)


def _continued_key(previous: str | None, token_type, text: str) -> str | None:
    """The key of a token, keeping dotted decorators (``@triton.jit``) in one style."""
    if previous == "decorator" and (text == "." or token_type is Name):
        return "decorator"
    return style_key(token_type)


def _append(spans: list[Span], span: Span) -> None:
    """Add ``span``, merging it into the previous one when they touch and share a key."""
    if spans:
        start, length, key = spans[-1]
        if key == span[2] and start + length == span[0]:
            spans[-1] = (start, length + span[1], key)
            return
    spans.append(span)


def _lexer(language: str) -> Lexer | None:
    # stripnl/ensurenl off: the token stream must match the source character for
    # character, or the columns drift from what the editor shows.
    options = {"stripnl": False, "stripall": False, "ensurenl": False}
    if language == "python":
        return PythonLexer(**options)
    if language == "cpp":
        return CppLexer(**options)
    return None

