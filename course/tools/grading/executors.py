"""Where grading tasks run: a local process pool (all cores) or a Dask cluster.

Both take the same pure functions (plain data in, plain data out) and give back results as they finish; the
merge (journal, gradebook, files) always stays in the instructor's process.

    LocalExecutor(jobs)          ProcessPoolExecutor; a worker that dies is replaced and its task retried
    DaskExecutor(address)        `make grade CLUSTER=tcp://scheduler:8786`, or DASK_SCHEDULER_ADDRESS; tasks are
                                 retried on another worker when theirs dies (Dask reschedules the task)

Dask workers need what a local worker has: this repository's environment (`pip install -e ".[course,dask]"`),
bubblewrap, and the grading package, which is uploaded to them on connect. Start them by hand
(`dask scheduler` + `dask worker tcp://...`), on Slurm/PBS with dask-jobqueue, or on Kubernetes with
dask-kubernetes (see README, "Para profesores").
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import shutil
import tempfile
from pathlib import Path

from .processes import worker_init

HERE = Path(__file__).resolve().parent


class LocalExecutor:
    """A pool of worker processes on this machine."""

    name = "local"

    def __init__(self, jobs: int | None = None):
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self._pool = self._new_pool()
        self._calls: dict[cf.Future, tuple] = {}
        self.retries = 0

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=self.jobs, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=worker_init)

    def submit(self, fn, *args):
        future = self._pool.submit(fn, *args)
        self._calls[future] = (fn, args, 0)
        return future

    def wait_any(self, pending: set, timeout: float | None = None):
        done, rest = cf.wait(pending, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        again = set()
        for future in done:
            if isinstance(future.exception(), cf.process.BrokenProcessPool):
                fn, args, tries = self._calls.pop(future)
                if tries >= 2:
                    raise RuntimeError("a grading worker died three times on the same task") from future.exception()
                self.retries += 1
                self._pool.shutdown(wait=False, cancel_futures=False)
                self._pool = self._new_pool()
                retry = self._pool.submit(fn, *args)
                self._calls[retry] = (fn, args, tries + 1)
                again.add(retry)
        done -= {f for f in done if isinstance(f.exception(), cf.process.BrokenProcessPool)}
        return done, rest | again

    @staticmethod
    def result(future):
        return future.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def abort(self) -> None:
        """Stop now (Ctrl-C, a full disk): kill the workers, whose jails die with them; keep nothing running."""
        for process in list(getattr(self._pool, "_processes", {}).values()):
            try:
                process.kill()
            except (OSError, AttributeError):
                pass
        self._pool.shutdown(wait=False, cancel_futures=True)


class DaskExecutor:
    """Tasks on a Dask distributed cluster (the scheduler's address, or DASK_SCHEDULER_ADDRESS)."""

    name = "dask"

    def __init__(self, address: str | None = None, client=None):
        from distributed import Client

        self.client = client or Client(address or os.environ.get("DASK_SCHEDULER_ADDRESS"))
        self._upload_package()
        self.jobs = max(1, sum(self.client.nthreads().values()))
        self.retries = 0

    def _upload_package(self) -> None:
        """Workers import the grading package from a zip the scheduler hands them (no shared disk needed)."""
        with tempfile.TemporaryDirectory() as scratch:
            staging = Path(scratch) / "pkg"
            shutil.copytree(HERE, staging / "grading", ignore=shutil.ignore_patterns("__pycache__"))
            archive = shutil.make_archive(str(Path(scratch) / "llmlab_grading"), "zip", staging)
            self.client.upload_file(archive, load=False)

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False, retries=2)

    def wait_any(self, pending: set, timeout: float | None = None):
        from distributed import wait

        try:
            result = wait(list(pending), timeout=timeout, return_when="FIRST_COMPLETED")
        except Exception as exc:  # noqa: BLE001 - distributed's timeout has had several classes over the years
            if "Timeout" not in type(exc).__name__:
                raise
            return set(), set(pending)
        return set(result.done), set(result.not_done)

    @staticmethod
    def result(future):
        return future.result()

    def close(self) -> None:
        self.client.close()

    def abort(self) -> None:
        """Stop now: closing the client releases its tasks, which the scheduler then forgets."""
        self.client.close()
