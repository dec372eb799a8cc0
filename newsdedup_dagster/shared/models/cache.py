"""Reuse of model results: a rerun pays nothing twice.

A model answer depends on exactly what the request contains: the task, the model, the prompt
(its version and the system text), the target language(s) and the input material (for a score,
the story's articles as the prompt presents them: counts, languages, times, titles and leads; for a
translation, the fields and the source language; for a narrative, the timeline and the previous
narrative). `cache_key` hashes all of these; `LLMClient.complete_json` looks the key up before
calling and stores every valid answer under it (table ``llm_results``, not tied to any story row,
so it survives rebuilding stories: ``later_partitions=reset``, a backfill, ``make demo`` twice).

A permanent failure (output still invalid after every attempt, or the request refused) is kept
too: the same request on a rebuild ends the same way (-1) without paying for the attempts again.

A hit is re-validated with the caller's validator (a validator made stricter since turns an old
answer into a miss, not into bad data), recorded in ``llm_calls`` as ``cached = true`` at zero
cost, and counted as ``reused`` in the asset metadata. An answer is stored on its own autocommit
connection as soon as it is valid, before the caller commits anything: a run killed between the
answer and the commit pays nothing again on its rerun.

Bump a task's prompt version (the ``*_PROMPT_VERSION`` constants) when the meaning of an answer
changes without its request text changing (e.g. a different reading of the scores).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

import psycopg
from psycopg.types.json import Jsonb

from newsdedup_dagster.shared import db


@dataclass(frozen=True)
class CacheKey:
    key: str
    task: str
    model: str
    prompt_version: str
    target_langs: str
    input_hash: str


def cache_key(task: str, model: str, prompt_version: str, system: str, user: str,
              target_langs: Sequence[str] = (), input_material: str | None = None) -> CacheKey:
    """The key of one request. ``input_hash`` covers the system text and the input: the user text
    as sent, or ``input_material`` when the caller has an order-free description of what the
    user text is made from (scoring: the story's articles as a sorted set, so a rebuilt story
    whose representative, and so whose article order, changed still finds its answer)."""
    langs = ",".join(target_langs)
    material_text = user if input_material is None else input_material
    input_hash = hashlib.sha256(f"{system}\x00{material_text}".encode("utf-8", "surrogatepass")).hexdigest()
    material = json.dumps([task, model, prompt_version, langs, input_hash], ensure_ascii=True)
    return CacheKey(hashlib.sha256(material.encode()).hexdigest(), task, model, prompt_version, langs, input_hash)


@dataclass
class CachedAnswer:
    data: dict | None         # the model's parsed (and cleaned) JSON reply; None for a failure
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: Decimal = Decimal(0)   # what the original call cost (the saving of each reuse)
    status: str = "ok"        # ok | invalid (output invalid after every attempt) | rejected (HTTP 400/413/422)
    error: str | None = None
    attempts: int = 1


class ResultCache(Protocol):
    def get(self, key: CacheKey) -> CachedAnswer | None: ...
    def put(self, key: CacheKey, answer: CachedAnswer) -> None: ...


class CallRecordRefused(Exception):
    """put_with_call stored the answer, but the database refused the call's llm_calls row."""


# Waits before each try of a cache read or write whose connection the server dropped (7.5 s in all).
RECONNECT_WAITS_S = (0.0, 0.5, 1.0, 2.0, 4.0)


class PostgresResultCache:
    """``llm_results`` on its own autocommit connection (thread-safe: one connection behind a lock)."""

    def __init__(self, database_url: str):
        self.database_url = database_url
        self._conn = None
        self._lock = threading.Lock()

    def _connection(self):
        if self._conn is None or self._conn.closed:
            self._conn = db.connect(self.database_url, autocommit=True)
        return self._conn

    def _with_connection(self, work):
        """`work(connection)` under the lock. A connection the server dropped (a restart, a failover)
        is replaced and the work tried again for a few seconds: a paid answer written during a short
        outage of the database is then stored once it is back, not lost while the run goes on."""
        with self._lock:
            for wait in RECONNECT_WAITS_S:
                time.sleep(wait)
                try:
                    return work(self._connection())
                except psycopg.OperationalError:
                    if self._conn is not None and not (self._conn.broken or self._conn.closed):
                        raise
                    self._conn = None
            return work(self._connection())

    def get(self, key: CacheKey) -> CachedAnswer | None:
        row = self._with_connection(
            lambda conn: conn.execute(db.load_sql("llm_result_get"), {"key": key.key}).fetchone())
        if row is None:
            return None
        status, data, error, attempts, tokens_in, tokens_out, cost = row
        if isinstance(data, str):
            data = json.loads(data)
        return CachedAnswer(data, tokens_in, tokens_out, Decimal(cost), status, error, attempts)

    def put(self, key: CacheKey, answer: CachedAnswer) -> None:
        self._with_connection(lambda conn: conn.execute(db.load_sql("llm_result_put"), self._row(key, answer)))

    def put_with_call(self, key: CacheKey, answer: CachedAnswer, call: dict) -> None:
        """The answer and the llm_calls row of the attempt that paid for it, in one transaction: a
        process killed between two separate writes would leave a paid call without its answer, and
        the rerun would pay for it again.

        A call row the database refuses (a duplicate id: after a crash recovery that set llm_calls'
        sequence back below rows already written) does not take the answer with it: the answer is
        then written on its own and CallRecordRefused tells the caller to record the call apart. Lost,
        the answer would be paid for again by the next run that asks, or never stored at all when
        the caller's rows were committed (a saved translation is not asked for again). An answer
        the database refuses fails as before."""
        refused: list[psycopg.Error] = []

        def write(conn) -> None:
            refused.clear()
            try:
                with conn.transaction():
                    conn.execute(db.load_sql("llm_result_put"), self._row(key, answer))
                    conn.execute(db.load_sql("llm_record_call"), call)
            except psycopg.OperationalError:
                raise  # the connection or the server failed: nothing committed, tried again
            except psycopg.Error as exc:  # the database refused a row: the answer on its own
                refused.append(exc)
                conn.execute(db.load_sql("llm_result_put"), self._row(key, answer))

        self._with_connection(write)
        if refused:
            raise CallRecordRefused(str(refused[0]))

    @staticmethod
    def _row(key: CacheKey, answer: CachedAnswer) -> dict:
        return {
            "key": key.key, "task": key.task, "model": key.model, "prompt_version": key.prompt_version,
            "target_langs": key.target_langs, "input_hash": key.input_hash, "status": answer.status,
            "result": Jsonb(answer.data) if answer.data is not None else None, "error": answer.error,
            "attempts": answer.attempts, "tokens_in": answer.tokens_in, "tokens_out": answer.tokens_out,
            "cost_usd": answer.cost_usd}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
