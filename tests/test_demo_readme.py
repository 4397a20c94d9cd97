"""The session the README shows is the one `make demo` prints (ids, scores and paths aside)."""

from __future__ import annotations

import re
from pathlib import Path

import anyio

from memory_daemon.client.launcher import temporary_daemon
from memory_daemon.demo import session

README = Path(__file__).resolve().parent.parent / "README.md"


def _shape(line: str) -> str:
    """A line with what changes from run to run (memory ids, scores) replaced by placeholders."""
    return re.sub(r"\b\d\.\d\d\b", "<score>", re.sub(r"mem_[0-9a-f]{16}", "<id>", line.rstrip()))


def test_the_readme_shows_what_the_demo_session_prints(capfd, monkeypatch):
    monkeypatch.setattr(session, "graph_story", _skip_graph_story)  # its own lines are not in the README excerpt
    with temporary_daemon() as daemon:
        anyio.run(session._session, daemon)
    printed = [_shape(line) for line in capfd.readouterr().out.splitlines()]
    excerpt = README.read_text(encoding="utf-8").split("`make demo` prints a session like this one:\n\n```\n", 1)[1]
    shown = [_shape(line) for line in excerpt.split("```", 1)[0].splitlines()]
    start = printed.index(shown[0])
    assert printed[start:start + len(shown)] == shown


async def _skip_graph_story(daemon) -> None:
    return None
