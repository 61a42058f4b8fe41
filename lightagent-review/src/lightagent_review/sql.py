"""``SqlReviewStore``: approval requests and decisions in SQL (SQLite file or PostgreSQL).

SQLAlchemy (the ``sql`` extra: ``pip install 'lightagent-core[sql]'``) is imported when
a store is built, never when ``lightagent`` is imported. A
decision row's primary key makes deciding twice impossible; consuming is a conditional
``UPDATE … WHERE consumed_at IS NULL``, so across any number of processes exactly one
consumer wins.
"""

from __future__ import annotations

import functools
import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lightagent.errors import ApprovalError, ConfigurationError, StorageError

from lightagent_review.models import ApprovalDecision, ApprovalRequest, HumanFeedback

__all__ = ["SqlReviewStore"]


def _storage_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a database failure inside ``method`` into a typed ``StorageError``."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            if type(exc).__module__.split(".")[0] != "sqlalchemy":
                raise
            raise StorageError(
                "LA-STORAGE-UNAVAILABLE" if "Operational" in type(exc).__name__ else "LA-STORAGE",
                f"the review store failed: {type(exc).__name__}",
            ) from exc

    return wrapper


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class SqlReviewStore:
    """A durable review store; ``url`` is a SQLAlchemy URL or an Engine."""

    def __init__(self, url: Any, *, prefix: str = "la_review") -> None:
        from lightagent.extras import require

        sa = require("sqlalchemy", "sql", "SqlReviewStore")
        if isinstance(url, str):
            if not url or "://" not in url:
                raise ConfigurationError(
                    "LA-CONFIG",
                    f"not a database URL: {url!r}",
                    hint="Use sqlite:///path/to/reviews.sqlite3 or postgresql+psycopg://host/db.",
                )
            kwargs: dict[str, Any] = {"pool_pre_ping": True}
            if url.startswith("sqlite"):
                kwargs = {"connect_args": {"timeout": 30}}
            self.engine = sa.create_engine(url, **kwargs)
        else:
            self.engine = url
        meta = sa.MetaData()
        self.requests = sa.Table(
            f"{prefix}_requests",
            meta,
            sa.Column("request_id", sa.String(64), primary_key=True),
            sa.Column("batch_id", sa.String(64), index=True),
            sa.Column("trace_id", sa.String(128), index=True),
            sa.Column("created_at", sa.Float, nullable=False),
            sa.Column("payload", sa.Text, nullable=False),
        )
        self.decisions = sa.Table(
            f"{prefix}_decisions",
            meta,
            sa.Column("request_id", sa.String(64), primary_key=True),
            sa.Column("decided_at", sa.Float, nullable=False),
            sa.Column("consumed_at", sa.Float, nullable=True),
            sa.Column("payload", sa.Text, nullable=False),
        )
        self.feedback = sa.Table(
            f"{prefix}_feedback",
            meta,
            sa.Column("feedback_id", sa.String(64), primary_key=True),
            sa.Column("trace_id", sa.String(128), index=True),
            sa.Column("created_at", sa.Float, nullable=False),
            sa.Column("payload", sa.Text, nullable=False),
        )
        try:
            meta.create_all(self.engine)
        except sa.exc.SQLAlchemyError as exc:
            raise StorageError(
                "LA-STORAGE-UNAVAILABLE", f"cannot prepare the review store: {type(exc).__name__}"
            ) from exc

    def _begin(self) -> Any:
        return self.engine.begin()

    def create_request(self, request: ApprovalRequest) -> ApprovalRequest:
        """Store a pending request (idempotent by request id)."""
        self.create_batch([request], _keep_batch=True)
        return request

    @_storage_errors
    def create_batch(
        self, requests: Iterable[ApprovalRequest], *, _keep_batch: bool = False
    ) -> list[ApprovalRequest]:
        """Store several requests in one transaction under one batch id."""
        import sqlalchemy as sa

        items = list(requests)
        if not _keep_batch and items:
            batch = items[0].batch_id or uuid.uuid4().hex
            for request in items:
                request.batch_id = request.batch_id or batch
        try:
            with self._begin() as conn:
                for request in items:
                    exists = conn.execute(
                        sa.select(self.requests.c.request_id).where(
                            self.requests.c.request_id == request.request_id
                        )
                    ).first()
                    if exists is None:
                        conn.execute(
                            self.requests.insert().values(
                                request_id=request.request_id,
                                batch_id=request.batch_id,
                                trace_id=request.trace_id,
                                created_at=request.created_at,
                                payload=_dump(request.to_dict()),
                            )
                        )
        except sa.exc.SQLAlchemyError as exc:
            raise StorageError(
                "LA-STORAGE", f"cannot store approval requests: {type(exc).__name__}"
            ) from exc
        return items

    @_storage_errors
    def get_request(self, request_id: str) -> ApprovalRequest | None:
        """The request, or None."""
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(self.requests.c.payload).where(self.requests.c.request_id == request_id)
            ).first()
        return ApprovalRequest.from_dict(json.loads(row[0])) if row else None

    @_storage_errors
    def resolve(self, request_id: str, decision: ApprovalDecision) -> ApprovalDecision:
        """Record the decision; a second decision for the same request is refused."""
        import sqlalchemy as sa

        if not decision.decided:
            raise ApprovalError("LA-APPROVAL", "a pending decision cannot resolve a request")
        request = self.get_request(request_id)
        if request is None:
            raise ApprovalError(
                "LA-APPROVAL",
                f"no approval request {request_id!r}",
                details={"request_id": request_id},
            )
        if decision.action not in request.allowed_decisions:
            raise ApprovalError(
                "LA-APPROVAL",
                f"decision {decision.action!r} is not allowed for this request",
                details={"allowed": list(request.allowed_decisions)},
            )
        decision.request_id = request_id
        try:
            with self._begin() as conn:
                conn.execute(
                    self.decisions.insert().values(
                        request_id=request_id,
                        decided_at=decision.decided_at,
                        consumed_at=None,
                        payload=_dump(decision.to_dict()),
                    )
                )
        except sa.exc.IntegrityError:
            raise ApprovalError(
                "LA-APPROVAL",
                f"request {request_id!r} is already decided",
                details={"request_id": request_id},
            ) from None
        return decision

    @_storage_errors
    def resolve_batch(
        self,
        decisions: Mapping[str, ApprovalDecision] | Iterable[str],
        decision: ApprovalDecision | None = None,
    ) -> list[ApprovalDecision]:
        """Resolve many: a mapping id -> decision, or ids / batch ids plus one decision."""
        import sqlalchemy as sa

        if isinstance(decisions, Mapping):
            pairs = list(decisions.items())
        else:
            if decision is None:
                raise ApprovalError("LA-APPROVAL", "resolve_batch(ids) needs decision=")
            ids: list[str] = []
            with self.engine.connect() as conn:
                for key in decisions:
                    rows = conn.execute(
                        sa.select(self.requests.c.request_id).where(self.requests.c.batch_id == key)
                    ).all()
                    ids.extend([r[0] for r in rows] or [key])
            pairs = [
                (rid, ApprovalDecision.from_dict({**decision.to_dict(), "request_id": None}))
                for rid in ids
            ]
        return [self.resolve(rid, d) for rid, d in pairs]

    @_storage_errors
    def get_decision(self, request_id: str) -> ApprovalDecision | None:
        """The recorded decision, or None while pending."""
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(self.decisions.c.payload).where(self.decisions.c.request_id == request_id)
            ).first()
        return ApprovalDecision.from_dict(json.loads(row[0])) if row else None

    @_storage_errors
    def is_consumed(self, request_id: str) -> bool:
        """Whether the decision was already used."""
        import sqlalchemy as sa

        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(self.decisions.c.consumed_at).where(
                    self.decisions.c.request_id == request_id
                )
            ).first()
        return bool(row and row[0] is not None)

    @_storage_errors
    def consume(self, request_id: str) -> ApprovalDecision:
        """Use the decision exactly once (conditional update); typed errors otherwise."""
        import sqlalchemy as sa

        with self._begin() as conn:
            result = conn.execute(
                self.decisions.update()
                .where(self.decisions.c.request_id == request_id)
                .where(self.decisions.c.consumed_at.is_(None))
                .values(consumed_at=time.time())
            )
            row = conn.execute(
                sa.select(self.decisions.c.payload).where(self.decisions.c.request_id == request_id)
            ).first()
        if row is None:
            raise ApprovalError(
                "LA-APPROVAL-PENDING",
                f"request {request_id!r} has no decision yet",
                details={"request_id": request_id},
            )
        if result.rowcount != 1:
            raise ApprovalError(
                "LA-APPROVAL-REPLAY",
                f"the decision for {request_id!r} was already used",
                details={"request_id": request_id},
            )
        return ApprovalDecision.from_dict(json.loads(row[0]))

    @_storage_errors
    def list_pending(self) -> list[ApprovalRequest]:
        """Requests without a decision, oldest first."""
        import sqlalchemy as sa

        query = (
            sa.select(self.requests.c.payload)
            .where(~sa.exists().where(self.decisions.c.request_id == self.requests.c.request_id))
            .order_by(self.requests.c.created_at)
        )
        with self.engine.connect() as conn:
            return [ApprovalRequest.from_dict(json.loads(r[0])) for r in conn.execute(query)]

    @_storage_errors
    def add_feedback(self, feedback: HumanFeedback) -> HumanFeedback:
        """Keep a piece of human feedback."""
        with self._begin() as conn:
            conn.execute(
                self.feedback.insert().values(
                    feedback_id=feedback.feedback_id,
                    trace_id=feedback.trace_id,
                    created_at=feedback.created_at,
                    payload=_dump(feedback.to_dict()),
                )
            )
        return feedback

    @_storage_errors
    def list_feedback(self, trace_id: str | None = None) -> list[HumanFeedback]:
        """Feedback, optionally for one trace, oldest first."""
        import sqlalchemy as sa

        query = sa.select(self.feedback.c.payload).order_by(self.feedback.c.created_at)
        if trace_id is not None:
            query = query.where(self.feedback.c.trace_id == trace_id)
        with self.engine.connect() as conn:
            return [HumanFeedback.from_dict(json.loads(r[0])) for r in conn.execute(query)]

    def close(self) -> None:
        """Dispose of the connection pool."""
        self.engine.dispose()
