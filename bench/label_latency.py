"""Labelling latency in a real browser: key press → the next row's text on screen.

With 100,000 items in the database, Chromium (Playwright) labels 200 rows with the keyboard on
the app's Label page, twice:

1. ``idle``: nothing else runs in the app's process;
2. ``judge run``: a judge run over the whole dataset (the real :func:`judges.runner.run_judge`
   with the scripted provider, so no network; 0.25 s per call, 8 in flight) writes calls and
   verdicts into the same database from a background job in the app's process, as the Judges
   page starts it. Labelling starts once the run has planned its calls and stored the first
   ones; the planning time is reported (``judge_planning_s``): planning 100,000 calls keeps a
   CPU core busy and slows the page while it lasts. (The app's job registry then freezes the
   run's long-lived objects out of the garbage collector's way: see
   ``calibrate_app.resources._HeapFreeze``; without that, full collections stopped the server
   for ~0.75 s about every second.)
3. ``judge run, flat out`` (``--flat-out``, informational): the same with 0 s per call, as many
   calls as the CPU allows.

Latency is measured inside the page: a capturing ``keydown`` listener stamps
``performance.now()``, a ``MutationObserver`` notices the question text change, and the stamp is
taken in the next animation frame (the frame that paints it). The bar: median ≤ 150 ms and
p95 ≤ 300 ms. Durability: the progress line shown with each new row is read from the database
in the same run that renders the row, after the label's INSERT committed; the bench checks that
it counts the label just given, and at the end counts the labels in the file.

Usage::

    .venv/bin/python bench/label_latency.py [--items 100000] [--labels 200] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

import duckdb
from synthetic_items import seed_items

from calibrate_app.cli._app import APP_SCRIPT, streamlit_command

CHROMIUM = "/usr/bin/chromium"
REPO = Path(__file__).resolve().parents[1]
DATASET = "bench"
JUDGE_CONCURRENCY = 8  # run_judge's default
# Seconds per scripted call in the "judge run" phase. 0.25 s at 8 in flight is ~30 calls/s,
# several times a hosted LLM judge (1-3 s per call); the "judge run, flat out" phase uses 0 s,
# i.e. as many calls as the CPU allows, to show the worst case on a small machine.
JUDGE_LATENCY = 0.25

OPTIONS: dict[str, Any] = {}  # what-if switches from the command line (see main)

# Runs in the app's process: starts a judge run as a background job (once per process), then
# hands over to the real app.
WRAPPER = textwrap.dedent(f"""
    import os
    import runpy

    from calibrate_app import resources

    if os.environ.get("CALIBRATE_BENCH_JUDGE_LATENCY"):
        from judges.config import load_builtin
        from judges.providers.scripted import ScriptedProvider
        from judges.runner import run_judge

        store = resources.get_store()

        def work(job):
            import json
            import time

            config = load_builtin("faithfulness").with_revision(model="scripted/bench")
            latency = float(os.environ["CALIBRATE_BENCH_JUDGE_LATENCY"])
            provider = ScriptedProvider("bench", latency=latency)
            report = os.environ["CALIBRATE_BENCH_PROGRESS"]
            limit = int(os.environ.get("CALIBRATE_BENCH_JUDGE_LIMIT") or 0) or None
            started = time.monotonic()
            last = [0.0]

            def progress(done, total, summary):
                job.advance(done, total=total)
                now = time.monotonic()
                if now - last[0] > 0.5:
                    last[0] = now
                    with open(report + ".tmp", "w") as f:
                        json.dump({{"done": done, "total": total,
                                   "seconds": now - started}}, f)
                    os.replace(report + ".tmp", report)

            class Stop:
                def is_set(self):
                    return job.cancelled

            return run_judge(config, {DATASET!r}, store=store, provider=provider,
                             concurrency={JUDGE_CONCURRENCY}, on_progress=progress,
                             should_stop=Stop(), limit=limit)

        resources.get_jobs().start("bench-judge", "bench judge run", work)

    runpy.run_path({str(APP_SCRIPT)!r}, run_name="__main__")
""")

# Installed in the page before any of its scripts run.
PROBE = """
window.__lat = {t0: 0, t1: 0, last: null};
document.addEventListener('keydown', () => { window.__lat.t0 = performance.now(); }, true);
new MutationObserver(() => {
  const el = document.querySelector('.st-key-question');
  const text = el ? el.innerText : null;
  if (text !== null && text !== window.__lat.last) {
    window.__lat.last = text;
    requestAnimationFrame(() => { window.__lat.t1 = performance.now(); });
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(
    db_path: Path, workdir: Path, *, judge_latency: float | None
) -> tuple[subprocess.Popen[bytes], str]:
    wrapper = workdir / "bench_app.py"
    wrapper.write_text(WRAPPER)
    port = free_port()
    command, env = streamlit_command(str(db_path), "127.0.0.1", port)
    command[command.index(str(APP_SCRIPT))] = str(wrapper)
    env["CALIBRATE_BENCH_JUDGE_LATENCY"] = "" if judge_latency is None else str(judge_latency)
    env["CALIBRATE_BENCH_PROGRESS"] = str(workdir / "judge-progress.json")
    env["CALIBRATE_BENCH_JUDGE_LIMIT"] = str(OPTIONS.get("judge_limit") or "")
    log = (workdir / f"server-{port}.log").open("wb")
    proc = subprocess.Popen(command, env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as reply:
                if reply.read() == b"ok":
                    return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the app did not start; see {log.name}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def settle(page: Any) -> None:
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=30_000)
    page.wait_for_function(
        "() => { const b = [...document.querySelectorAll('[class*=\"st-key-verdict_\"]')]; "
        "return b.length === 3 && b.every(el => el.querySelector('button')); }",
        timeout=30_000,
    )


def wait_for_judge_calls(progress_file: Path, timeout: float = 600) -> float:
    """Wait until the judge run has planned and stored calls; the planning seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = json.loads(progress_file.read_text())
        except (OSError, ValueError):
            state = {}
        if state.get("done", 0) > 0:
            return float(state["seconds"])
        time.sleep(0.5)
    raise SystemExit("the judge run stored no call in time")


def label_rows(
    browser: Any, url: str, annotator: str, n: int, *, judge_progress: Path | None = None
) -> dict[str, Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_init_script(PROBE)
    page = context.new_page()
    page.goto(f"{url}/label?user={annotator}&dataset={DATASET}", timeout=60_000)
    page.get_by_test_id("stButton").first.wait_for(timeout=60_000)
    planning = None
    if judge_progress is not None:  # the first page run started the judge job
        planning = wait_for_judge_calls(judge_progress)
    settle(page)
    first = page.locator(".st-key-question").inner_text()
    start_labelled = int(page.locator(".st-key-progress").inner_text().split("/")[0]
                         .replace(",", "").strip())
    page.evaluate("() => { window.__lat.last = document.querySelector('.st-key-question')"
                  ".innerText; }")
    latencies: list[float] = []
    not_durable = 0
    keys = "pfu"
    previous = first
    for k in range(n):
        page.evaluate("() => { window.__lat.t1 = 0; }")
        page.keyboard.press(keys[k % 3])
        page.wait_for_function(
            "() => window.__lat.t1 > window.__lat.t0 && window.__lat.t0 > 0", timeout=30_000,
            polling="raf",
        )
        latencies.append(page.evaluate("() => window.__lat.t1 - window.__lat.t0"))
        text = page.locator(".st-key-question").inner_text()
        if text == previous:
            raise SystemExit(f"label {k + 1}: the question did not change")
        previous = text
        shown = page.locator(".st-key-progress").inner_text()
        if int(shown.split("/")[0].replace(",", "").strip()) != start_labelled + k + 1:
            not_durable += 1
        settle(page)
    context.close()
    ordered = sorted(latencies)
    return {
        "labels": n,
        **({"judge_planning_s": round(planning, 1)} if planning is not None else {}),
        "median_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)], 1),  # nearest rank
        "max_ms": round(ordered[-1], 1),
        "mean_ms": round(statistics.fmean(ordered), 1),
        "progress_not_counting_the_label": not_durable,
        "latencies_ms": [round(x, 1) for x in latencies],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--labels", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None, help="work directory to keep")
    parser.add_argument("--flat-out", action="store_true",
                        help="also measure while the judge runs as fast as the CPU allows")
    parser.add_argument("--judge-limit", type=int, default=None,
                        help="judge only this many items (default: the whole dataset)")
    parser.add_argument("--skip-idle", action="store_true", help="only the judge phases")
    args = parser.parse_args()
    OPTIONS.update(judge_limit=args.judge_limit)
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    workdir = args.keep or Path(tempfile.mkdtemp(prefix="calibrate-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    db_path = workdir / "bench.duckdb"
    if db_path.exists():
        db_path.unlink()
    seconds = seed_items(db_path, DATASET, args.items)
    print(f"seeded {args.items:,} items in {seconds:.2f} s "
          f"({db_path.stat().st_size / 1e6:.1f} MB)", flush=True)
    results: dict[str, Any] = {
        "items": args.items, "cpus": os.cpu_count(), "judge_limit": args.judge_limit,
    }
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"],
        )
        phases: list[tuple[str, float | None]] = [("idle", None), ("judge run", JUDGE_LATENCY)]
        if args.skip_idle:
            phases = phases[1:]
        if args.flat_out:
            phases.append(("judge run, flat out", 0.0))
        for phase, judge_latency in phases:
            calls_before = _judge_calls(db_path)  # before the server takes the file
            progress_file = workdir / "judge-progress.json"
            progress_file.unlink(missing_ok=True)
            proc, url = start(db_path, workdir, judge_latency=judge_latency)
            try:
                started = time.perf_counter()
                results[phase] = label_rows(
                    browser, url, "bench-" + phase.replace(" ", "").replace(",", "-"),
                    args.labels, judge_progress=None if judge_latency is None else progress_file,
                )
                elapsed = time.perf_counter() - started - results[phase].get(
                    "judge_planning_s", 0)
                results[phase]["seconds"] = round(elapsed, 1)
            finally:
                stop(proc)
            if judge_latency is not None:
                written = _judge_calls(db_path) - calls_before
                results[phase]["judge_latency_s"] = judge_latency
                results[phase]["judge_concurrency"] = JUDGE_CONCURRENCY
                results[phase]["judge_calls_written"] = written
                results[phase]["judge_calls_per_s"] = round(written / elapsed, 1)
            results[phase]["load_average_1m"] = round(os.getloadavg()[0], 2)
            shown = {k: v for k, v in results[phase].items() if k != "latencies_ms"}
            print(f"{phase}: {json.dumps(shown)}", flush=True)
        browser.close()
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        labels = con.execute(
            "SELECT annotator, count(*) FROM labels GROUP BY annotator ORDER BY annotator"
        ).fetchall()
    finally:
        con.close()
    results["labels_in_file"] = dict(labels)
    ok = all(
        results[phase]["median_ms"] <= 150 and results[phase]["p95_ms"] <= 300
        for phase, _ in phases[:2]
    ) and all(
        results[phase]["progress_not_counting_the_label"] == 0 for phase, _ in phases
    ) and all(n == args.labels for n in results["labels_in_file"].values())
    results["bar"] = "median <= 150 ms, p95 <= 300 ms, label committed before the next row"
    results["passed"] = ok
    print(json.dumps({k: ({kk: vv for kk, vv in v.items() if kk != "latencies_ms"}
                          if isinstance(v, dict) and "latencies_ms" in v else v)
                      for k, v in results.items()}, indent=2))
    suffix = f"-limit{args.judge_limit}" if args.judge_limit else ""
    out = REPO / "test-artifacts" / f"label_latency{suffix}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if ok else 1


def _judge_calls(db_path: Path) -> int:
    """Judge calls stored in the file (read while no server holds it)."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        exists = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'judge_calls'"
        ).fetchall()[0][0]
        return int(con.execute("SELECT count(*) FROM judge_calls").fetchall()[0][0]) if exists \
            else 0
    finally:
        con.close()


if __name__ == "__main__":
    sys.exit(main())
