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

The floor beside it (issue 29 item 9): in every phase the same server process also serves a
bare Streamlit page (:data:`BARE_PAGE`: three buttons with the same keys that count a label in
the session and rerun the script, which shows the next synthetic row's question, progress line,
answer and three sources; no database), and the same probe labels ``--labels`` rows on it, by
turns of ``--block`` (10) key presses with the Label page, so both are measured under the same
load and, in the judge phase, beside the same judge run. The bench prints both medians and the
ratio (aim: the Label page ≤ 2× the bare page), and for each page what the server's script run
for a key press cost: wall and CPU ms, the messages it sent to the browser, and the DuckDB
statements it ran (``server-runs-PHASE.jsonl`` in the work directory lists each statement's
wall ms). It also prints when the run's last message reached the page, from the key press: the
page paints the new row only after that (on this 2-CPU machine about 5 ms after it), so the
latency is the server's run plus the page taking in its messages, not the time to the
question's own message. ``--profile`` adds a cProfile of the Label page's runs
(``label-PHASE.prof``; it slows that page, so its ratio is not the bench's).

Usage::

    .venv/bin/python bench/label_latency.py [--items 100000] [--labels 200] [--keep DIR]
        [--reuse] [--block 10] [--profile]

``--keep DIR --reuse`` keeps the database seeded in ``DIR`` by an earlier run with the same
``--items`` (seeding 1,000,000 items takes 1.5–3 minutes); that run's labels and judge calls
stay in it, and this run's annotators get a time suffix.
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
BLOCK = 10  # key presses on one page before the other page's turn

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
        from judges.workspace import Workspace

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

            return run_judge(config, {DATASET!r}, workspace=Workspace.of(store), provider=provider,
                             concurrency={JUDGE_CONCURRENCY}, on_progress=progress,
                             should_stop=Stop(), limit=limit)

        resources.get_jobs().start("bench-judge", "bench judge run", work)

    import streamlit as st
    from streamlit.runtime.scriptrunner import script_runner

    if not getattr(script_runner, "bench_timed", False):  # once per process
        # Every script run's wall and CPU time in the server, by page, to a JSONL file; with
        # --profile, the Label page's runs under one cProfile, dumped after each run.
        import cProfile
        import json
        import time

        script_runner.bench_timed = True
        runs_file = os.environ["CALIBRATE_BENCH_RUNS"]
        profile_file = os.environ.get("CALIBRATE_BENCH_PROFILE")
        profiler = cProfile.Profile() if profile_file else None
        run_script = script_runner.ScriptRunner._run_script
        enqueue = script_runner.ScriptRunner._enqueue_forward_msg
        sent = [0]

        def counted(self, msg):  # each message wakes the server's event loop thread
            sent[0] += 1
            return enqueue(self, msg)

        script_runner.ScriptRunner._enqueue_forward_msg = counted

        # The DuckDB statements a run executes (wall ms, by the statement's first 70
        # characters): labels.stores.db.Database.cursor hands out a timing proxy of each cursor.
        import contextlib
        import threading

        from labels.stores import db as labels_db

        statements = threading.local()
        open_cursor = labels_db.Database.cursor

        class TimedCursor:
            def __init__(self, cur):
                self._cur = cur

            def execute(self, sql, *args):
                started = time.perf_counter()
                try:
                    return self._cur.execute(sql, *args)
                finally:
                    log = getattr(statements, "log", None)
                    if log is not None:
                        log.append((" ".join(sql.split())[:70],
                                    (time.perf_counter() - started) * 1000))

            def __getattr__(self, name):
                return getattr(self._cur, name)

        @contextlib.contextmanager
        def timed_cursor(self):
            with open_cursor(self) as cur:
                yield TimedCursor(cur)

        labels_db.Database.cursor = timed_cursor

        def timed(self, rerun_data):
            bare = "bare=" in (rerun_data.query_string or "")
            wall, cpu, sent[0] = time.perf_counter(), time.thread_time(), 0
            statements.log = []
            if profiler is not None and not bare:
                profiler.enable()
            try:
                return run_script(self, rerun_data)
            finally:
                if profiler is not None and not bare:
                    profiler.disable()
                    profiler.dump_stats(profile_file)
                with open(runs_file, "a") as f:
                    f.write(json.dumps({{
                        "page": "bare" if bare else "label",
                        "fragment": bool(rerun_data.fragment_id_queue),
                        "ms": (time.perf_counter() - wall) * 1000,
                        "cpu_ms": (time.thread_time() - cpu) * 1000,
                        "messages": sent[0],
                        "db_ms": sum(ms for _, ms in statements.log),
                        "statements": statements.log}}) + "\\n")
                statements.log = None

        script_runner.ScriptRunner._run_script = timed

    if st.query_params.get("bare"):  # the floor: a bare page served by this same process
        runpy.run_path(os.environ["CALIBRATE_BENCH_BARE_PAGE"], run_name="__main__")
    else:
        runpy.run_path({str(APP_SCRIPT)!r}, run_name="__main__")
""")

# The floor beside the Label page: the least a Streamlit page that labels can do. Three buttons
# with the Label page's keys (p / f / u) whose click counts a label in the session and reruns
# the whole script, which shows the next synthetic row: the question in a container keyed
# ``question``, the progress line keyed ``progress``, the answer and three sources (the same
# text as bench/synthetic_items.py writes, ~2.4 kB) in bordered, scrolling containers, as the
# Label page lays them out. No database, no fragment, widget keys that never change.
BARE_PAGE = textwrap.dedent("""
    import streamlit as st

    st.set_page_config(page_title="bare", layout="wide")
    done = st.session_state.setdefault("done", 0)
    total = 1_000_000


    def count():
        st.session_state.done += 1


    i = done
    question, progress = st.columns([3, 1.3])
    with question:
        with st.container(key="question"):
            st.text(f"Bench question #{i}: does the answer follow from the sources?")
    with progress:
        with st.container(key="progress"):
            st.progress(done / total, text=f"{done:,} / {total:,} labelled")
    answer, sources = st.columns([1.0, 1.5], gap="medium")
    with answer:
        st.caption("Answer")
        with st.container(height=360, border=True, key="answer_panel"):
            st.text(f"The answer to question {i} says: " + "claim " * 40)
    with sources:
        st.caption("Sources (3)")
        with st.container(height=360, border=True, key="sources_panel"):
            for k in range(3):
                st.markdown(f"**doc-{k}**")
                st.text(f"Passage {i}.{k} " + "evidence " * 60)
    cols = st.columns(3)
    for col, (verdict, key) in zip(cols, [("pass", "p"), ("fail", "f"), ("unsure", "u")]):
        col.button(verdict.title(), key=f"verdict_{verdict}_bare", shortcut=key,
                   width="stretch", on_click=count)
""")

# Installed in the page before any of its scripts run.
# t0: the key press; t1: the next animation frame after the question changed; arrived: when each
# message of the server came in since t0 (the page paints the row only once the run's last
# message has come in, so that time says how much of the latency is the run and its messages).
PROBE = """
window.__lat = {t0: 0, t1: 0, last: null, arrived: []};
document.addEventListener('keydown', () => {
  window.__lat.t0 = performance.now(); window.__lat.arrived = [];
}, true);
const PageSocket = window.WebSocket;
window.WebSocket = function (...args) {
  const socket = new PageSocket(...args);
  socket.addEventListener('message', () => { window.__lat.arrived.push(performance.now()); });
  return socket;
};
window.WebSocket.prototype = PageSocket.prototype;
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
    db_path: Path, workdir: Path, *, judge_latency: float | None, runs_file: Path,
    profile_file: Path | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    wrapper = workdir / "bench_app.py"
    wrapper.write_text(WRAPPER)
    bare = workdir / "bench_bare_page.py"
    bare.write_text(BARE_PAGE)
    port = free_port()
    command, env = streamlit_command(str(db_path), "127.0.0.1", port)
    command[command.index(str(APP_SCRIPT))] = str(wrapper)
    env["CALIBRATE_BENCH_JUDGE_LATENCY"] = "" if judge_latency is None else str(judge_latency)
    env["CALIBRATE_BENCH_PROGRESS"] = str(workdir / "judge-progress.json")
    env["CALIBRATE_BENCH_BARE_PAGE"] = str(bare)
    env["CALIBRATE_BENCH_RUNS"] = str(runs_file)
    if profile_file is not None:
        env["CALIBRATE_BENCH_PROFILE"] = str(profile_file)
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


class Probe:
    """One browser page with the probe, labelling with the keyboard a block at a time."""

    def __init__(self, browser: Any, url: str, *, judge_progress: Path | None = None) -> None:
        """Open ``url`` and wait until its buttons take keys (and the judge run, if any)."""
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
        self.context.add_init_script(PROBE)
        self.page = page = self.context.new_page()
        page.goto(url, timeout=60_000)
        page.get_by_test_id("stButton").first.wait_for(timeout=60_000)
        self.planning = None
        if judge_progress is not None:  # the first page run started the judge job
            self.planning = wait_for_judge_calls(judge_progress)
        settle(page)
        self.previous = page.locator(".st-key-question").inner_text()
        self.start_labelled = self._shown_count()
        page.evaluate("() => { window.__lat.last = document.querySelector('.st-key-question')"
                      ".innerText; }")
        self.latencies: list[float] = []
        self.last_messages: list[float] = []  # ms from the key press to the last message
        self.not_durable = 0
        self.seconds = 0.0

    def _shown_count(self) -> int:
        return int(self.page.locator(".st-key-progress").inner_text().split("/")[0]
                   .replace(",", "").strip())

    def press(self, n: int) -> None:
        """Label ``n`` rows: key → the next row painted, each timed in the page."""
        page = self.page
        page.bring_to_front()
        settle(page)
        started = time.perf_counter()
        keys = "pfu"
        for _ in range(n):
            k = len(self.latencies)
            page.evaluate("() => { window.__lat.t1 = 0; }")
            page.keyboard.press(keys[k % 3])
            page.wait_for_function(
                "() => window.__lat.t1 > window.__lat.t0 && window.__lat.t0 > 0",
                timeout=30_000, polling="raf",
            )
            latency, last_message = page.evaluate(
                "() => { const l = window.__lat; const before = l.arrived.filter(t => t <= l.t1);"
                " return [l.t1 - l.t0, before.length ? before[before.length - 1] - l.t0 : 0]; }")
            self.latencies.append(latency)
            self.last_messages.append(last_message)
            text = page.locator(".st-key-question").inner_text()
            if text == self.previous:
                raise SystemExit(f"label {k + 1}: the question did not change")
            self.previous = text
            # Read once the run has finished: the question and the progress line are separate
            # messages of the same run, so reading the line as soon as the question changed
            # raced its message (1 press in 200 at load 10-14 read the line before it came).
            settle(page)
            if self._shown_count() != self.start_labelled + k + 1:
                self.not_durable += 1
        self.seconds += time.perf_counter() - started

    def summary(self) -> dict[str, Any]:
        """Median, p95, max and mean of the latencies, and the durability count."""
        self.context.close()
        ordered = sorted(self.latencies)
        return {
            "labels": len(ordered),
            **({"judge_planning_s": round(self.planning, 1)}
               if self.planning is not None else {}),
            "median_ms": round(statistics.median(ordered), 1),
            "last_message_median_ms": round(statistics.median(self.last_messages), 1),
            "p95_ms": round(ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)], 1),
            "max_ms": round(ordered[-1], 1),
            "mean_ms": round(statistics.fmean(ordered), 1),
            "progress_not_counting_the_label": self.not_durable,
            "seconds": round(self.seconds, 1),
            "latencies_ms": [round(x, 1) for x in self.latencies],
        }


def label_rows(
    browser: Any, url: str, annotator: str, n: int, *, judge_progress: Path | None = None,
    block: int = BLOCK,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Label ``n`` rows on the Label page and ``n`` on the bare page, ``block`` at a time by turns.

    Both pages are served by the same server process, so the floor is measured beside the
    Label page under the same load (the judge run's thread included).
    """
    real = Probe(browser, f"{url}/label?user={annotator}&dataset={DATASET}",
                 judge_progress=judge_progress)
    bare = Probe(browser, f"{url}/?bare=1")
    done = 0
    while done < n:
        step = min(block, n - done)
        real.press(step)
        bare.press(step)
        done += step
    return real.summary(), bare.summary()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--labels", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None, help="work directory to keep")
    parser.add_argument("--judge-limit", type=int, default=None,
                        help="judge only this many items (default: the whole dataset)")
    switches = {
        "--flat-out": "also measure while the judge runs as fast as the CPU allows",
        "--skip-idle": "only the judge phases",
        "--reuse": "with --keep: reuse the database seeded there by an earlier run with the same "
                   "--items (seeding 1,000,000 items takes minutes)",
        "--profile": "cProfile the Label page's script runs (label-PHASE.prof in the work "
                     "directory; slows that page, so its ratio is not the bench's)",
    }
    for flag, text in switches.items():
        parser.add_argument(flag, action="store_true", help=text)
    parser.add_argument("--block", type=int, default=BLOCK,
                        help="key presses on one page before the other page's turn")
    args = parser.parse_args()
    OPTIONS.update(judge_limit=args.judge_limit)
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    workdir = args.keep or Path(tempfile.mkdtemp(prefix="calibrate-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    db_path = workdir / "bench.duckdb"
    run_tag = ""
    if args.reuse and _items(db_path) == args.items:
        run_tag = time.strftime("-%H%M%S")  # this run's annotators, apart from earlier runs'
        print(f"reusing {db_path} ({args.items:,} items; earlier runs' labels and judge calls "
              "stay in it)", flush=True)
    else:
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
            tag = phase.replace(" ", "").replace(",", "-")
            runs_file = workdir / f"server-runs-{tag}.jsonl"
            runs_file.unlink(missing_ok=True)
            profile_file = workdir / f"label-{tag}.prof" if args.profile else None
            proc, url = start(db_path, workdir, judge_latency=judge_latency,
                              runs_file=runs_file, profile_file=profile_file)
            try:
                started = time.perf_counter()
                real, bare = label_rows(
                    browser, url, "bench-" + tag + run_tag,
                    args.labels, judge_progress=None if judge_latency is None else progress_file,
                    block=args.block,
                )
                real.update(_server_runs(runs_file, "label", args.labels))
                bare.update(_server_runs(runs_file, "bare", args.labels))
                results[phase] = real
                results[phase]["bare_page"] = bare
                results[phase]["ratio_to_bare"] = round(real["median_ms"] / bare["median_ms"], 2)
                elapsed = time.perf_counter() - started - real.get("judge_planning_s", 0)
            finally:
                stop(proc)
            if judge_latency is not None:
                written = _judge_calls(db_path) - calls_before
                results[phase]["judge_latency_s"] = judge_latency
                results[phase]["judge_concurrency"] = JUDGE_CONCURRENCY
                results[phase]["judge_calls_written"] = written
                results[phase]["judge_calls_per_s"] = round(written / elapsed, 1)
            results[phase]["load_average_1m"] = round(os.getloadavg()[0], 2)
            shown = {k: v for k, v in results[phase].items()
                     if k not in ("latencies_ms", "bare_page")}
            print(f"{phase}: {json.dumps(shown)}", flush=True)
            print(f"{phase}, bare page: " + json.dumps(
                {k: v for k, v in bare.items() if k != "latencies_ms"}), flush=True)
        browser.close()
    print(f"\n{args.items:,} items, {args.labels} labels a page, by turns of {args.block}"
          f" (load average {os.getloadavg()[0]:.2f} at the end):")
    print(f"{'phase':<22} {'Label page median':>18} {'bare page median':>17} {'ratio':>6}"
          f" {'Label p95':>10} {'bare p95':>9} {'server run: Label':>18} {'bare':>8}"
          f" {'DuckDB: Label':>14} {'messages: Label':>16} {'bare':>5}"
          f" {'last message in: Label':>23} {'bare':>8}")
    for phase, _ in phases:
        r, b = results[phase], results[phase]["bare_page"]
        print(f"{phase:<22} {r['median_ms']:>15.1f} ms {b['median_ms']:>14.1f} ms "
              f"{r['ratio_to_bare']:>6.2f} {r['p95_ms']:>7.1f} ms {b['p95_ms']:>6.1f} ms "
              f"{r.get('server_run_median_ms', 0):>15.1f} ms "
              f"{b.get('server_run_median_ms', 0):>5.1f} ms "
              f"{r.get('db_median_ms', 0):>11.1f} ms "
              f"{r.get('messages_median', 0):>16.0f} {b.get('messages_median', 0):>5.0f} "
              f"{r['last_message_median_ms']:>20.1f} ms {b['last_message_median_ms']:>5.1f} ms")
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        labels = con.execute(
            "SELECT annotator, count(*) FROM labels WHERE annotator LIKE ? GROUP BY annotator "
            "ORDER BY annotator", [f"bench-%{run_tag}"],
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
    results["ratio_aim"] = "Label page median <= 2x the bare page's, idle and during a judge run"
    results["ratio_aim_met"] = all(results[phase]["ratio_to_bare"] <= 2 for phase, _ in phases)
    print(json.dumps({k: (_without_latencies(v) if isinstance(v, dict) else v)
                      for k, v in results.items()}, indent=2))
    suffix = f"-limit{args.judge_limit}" if args.judge_limit else ""
    out = REPO / "test-artifacts" / f"label_latency{suffix}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if ok else 1


def _server_runs(runs_file: Path, page: str, n: int) -> dict[str, float]:
    """Median wall and CPU ms of the server's script runs for the last ``n`` key presses.

    And the median number of messages a run sent to the browser: each one is handed to the
    server's event loop thread, which serialises and sends it while holding the GIL.
    """
    runs = [json.loads(line) for line in runs_file.read_text().splitlines()]
    mine = [r for r in runs if r["page"] == page][-n:]
    if not mine:
        return {}
    return {"server_run_median_ms": round(statistics.median(r["ms"] for r in mine), 1),
            "server_cpu_median_ms": round(statistics.median(r["cpu_ms"] for r in mine), 1),
            "messages_median": statistics.median(r["messages"] for r in mine),
            "db_median_ms": round(statistics.median(r["db_ms"] for r in mine), 1),
            "db_statements_median": statistics.median(len(r["statements"]) for r in mine)}


def _without_latencies(value: dict[str, Any]) -> dict[str, Any]:
    return {k: (_without_latencies(v) if isinstance(v, dict) else v)
            for k, v in value.items() if k != "latencies_ms"}


def _items(db_path: Path) -> int | None:
    """Items in the bench dataset of an existing file, else ``None``."""
    if not db_path.exists():
        return None
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return int(con.execute("SELECT count(*) FROM items WHERE dataset = ?",
                               [DATASET]).fetchall()[0][0])
    except duckdb.Error:
        return None
    finally:
        con.close()


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
