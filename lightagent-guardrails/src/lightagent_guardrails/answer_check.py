"""The final-answer check: instructions to the user that came from untrusted content.

An injection need not call a tool: it may only ask the model to tell the user something
("visit this link to verify your account", "call this number"). When a run read untrusted
content, :func:`screen_answer` finds the links, e-mail addresses and phone numbers in the
answer that untrusted sources hold and the user's request and trusted sources do not, and
removes the sentence that carries each. A model that writes such text in its own words,
with nothing copied, is not caught: no tool-call or copy check can see that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lightagent_guardrails.provenance import Provenance

__all__ = ["AnswerScreen", "contacts_in", "screen_answer"]

_CONTACT = re.compile(
    r"(?:https?://|www\.)[^\s<>\"')\]]+"  # a link
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an e-mail address
    r"|\+?\d[\d ()-]{7,}\d"  # a phone number
    r"|\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|info|biz|ru|xyz)\b",  # a bare domain
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+|\n")


def contacts_in(text: str) -> list[str]:
    """The links, e-mail addresses, phone numbers and bare domains in ``text``."""
    return [m.group(0).rstrip(".,;:") for m in _CONTACT.finditer(text)]


@dataclass(frozen=True)
class AnswerScreen:
    """What :func:`screen_answer` did: the answer to give and what it removed."""

    text: str
    removed: list[str] = field(default_factory=list)


def screen_answer(text: str, provenance: Provenance) -> AnswerScreen:
    """``text`` without the sentences carrying a contact only untrusted sources hold."""
    if not provenance.read_untrusted():
        return AnswerScreen(text)
    found = contacts_in(text)
    suspect = [
        c
        for c in found
        if provenance.holds([c], trusted=False) and not provenance.holds([c], trusted=True)
    ]
    if not suspect:
        return AnswerScreen(text)
    kept = [
        sentence
        for sentence in _SENTENCE_END.split(text)
        if not any(c in sentence for c in suspect)
    ]
    note = "[removed: a link or contact that came only from untrusted content]"
    cleaned = " ".join(s for s in kept if s.strip()).strip()
    return AnswerScreen(f"{cleaned}\n{note}" if cleaned else note, suspect)
