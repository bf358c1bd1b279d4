"""Judge runner throughput against the local fake LLM server.

1. With a fixed server latency L = 0.2 s and concurrency c in {1, 8, 32}: achieved calls/s as a
   ratio of the limit c / L, through the real OpenAI SDK over HTTP, with every call persisted
   (checked by counting the stored rows of the run). ``ratio`` is over the whole run (start-up
   included), ``steady`` over the calls after the first wave. Bar: ratio >= 0.9 at c = 32.
   The runner needs a few ms of CPU per call (shown); on a shared machine whose other work
   leaves it less than half a core, c = 32 (160 calls/s) becomes CPU-bound and the ratio drops.
2. A finished run of 10,000 calls is run again: its wall time and the number of requests the
   provider received (must be 0).

The server runs in its own process, so its threads do not compete with the runner for the GIL.

    .venv/bin/python bench/judge_throughput.py [--latency 0.2] [--rerun-calls 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from judges.calls import CallPolicy
from judges.config import load_builtin, parse_config
from judges.providers.openai import OpenAIProvider
from judges.runner import run_judge
from judges.workspace import Workspace
from labels import import_rows, open_store

SERVER = Path(__file__).resolve().parents[1] / "tests" / "support" / "fake_llm_server.py"


class Server:
    """The fake server in a subprocess; the request count comes from its log file."""

    def __init__(self, latency: float, log: Path) -> None:
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "--port", "0", "--latency", str(latency),
             "--log", str(log)],
            stdout=subprocess.PIPE, text=True,
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline().split()[1])

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (Linux /proc; NaN elsewhere)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    @property
    def requests(self) -> int:
        if not self.log.exists():
            return 0
        with self.log.open(encoding="utf-8") as handle:
            return sum(1 for _ in handle)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=10)


def make_dataset(store_path: str, name: str, n: int, folder: Path) -> None:
    rows = folder / f"{name}.jsonl"
    with rows.open("w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(json.dumps({
                "id": f"{name}-{i}", "question": f"Question {i} of {name}?",
                "answer": f"Answer {i}.", "sources": [f"Source A {i}.", f"Source B {i}."],
            }) + "\n")
    store = open_store(store_path)
    import_rows(store, rows, name)
    store.db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--seconds", type=float, default=6.0,
                        help="target duration of each concurrency level")
    parser.add_argument("--rerun-calls", type=int, default=10_000)
    args = parser.parse_args()
    config = parse_config({**load_builtin("faithfulness-oneshot").model_dump(mode="json"),
                           "model": "openai/fake-judge"})
    folder = Path(tempfile.mkdtemp(prefix="judge-bench-"))
    db = str(folder / "bench.duckdb")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"judge throughput: fake server latency {args.latency * 1000:.0f} ms, real OpenAI SDK "
          f"over HTTP, DuckDB {db}; {os.cpu_count()} CPUs, load average {load:.1f}")
    print(f"{'c':>4} {'calls':>6} {'seconds':>8} {'calls/s':>8} {'limit':>7} {'ratio':>6} "
          f"{'steady':>6} {'persisted':>10} {'runner CPU ms/call':>19} "
          f"{'server CPU ms/call':>19}")
    server = Server(args.latency, folder / "calls.jsonl")
    try:
        provider = OpenAIProvider("fake-judge", api_key="bench",
                                  base_url=f"http://127.0.0.1:{server.port}/v1")
        ratios = {}
        for c in (1, 8, 32):
            limit = c / args.latency
            n = max(c, int(limit * args.seconds))
            name = f"c{c}"
            make_dataset(db, name, n, folder)
            workspace = Workspace.open(db)
            try:
                started, cpu, server_cpu = (time.perf_counter(), time.process_time(),
                                            server.cpu_seconds())
                marks: list[float] = []
                summary = run_judge(config, name, workspace=workspace, provider=provider,
                                    concurrency=c, policy=CallPolicy(timeout=10),
                                    on_progress=lambda *_, m=marks: m.append(time.perf_counter()))
                seconds = time.perf_counter() - started
                cpu_ms = (time.process_time() - cpu) * 1000 / n
                server_ms = (server.cpu_seconds() - server_cpu) * 1000 / n
                with workspace.db.cursor() as cur:
                    persisted = cur.execute(
                        "SELECT count(*) FROM judge_calls WHERE run_id = ? AND status = 'scored'",
                        [summary.run_id],
                    ).fetchall()[0][0]
            finally:
                workspace.close()
            rate = summary.scored / seconds
            ratios[c] = rate / limit
            # Steady state: the calls after the first wave, between its end and the last reply
            # (leaves out client start-up, connection set-up and the run's bookkeeping).
            first_wave_done = marks[c]  # marks[0] is the call at the start of the run
            steady = (n - c) / (marks[-1] - first_wave_done) / limit
            print(f"{c:>4} {n:>6} {seconds:>8.2f} {rate:>8.1f} {limit:>7.1f} {ratios[c]:>6.2f} "
                  f"{steady:>6.2f} {persisted:>5}/{n:<4} {cpu_ms:>19.2f} {server_ms:>19.2f}")
    finally:
        server.stop()

    # A finished run of N calls, then the same run again: nothing may reach the provider.
    n = args.rerun_calls
    fast = Server(0.0, folder / "calls-rerun.jsonl")
    try:
        make_dataset(db, "rerun", n, folder)
        provider = OpenAIProvider("fake-judge", api_key="bench",
                                  base_url=f"http://127.0.0.1:{fast.port}/v1")
        workspace = Workspace.open(db)
        try:
            started = time.perf_counter()
            first = run_judge(config, "rerun", workspace=workspace, provider=provider,
                              concurrency=64)
            first_seconds = time.perf_counter() - started
            before = fast.requests
            started = time.perf_counter()
            again = run_judge(config, "rerun", workspace=workspace, provider=provider,
                              concurrency=64)
            rerun_seconds = time.perf_counter() - started
            with workspace.db.cursor() as cur:
                stored = cur.execute("SELECT count(*) FROM judge_calls WHERE run_id = ?",
                                     [first.run_id]).fetchall()[0][0]
        finally:
            workspace.close()
        after = fast.requests
    finally:
        fast.stop()
    print(f"first run of {n:,} calls (latency 0): {first_seconds:.1f} s, "
          f"{first.scored:,} scored, {stored:,} rows stored, {before:,} provider requests")
    print(f"re-run of the finished {n:,}-call run: {rerun_seconds:.2f} s, {again.cached:,} cached, "
          f"{after - before} provider requests (summary: {again.provider_requests})")
    ok = ratios[32] >= 0.9 and after == before and again.provider_requests == 0
    print(f"bar: ratio at c=32 >= 0.9 and re-run makes 0 calls: {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
