"""The drop-guard: a contract subclass cannot silently drop a standard test."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from lightagent_contracts.suites import DroppedContractTestError
from lightagent_contracts.suites.memory import MemoryContract


def test_pass_only_override_is_refused():
    with pytest.raises(DroppedContractTestError, match="test_users_are_isolated"):

        class TestLeaky(MemoryContract):
            def test_users_are_isolated(self, make_memory):
                pass


def test_docstring_or_ellipsis_only_override_is_refused():
    with pytest.raises(DroppedContractTestError):

        class TestLazy(MemoryContract):
            def test_users_are_isolated(self, make_memory):
                """Not applicable."""
                ...


def test_non_function_override_is_refused():
    with pytest.raises(DroppedContractTestError, match="replaced by a NoneType"):

        class TestNone(MemoryContract):
            test_users_are_isolated = None


def test_skip_without_xfail_is_refused():
    with pytest.raises(DroppedContractTestError, match="skipped"):

        class TestSkipped(MemoryContract):
            @pytest.mark.skip(reason="later")
            def test_users_are_isolated(self, make_memory):
                assert make_memory


def test_xfail_with_a_reason_is_allowed_and_real_overrides_are_allowed():
    class TestHonest(MemoryContract):
        @pytest.mark.xfail(reason="this backend shares one namespace", strict=True)
        def test_users_are_isolated(self, make_memory):
            pass

        def test_stored_memory_is_retrieved(self, make_memory):
            assert make_memory() is not None  # a real, different body

    assert TestHonest.__test__ is True


def test_xfail_without_a_reason_is_refused():
    with pytest.raises(DroppedContractTestError):

        class TestNoReason(MemoryContract):
            @pytest.mark.xfail
            def test_users_are_isolated(self, make_memory):
                pass


def test_suites_themselves_are_not_collected():
    assert MemoryContract.__test__ is False


def test_a_dropping_subclass_fails_the_pytest_run(tmp_path):
    (tmp_path / "test_drop.py").write_text(
        textwrap.dedent(
            """
            import pytest
            from lightagent_contracts.suites.memory import MemoryContract

            class TestDrops(MemoryContract):
                @pytest.fixture
                def make_memory(self):
                    return dict

                def test_users_are_isolated(self, make_memory):
                    pass
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert "DroppedContractTestError" in proc.stdout


def test_uncollectable_subclass_name_is_refused():
    # This module is a test module, so pytest would silently skip a non-Test* class.
    with pytest.raises(DroppedContractTestError, match="will not collect"):

        class MemoryChecks(MemoryContract):
            pass

    class _SharedBase(MemoryContract):  # a helper base is fine
        pass

    class TestFromBase(_SharedBase):
        pass

    assert TestFromBase.__test__ is True
