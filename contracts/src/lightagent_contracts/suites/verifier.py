"""The LightDAG verifier contract suite (``key``, ``version``, ``async verify(request)``).

Subclass :class:`VerifierContract` and provide ``make_verifier`` (a zero-argument
factory) and ``verification_cases``: a list of ``(request, expected_verdict)`` where the
verdict is ``"pass"``, ``"fail"``, ``"inconclusive"`` or ``"error"``. Include at least
one passing and one failing case.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from lightagent_contracts.suites._guard import ContractSuite

__all__ = ["VerifierContract"]

VERDICTS = {"pass", "fail", "inconclusive", "error"}
Cases = list[tuple[Any, str]]


def _verdict(report: Any) -> str:
    value = getattr(report, "verdict", None)
    return str(getattr(value, "value", value))


class VerifierContract(ContractSuite):
    """Behaviour every verifier shows. Provide ``make_verifier`` and ``verification_cases``."""

    _contract_suite = True
    __test__ = False

    def test_has_key_version_and_async_verify(self, make_verifier: Callable[[], Any]) -> None:
        verifier = make_verifier()
        assert isinstance(verifier.key, str) and verifier.key
        assert isinstance(verifier.version, str) and verifier.version
        assert inspect.iscoroutinefunction(verifier.verify)

    def test_cases_cover_pass_and_fail(self, verification_cases: Cases) -> None:
        verdicts = {v for _, v in verification_cases}
        assert {"pass", "fail"} <= verdicts, "give at least one passing and one failing case"
        assert verdicts <= VERDICTS

    def test_verdicts_match_and_reports_name_the_verifier(
        self, make_verifier: Callable[[], Any], verification_cases: Cases
    ) -> None:
        verifier = make_verifier()
        for request, expected in verification_cases:
            report = asyncio.run(verifier.verify(request))
            assert _verdict(report) == expected, (request, report)
            assert report.verifier_key == verifier.key
            assert report.kind == request.kind

    def test_verification_is_deterministic_and_concurrency_safe(
        self, make_verifier: Callable[[], Any], verification_cases: Cases
    ) -> None:
        verifier = make_verifier()

        async def all_at_once() -> list[str]:
            reports = await asyncio.gather(*(verifier.verify(r) for r, _ in verification_cases * 3))
            return [_verdict(r) for r in reports]

        expected = [v for _, v in verification_cases] * 3
        assert asyncio.run(all_at_once()) == expected
