"""Inside the jail: drive the grading kernel cell by cell and stream what happened, as JSON lines, to stdout.

    python -I /grader/runner.py < job.json

The job (the cells to run, hidden tests included) arrives on stdin and lives only in this process, which makes
itself non-dumpable: the kernel runs as the same user but can read neither this process's memory nor its file
descriptors. The kernel receives each cell when its turn comes, so the student's code never sees a test before
it runs. Every line written to stdout is one of:

    {"kind": "ready", "records": [...], "seconds": s}            the guard is installed
    {"kind": "cell", "i": n, "status": "ok"|"error"|"timeout", "outputs": [...], "records": [...], "cut": chars,
     "seconds": s}
    {"kind": "stop", "i": n, "reason": "dead"|"stuck"}           the kernel died or ignores interrupts
    {"kind": "final", "records": [...]}
    {"kind": "error", "what": "..."}                             the runner itself could not go on

Records are the guard's evidence (see guard/), taken out of the cell outputs here. Nothing here is trusted by
the grader: the trusted side checks it all after this process and the jail are gone. Only jupyter_client is
used (nbclient and nbformat take seconds to import, and each jail pays for its imports).
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import shutil
import subprocess
import sys
import time

MIME = "application/vnd.llmlab.grading+json"
GRACE = 10.0  # seconds a kernel gets to answer an interrupt before it counts as stuck


def main() -> int:
    _make_undumpable()
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdin.close()
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")  # our channel; fd 1 itself goes to stderr from now on
    os.dup2(2, 1)
    _seed_home()
    try:
        _run(job, out)
    except Exception as exc:  # noqa: BLE001 - report, then stop: the trusted side decides what it means
        _send(out, {"kind": "error", "what": f"{type(exc).__name__}: {exc}"[:2000]})
        return 1
    return 0


def _make_undumpable() -> None:
    """PR_SET_DUMPABLE 0: processes of the same user can no longer ptrace us or open /proc/<pid>/{mem,fd}."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _seed_home() -> None:
    """Copy the lab's support files and the student's extra files into the private working folder."""
    seed = "/seed"
    if os.path.isdir(seed) and os.path.realpath(os.getcwd()) != seed:
        for name in os.listdir(seed):
            src = os.path.join(seed, name)
            if os.path.isdir(src):
                shutil.copytree(src, name, symlinks=True, dirs_exist_ok=True)
            else:
                shutil.copy(src, name)
    cache = os.environ.get("LLMLAB_MPL_SEED")
    if cache and os.path.isdir(cache):
        shutil.copytree(cache, os.environ["MPLCONFIGDIR"], dirs_exist_ok=True)


def _send(out, message: dict) -> None:
    out.write(json.dumps(message, ensure_ascii=False) + "\n")
    out.flush()


def _run(job: dict, out) -> None:
    from jupyter_client import KernelManager

    t0 = time.monotonic()
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env=dict(job["env"]), cwd=os.getcwd(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=job["startup_timeout"])
        slow = max(job["cell_timeout"], job["startup_timeout"])  # imports on a busy machine are not the student's fault
        cell = _Cell(kc, km, job["bootstrap"], False, slow, job["output_bytes"])
        if cell.status != "ok" or not any(r.get("type") == "ready" for r in cell.records):
            _send(out, {"kind": "error", "what": "el guardián de la corrección no se pudo instalar",
                        "outputs": cell.outputs[:5]})
            return
        _send(out, {"kind": "ready", "records": cell.records, "seconds": round(time.monotonic() - t0, 3)})
        for spec in job["cells"]:
            timeout = slow if spec.get("trusted_setup") else job["cell_timeout"]
            if spec.get("before"):  # the guard's own requests: silent, not in the notebook
                _Cell(kc, km, spec["before"], False, slow, job["output_bytes"])
            cell = _Cell(kc, km, spec["source"], spec["store_history"], timeout, job["output_bytes"])
            if spec.get("after") and cell.status == "ok":
                _Cell(kc, km, spec["after"], False, slow, job["output_bytes"])
            _send(out, {"kind": "cell", "i": spec["i"], "status": cell.status, "outputs": cell.outputs,
                        "records": cell.records, "cut": cell.cut, "seconds": round(cell.seconds, 3)})
            if cell.status in ("dead", "stuck"):
                _send(out, {"kind": "stop", "i": spec["i"], "reason": cell.status})
                return
        cell = _Cell(kc, km, job["final"], False, slow, job["output_bytes"])
        _send(out, {"kind": "final", "records": cell.records})
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


class _Cell:
    """Execute one request and gather its outputs as nbformat dicts (streams merged, outputs capped)."""

    def __init__(self, kc, km, code: str, store_history: bool, timeout: float, output_bytes: int):
        self.kc, self.km, self.limit = kc, km, output_bytes
        self.outputs: list[dict] = []
        self.records: list[dict] = []
        self.kept = self.cut = 0
        self.clear_pending = False
        start = time.monotonic()
        msg_id = kc.execute(code, store_history=store_history, allow_stdin=False, stop_on_error=False)
        self.status = self._wait(msg_id, start + timeout, timeout)
        self.seconds = time.monotonic() - start
        if self.cut:
            self.outputs.append({"output_type": "stream", "name": "stderr",
                                 "text": f"\n[salida recortada: se guardan {self.kept} caracteres; "
                                         f"se descartaron {self.cut} más]\n"})

    def _wait(self, msg_id: str, deadline: float, timeout: float) -> str:
        interrupted_at = None
        status = "ok"
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                now = time.monotonic()
                if not self.km.is_alive():
                    return "dead"
                if interrupted_at is None and now > deadline:
                    self.km.interrupt_kernel()
                    interrupted_at = now
                    status = "timeout"
                    self.outputs.append({"output_type": "error", "ename": "CellTimeoutError",
                                         "evalue": f"la celda superó el límite de {timeout:g} s y se interrumpió",
                                         "traceback": []})
                elif interrupted_at is not None and now > interrupted_at + GRACE:
                    return "stuck"
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg.get("content", {})
            if kind == "status" and content.get("execution_state") == "idle":
                break
            if kind == "error":
                status = "timeout" if status == "timeout" else "error"
            self._output(kind, content)
        return status

    def _output(self, kind: str, content: dict) -> None:
        if kind == "clear_output":
            if content.get("wait"):
                self.clear_pending = True
            else:
                self.outputs.clear()
            return
        if kind not in ("stream", "display_data", "execute_result", "error"):
            return
        data = content.get("data")
        if kind == "display_data" and isinstance(data, dict) and MIME in data:
            if len(self.records) < 100_000 and isinstance(data[MIME], dict):
                self.records.append(data[MIME])
            return
        if self.clear_pending:
            self.outputs.clear()
            self.clear_pending = False
        size = len(json.dumps(content, ensure_ascii=False))
        if self.kept + size > self.limit:
            room = self.limit - self.kept
            if kind == "stream" and room > 0 and isinstance(content.get("text"), str):
                content = {**content, "text": content["text"][:room]}
                self.cut += size - room
                self.kept = self.limit
            else:
                self.cut += size
                return
        else:
            self.kept += size
        if kind == "stream":
            name, text = content.get("name", "stdout"), str(content.get("text", ""))
            last = self.outputs[-1] if self.outputs else None
            if last and last["output_type"] == "stream" and last["name"] == name:
                last["text"] += text
            else:
                self.outputs.append({"output_type": "stream", "name": name, "text": text})
        elif kind == "error":
            self.outputs.append({"output_type": "error", "ename": content.get("ename", ""),
                                 "evalue": content.get("evalue", ""), "traceback": content.get("traceback", [])})
        else:
            output = {"output_type": kind, "data": data or {}, "metadata": content.get("metadata", {})}
            if kind == "execute_result":
                output["execution_count"] = content.get("execution_count")
            self.outputs.append(output)


if __name__ == "__main__":
    sys.exit(main())
