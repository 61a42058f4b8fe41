"""What the SQL review store and token ledger need installed: SQLAlchemy, named by its extra."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_the_sql_stores_name_their_extra_without_sqlalchemy(tmp_path: Path) -> None:
    # ``sys.modules[name] = None`` makes ``import name`` fail as if it were not installed.
    code = """
        import sys
        sys.modules["sqlalchemy"] = None
        from lightagent import LightAgentError
        from lightagent_review import SqlReviewStore, SqlTokenLedger

        for build in (lambda: SqlReviewStore("sqlite:///r.db"),
                      lambda: SqlTokenLedger("sqlite:///t.db")):
            try:
                build()
            except LightAgentError as error:
                print(error.code, error.hint)
        """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == [
        "LA-MISSING-EXTRA pip install 'lightagent-core[sql]'",
        "LA-MISSING-EXTRA pip install 'lightagent-core[sql]'",
    ]
