"""ProgressLine: drawn on a terminal (rich, or a plain line), silent otherwise."""

from __future__ import annotations

import io

import pytest
from lightagent import ProgressLine
from lightagent.progress import progress_enabled


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_off_a_terminal(monkeypatch) -> None:
    monkeypatch.delenv("LIGHTAGENT_PROGRESS", raising=False)
    stream = io.StringIO()
    with ProgressLine("work", total=2, stream=stream) as line:
        line.advance(note="one")
        line.advance(note="two")
    assert stream.getvalue() == "" and not line.enabled


def test_drawn_with_rich_on_a_terminal(monkeypatch) -> None:
    monkeypatch.delenv("LIGHTAGENT_PROGRESS", raising=False)
    stream = _Tty()
    with ProgressLine("work", total=2, stream=stream) as line:
        line.advance(note="first")
        line.advance(note="second")
    out = stream.getvalue()
    assert "work" in out and "2/2" in out and "second" in out and "\x1b[" in out


def test_plain_line_without_rich(monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_rich(name, *args, **kwargs):
        if name.startswith("rich"):
            raise ImportError("rich is not installed")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_rich)
    stream = io.StringIO()
    with ProgressLine("work", total=3, stream=stream, enabled=True) as line:
        line.update(completed=2, note="almost")
    assert "\rwork: 2/3" in stream.getvalue() and stream.getvalue().endswith("\n")


@pytest.mark.parametrize(("env", "expected"), [("1", True), ("0", False), (None, False)])
def test_the_environment_decides(monkeypatch, env, expected) -> None:
    if env is None:
        monkeypatch.delenv("LIGHTAGENT_PROGRESS", raising=False)
    else:
        monkeypatch.setenv("LIGHTAGENT_PROGRESS", env)
    assert progress_enabled(io.StringIO()) is expected
    assert progress_enabled(io.StringIO(), enabled=True) is True
