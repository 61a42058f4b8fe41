"""The final-answer check: instructions to the user that came from untrusted content.

An injection need not call a tool: it may only ask the model to tell the user something
("visit this link to verify your account", "call this number"). When a run read untrusted
content, :func:`screen_answer` finds the links, e-mail addresses and phone numbers in the
answer that untrusted sources hold and the user's request and trusted sources do not, and
removes each sentence that carries one of them together with a call to act on it (visit,
click, call, contact, send, verify ...); a contact merely reported (the invitees' addresses
the user asked for) stays. A model that writes such text in its own words,
with nothing copied, is not caught: no tool-call or copy check can see that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lightagent_guardrails.provenance import Provenance

__all__ = ["AnswerScreen", "contacts_in", "links_in", "screen_answer"]

_CONTACT = re.compile(
    r"(?:https?://|www\.)[^\s<>\"')\]]+"  # a link
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an e-mail address
    r"|\+?\d[\d ()-]{7,}\d"  # a phone number
    r"|\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|info|biz|ru|xyz)\b",  # a bare domain
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+|\n")
# What turns a contact into an instruction to the user: a call to act on it.
_ACT = re.compile(
    r"\b(visit|click|go to|open|call|phone|text|contact|write to|e-?mail|reach|send|"
    r"sign in|log ?in|verify|confirm|register|download|install|pay|transfer|follow)\b",
    re.IGNORECASE,
)


def contacts_in(text: str) -> list[str]:
    """The links, e-mail addresses, phone numbers and bare domains in ``text``."""
    return [m.group(0).rstrip(".,;:") for m in _CONTACT.finditer(text)]


def links_in(text: str) -> list[str]:
    """The links and bare domains in ``text`` (no e-mail addresses or phone numbers)."""
    return [c for c in contacts_in(text) if "@" not in c and not c[:1].isdigit() and c[:1] != "+"]


@dataclass(frozen=True)
class AnswerScreen:
    """What :func:`screen_answer` did: the answer to give and what it removed."""

    text: str
    removed: list[str] = field(default_factory=list)


def screen_answer(text: str, provenance: Provenance) -> AnswerScreen:
    """``text`` without the sentences that ask the user to act on a contact only untrusted
    sources hold."""
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
    kept: list[str] = []
    removed: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        carried = [c for c in suspect if c in sentence]
        if carried and _ACT.search(sentence):
            removed.extend(c for c in carried if c not in removed)
        else:
            kept.append(sentence)
    if not removed:
        return AnswerScreen(text)
    note = "[removed: a request to act on a link or contact that came only from untrusted content]"
    cleaned = " ".join(s for s in kept if s.strip()).strip()
    return AnswerScreen(f"{cleaned}\n{note}" if cleaned else note, removed)
