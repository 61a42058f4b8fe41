"""Text handling shared by both backends: chunking, index text and query terms.

Neither backend ever sees user text as query syntax: a query is cut into word terms
here, and each term reaches the database as a quoted literal. CJK text has no spaces
between words, so runs of Han, Kana and Hangul characters are indexed and searched as
overlapping character bigrams (ICU-free segmentation; most Chinese words are two
characters long). A one-character CJK query becomes a prefix search over the bigrams.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["Term", "chunk_text", "index_text", "query_terms"]

# Han (incl. extension A and compatibility), Hiragana, Katakana, Hangul syllables and jamo.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
# A word: letters and digits, no underscore (both backends treat it as a separator).
_WORD = re.compile(r"[^\W_]+")
_PARAGRAPH = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_SENTENCE = re.compile(
    r"[.!?;:\u3002\uff01\uff1f\uff1b][)\]\"'\u300d\u300f\u201d\u2019]*(?:\s+|(?=[" + _CJK + "]))"
)
_SPACE = re.compile(r"\s+")

#: At most this many distinct terms of a query are searched (a 5,000-character query stays cheap).
MAX_TERMS = 32

#: Words at least this long are also searched as prefixes (``query_terms(prefixes=True)``).
MIN_PREFIX = 4

#: A query term: the literal text and whether it is a prefix (a lone CJK character).
Term = tuple[str, bool]


def _split(word: str) -> list[Term]:
    """``word`` as terms: latin runs whole, CJK runs as bigrams (one char: a prefix)."""
    out: list[Term] = []
    pos = 0
    for match in _CJK_RUN.finditer(word):
        if match.start() > pos:
            out.append((word[pos : match.start()], False))
        run = match.group()
        if len(run) == 1:
            out.append((run, True))
        else:
            out.extend((run[i : i + 2], False) for i in range(len(run) - 1))
        pos = match.end()
    if pos < len(word):
        out.append((word[pos:], False))
    return out


def index_text(text: str) -> str:
    """What the full-text index stores for ``text``: its words, CJK runs as bigrams."""
    words = _WORD.findall(text or "")
    if not _CJK_RUN.search(text or ""):
        return " ".join(words)  # the common case, in one pass of C code
    parts: list[str] = []
    for word in words:
        if _CJK_RUN.search(word):
            parts.extend(term for term, _ in _split(word))
        else:
            parts.append(word)
    return " ".join(parts)


def query_terms(query: str, *, prefixes: bool = False) -> list[Term]:
    """The distinct word terms of ``query`` (casefolded, in order, at most :data:`MAX_TERMS`).

    With ``prefixes``, each non-CJK word of :data:`MIN_PREFIX` or more characters is also
    searched as a prefix: without stemming, ``deploy`` then finds ``deployment``, while
    the exact word, matched twice, still ranks first.
    """
    seen: set[Term] = set()
    out: list[Term] = []
    for word in _WORD.findall((query or "").replace("\x00", " ")):
        for term in _split(word.casefold()):
            if term not in seen:
                seen.add(term)
                out.append(term)
                if len(out) >= MAX_TERMS:
                    break
        if len(out) >= MAX_TERMS:
            break
    if prefixes:
        out += [
            (text, True)
            for text, prefix in list(out)
            if not prefix and len(text) >= MIN_PREFIX and not _CJK_RUN.search(text)
        ]
    return out


def _positions(pattern: re.Pattern[str], text: str) -> list[int]:
    return [m.end() for m in pattern.finditer(text)]


def chunk_text(text: str, size: int, overlap: int) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters, each sharing about ``overlap``
    characters with the one before.

    A piece ends at the last paragraph break in its second half, else the last sentence
    end, else the last space, else at ``size``; the next one starts at a sentence (or
    word) boundary inside the overlap, so pieces rarely cut a sentence in two.
    """
    text = text or ""
    n = len(text)
    if n <= size:
        return [text.strip()] if text.strip() else []
    paragraphs = _positions(_PARAGRAPH, text)
    sentences = sorted(set(_positions(_SENTENCE, text)) | set(paragraphs))
    spaces = _positions(_SPACE, text)
    chunks: list[str] = []
    start = 0
    while start < n:
        end = n
        if n - start > size:
            low, high = start + size // 2, start + size
            end = high
            for marks in (paragraphs, sentences, spaces):
                i = bisect.bisect_right(marks, high) - 1
                if i >= 0 and marks[i] > low:
                    end = marks[i]
                    break
        piece = text[start:end].strip()
        if piece:
            chunks.append(piece)
        if end >= n:
            break
        nxt = max(end - overlap, start + 1)
        chosen = nxt
        if overlap > 0:
            for marks in (sentences, spaces):
                i = bisect.bisect_left(marks, nxt)
                if i < len(marks) and marks[i] < end:
                    chosen = marks[i]
                    break
        else:
            chosen = end
        start = chosen
    return chunks
