"""OpenAIModel on both supported ``openai`` SDK lines, never touching the SDK's transport.

The workspace installs the newest SDK line (3.x, on ``httpx2``); 2.x (on ``httpx``) is
still supported and checked in a slow test that runs the model tests against it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import openai
import pytest

SDK_MAJOR = int(openai.__version__.split(".")[0])
TESTS = Path(__file__).resolve().parent


@pytest.mark.skipif(SDK_MAJOR < 3, reason="openai 2.x itself runs on httpx")
def test_runs_with_the_legacy_transport_unimportable() -> None:
    # ``sys.modules[name] = None`` makes ``import httpx`` fail: any direct use of the
    # transport by OpenAIModel (timeouts, exception types) would break these calls.
    code = textwrap.dedent(
        """
        import asyncio, sys
        sys.modules["httpx"] = None
        from lightagent_contracts.loopback import LoopbackServer
        from lightagent import ModelError
        from lightagent.models import OpenAIModel
        from lightagent.models.base import ModelRequest

        req = ModelRequest(messages=[{"role": "user", "content": "hi"}])
        with LoopbackServer() as server:
            model = OpenAIModel("m", base_url=server.base_url, api_key="k", timeout=0.5,
                                max_retry=0)
            server.reply("plain", "streamed", "async", "astreamed")
            assert model.complete(req).content == "plain"
            assert list(model.stream(req))[-1].content == "streamed"
            assert asyncio.run(model.acomplete(req)).content == "async"

            async def drain():
                return [item async for item in model.astream(req)][-1]

            assert asyncio.run(drain()).content == "astreamed"
            part = {"id": "c", "choices": [{"index": 0, "delta": {"content": "part"}}]}
            server.reply(LoopbackServer.raw(chunks=[part], done=False, close=True))
            try:
                list(model.stream(req))
            except ModelError as error:
                print(error.code)
        print("httpx" in sys.modules and sys.modules["httpx"] is not None)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["LA-TRUNCATED", "False"]


@pytest.mark.slow
@pytest.mark.venv
def test_the_model_tests_pass_on_openai_2(tmp_path: Path) -> None:
    # openai 2.x and its own transport installed into a folder put in front of the
    # workspace's packages; the model tests then run on that SDK line.
    target = tmp_path / "sdk2"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--target", str(target),
         "openai>=2,<3"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stdout + pip.stderr
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]),
    }
    check = subprocess.run(
        [sys.executable, "-c", "import openai; print(openai.__version__)"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    assert check.stdout.startswith("2."), check.stdout
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider",
         str(TESTS / "test_models_openai.py"), str(TESTS / "test_models_quirks.py")],
        capture_output=True, text=True, env=env, timeout=600,
        cwd=TESTS.parents[2],
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
