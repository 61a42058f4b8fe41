"""The kernel without lightagent-rag-fts: ``retrieval=``, ``retrieval_inject=``,
``agent.retrieval`` and ``SearchToolset`` are ``LA-MISSING-EXTRA`` naming the rag-fts extra;
the retrieval seam and its reference provider stay."""

from __future__ import annotations

import subprocess
import sys

# Makes lightagent-rag-fts look uninstalled: `import lightagent_rag_fts` fails as it would.
HIDE = "import sys; sys.modules['lightagent_rag_fts'] = None\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", HIDE + code], capture_output=True, text=True, timeout=120
    )


def test_retrieval_names_the_extra():
    proc = _run(
        "from lightagent import InMemoryRetrieval, LightAgent, ScriptedModel\n"
        "LightAgent(model=ScriptedModel(), retrieval=None, retrieval_inject=False)\n"
        "tries = [\n"
        "    lambda: LightAgent(model=ScriptedModel(), retrieval=InMemoryRetrieval()),\n"
        "    lambda: LightAgent(model=ScriptedModel(), retrieval='in-memory'),\n"
        "    lambda: LightAgent(model=ScriptedModel(), retrieval_inject=3),\n"
        "    lambda: LightAgent(model=ScriptedModel()).retrieval,\n"
        "    lambda: __import__('lightagent').SearchToolset,\n"
        "]\n"
        "for attempt in tries:\n"
        "    try:\n"
        "        attempt()\n"
        "    except ImportError as exc:\n"
        "        print(exc.code, exc.details['install'], sep='|')\n"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines == ["LA-MISSING-EXTRA|pip install 'lightagent-core[rag-fts]'"] * 5


def test_the_retrieval_seam_stays_in_the_kernel():
    proc = _run(
        "from lightagent import InMemoryRetrieval, RetrievalProtocol\n"
        "from lightagent.retrieval import search_hits\n"
        "kb = InMemoryRetrieval([{'document_id': 'faq', 'content': 'Returns take 30 days.'}])\n"
        "hits = search_hits(kb.search('returns', limit=1))\n"
        "print(isinstance(kb, RetrievalProtocol), hits[0].text)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True Returns take 30 days."
