"""Real-browser test of the Ider widget panel: Voilà serves the dashboard, Chromium drives it.

nbval executes the notebooks but never fires a widget callback, so a broken ``observe``
wiring would pass it.  Here Debian's Chromium (``/usr/bin/chromium``, driven by Playwright;
never ``playwright install``) loads ``notebooks/panels/ider_panel.ipynb`` (the dashboard
``make panel`` serves) in Voilà, checks what a reader sees first, changes the controls of
``build_panel()`` and reads back the verdict text, the plot image and the arm's frames that
the kernel sends.  ``OPALG_BROWSER_NOTEBOOK=path`` serves another notebook with a panel (e.g.
the whole ``08_ider_control_forces.ipynb``, slow) through the same checks.

Needs the ``browser`` extra (``make test`` installs it) and ``sudo apt-get install chromium``.
Without Chromium, Voilà or Playwright the test is skipped, except with ``CI=true``, where it
fails (``.ci/run`` installs Chromium).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser import launch, loopback_only, require_chromium_and_playwright, unavailable
from helpers import relative_links

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "notebooks" / "panels" / "ider_panel.ipynb"
NOTEBOOK = Path(os.environ.get("OPALG_BROWSER_NOTEBOOK") or DASHBOARD).resolve()
VOILA = Path(sys.executable).parent / "voila"
MISSING_EXTRA = "Voilà or Playwright is not installed: pip install -e '.[browser]' (make test does)"
VIEWPORT = {"width": 1280, "height": 800}   # "above the fold" is judged in this window

START_TIMEOUT = 60.0       # s, until Voilà answers a static file
CULL_IDLE = 3              # s: the kernel of a closed page is culled after this idle time
#: The instructions of the dashboard's first cell, as the reader sees them; step 8 does what they say.
INSTRUCTIONS = "press Enter or Apply: the panel switches to custom A and runs it"
# Voilà executes every cell before it sends the page: ~5–25 s for the dashboard (a kernel, the
# imports, two runs and two figures; the upper end on a loaded 2-core machine), minutes for
# the whole lecture notebook.
FIRST_RENDER_MS = 120_000 if NOTEBOOK == DASHBOARD else 600_000
STEP_MS = 30_000           # one callback: a simulation (< 0.5 s), a figure and a PNG (~0.5 s)

VERDICT = ".w-verdict .widget-html-content"
PLOT_IMG = ".w-plot img"
ARM_IMG = ".w-arm"          # the ipywidgets Image is the <img> itself


def _require_tools():
    require_chromium_and_playwright()
    try:
        import voila  # noqa: F401
    except ImportError as e:
        unavailable(f"{MISSING_EXTRA} ({e})")
    if not VOILA.exists():
        unavailable(f"{MISSING_EXTRA} (no voila executable at {VOILA})")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM the server itself (it shuts its kernels down), SIGKILL after the grace period."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=grace)


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="opalg-browser-") as d:
        yield Path(d)


@pytest.fixture(scope="module")
def voila_url(workdir):
    _require_tools()
    if not NOTEBOOK.exists():
        pytest.fail(f"{NOTEBOOK} is missing", pytrace=False)
    notebook = NOTEBOOK
    if not notebook.is_relative_to(ROOT):
        pytest.fail(f"OPALG_BROWSER_NOTEBOOK must be inside the repository ({ROOT}): Voilà serves it", pytrace=False)
    what = notebook.relative_to(ROOT).as_posix()
    port = _free_port()
    log = open(workdir / "voila.log", "wb")
    # As `make panel` serves it: the repository, with notebooks/panels/voila.json, except that a
    # closed page's kernel is culled after CULL_IDLE s (the file says 120 s) so that it is measured.
    proc = subprocess.Popen(
        [str(VOILA), str(ROOT), "--Voila.config_file_paths=notebooks/panels", "--no-browser",
         f"--port={port}", "--Voila.ip=127.0.0.1", "--Voila.port_retries=0",
         f"--MappingKernelManager.cull_idle_timeout={CULL_IDLE}", "--MappingKernelManager.cull_interval=1"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"voila exited with {proc.returncode}; log:\n"
                            + (workdir / "voila.log").read_text(errors="replace"), pytrace=False)
            try:
                with urllib.request.urlopen(f"{base}/voila/static/favicon.ico", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"voila not ready after {START_TIMEOUT:g} s; log:\n"
                            + (workdir / "voila.log").read_text(errors="replace"), pytrace=False)
            time.sleep(0.25)
        proc.base = base
        yield base + "/voila/render/" + what, what, proc
    finally:
        _stop(proc)
        log.close()


@pytest.fixture(scope="module")
def browser():
    _require_tools()
    from playwright.sync_api import sync_playwright

    # Loopback only: ipywidgets asks a CDN for a font stylesheet, and nothing else may leave.
    with sync_playwright() as p, loopback_only() as offline_args:
        b = launch(p, offline_args)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    try:
        yield pg
    finally:
        context.close()


class Driver:
    """Reads and changes the panel; on a failed check saves element screenshots."""

    def __init__(self, page, log: Path, served: str):
        self.page, self.log, self.served = page, log, served

    def verdict(self) -> str:
        return self.page.locator(VERDICT).inner_text().strip()

    def img(self) -> str:
        return self.page.locator(PLOT_IMG).get_attribute("src") or ""

    def fail(self, step: str, why: str):
        # Kept after the test (the module's work dir is removed): the path is in the message.
        self.shots = Path(tempfile.mkdtemp(prefix="opalg-browser-failure-"))
        for css in (".w-verdict", ".w-plot", ".w-preset", ".w-custom", ".w-arm"):
            try:
                self.page.locator(css).first.screenshot(path=str(self.shots / f"{step}{css}.png"),
                                                        timeout=5_000)
            except Exception:  # noqa: BLE001 - a screenshot must not hide the real failure
                pass
        try:
            self.page.screenshot(path=str(self.shots / f"{step}-page.png"), full_page=True)
        except Exception:  # noqa: BLE001
            pass
        try:
            (self.shots / "voila.log").write_bytes(self.log.read_bytes())
        except OSError:
            pass
        pytest.fail(f"step {step!r}: {why}\n  served: {self.served}"
                    f"\n  verdict now: {self._safe(self.verdict)!r}"
                    f"\n  page errors: {self.page.errors}\n  screenshots: {self.shots}"
                    f"\n  end of the Voilà log:\n{self._log_tail()}", pytrace=False)

    def _log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError as e:
            return f"<{e}>"

    @staticmethod
    def _safe(f):
        try:
            return f()
        except Exception as e:  # noqa: BLE001
            return f"<{e}>"

    def wait(self, step: str, starts: str, old_img: str | None = None, timeout=STEP_MS,
             nonempty: bool = False):
        """Wait until the verdict starts with `starts` and (if given) the image differs."""
        from playwright.sync_api import TimeoutError as PwTimeout

        try:
            self.page.wait_for_function(
                """([vsel, isel, starts, old, nonempty]) => {
                    const v = document.querySelector(vsel);
                    if (!v || !v.innerText.trim().startsWith(starts)) return false;
                    if (nonempty && !v.innerText.trim()) return false;
                    if (old === null) return true;
                    const i = document.querySelector(isel);
                    return !!i && i.src !== old;
                }""", arg=[VERDICT, PLOT_IMG, starts, old_img, nonempty], timeout=timeout, polling=100)
            return
        except PwTimeout:
            pass
        what = f"verdict starting with {starts!r}" if starts else "verdict"
        if old_img is not None:
            what += " and a new plot image"
        self.fail(step, f"no {what} within {timeout / 1000:g} s")

    def select(self, css: str, value: str):
        self.page.locator(f"{css} select").select_option(value)

    def enter_text(self, css: str, text: str):
        box = self.page.locator(f"{css} input")
        box.fill(text)
        box.press("Enter")


    def type_text(self, css: str, text: str):
        """Type into a text box without Enter (nothing is sent until Enter or a blur)."""
        self.page.locator(f"{css} input").fill(text)

    def arm(self) -> str:
        return self.page.locator(ARM_IMG).get_attribute("src") or ""

    def watch_plot(self) -> None:
        """Record every distinct plot image from now on (``window.__plots``), to count runs."""
        self.page.evaluate("""(isel) => {
            window.__plots = [];
            const note = () => {
                const i = document.querySelector(isel);
                if (i && !window.__plots.includes(i.src)) window.__plots.push(i.src);
            };
            note();
            new MutationObserver(note).observe(document.body, {subtree: true, childList: true,
                                                               attributes: true});
        }""", PLOT_IMG)

    def plots_seen(self) -> int:
        return self.page.evaluate("() => window.__plots.length")

    def drag_slider(self, css: str, fraction: float, steps: int = 12):
        """Drag a slider's handle to ``fraction`` of its track in ``steps`` pauses of 80 ms."""
        handle = self.page.locator(f"{css} .noUi-handle")
        track = self.page.locator(f"{css} .noUi-target").bounding_box()
        box = handle.bounding_box()
        x0, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        x1 = track["x"] + fraction * track["width"]
        self.page.mouse.move(x0, y)
        self.page.mouse.down()
        for k in range(1, steps + 1):
            self.page.mouse.move(x0 + (x1 - x0) * k / steps, y)
            self.page.wait_for_timeout(80)
        self.page.mouse.up()


def _load(page, url, d):
    from playwright.sync_api import Error as PwError

    try:  # Voilà sends the page only after it has executed the whole notebook
        page.goto(url, timeout=FIRST_RENDER_MS)
        load_error = None
    except PwError as e:
        load_error = str(e).splitlines()[0]
    if load_error:
        d.fail("load", f"the page did not load: {load_error}")


def test_ider_panel_in_browser(page, voila_url, workdir):
    """First render, the animation, then every control, as a reader would use them."""
    url, served, _proc = voila_url
    d = Driver(page, workdir / "voila.log", served)
    from playwright.sync_api import Error as PwError

    t0 = time.monotonic()
    _load(page, url, d)

    # 1. Initial state: the default choice, feasible, an inline PNG with a κ axis, the arm and
    #    its Play control; the plots start above the fold of a 1280 x 800 window.
    d.wait("first render", "feasible:", timeout=FIRST_RENDER_MS)
    first_render = time.monotonic() - t0
    if (choice := page.locator(".w-preset select").input_value()) != "no motor at joint 1":
        d.fail("first render", f"the panel opens on {choice!r}, not 'no motor at joint 1' "
                               "(a test cell moved the panel the reader sees?)")
    try:
        page.locator(PLOT_IMG).wait_for(timeout=STEP_MS)
        page.locator(f"{ARM_IMG}[src]").wait_for(timeout=STEP_MS)
    except PwError:
        d.fail("first render", "no plot image or no arm image")
    img_default = d.img()
    if not img_default.startswith("data:image/png;base64,"):
        d.fail("first render", f"the plot is not an inline PNG: {img_default[:60]!r}")
    # The figure's axes are named on the plot widget (w-axes-<gid>), and in its alt text.
    if not page.locator(".w-plot.w-axes-kappa.w-axes-moments").count():
        d.fail("first render", "the figure has no κ(t) axis (no .w-plot.w-axes-kappa)")
    if "κ(t)" not in (page.locator(PLOT_IMG).get_attribute("alt") or ""):
        d.fail("first render", "the plot's alt text does not describe κ(t)")
    if page.locator(".w-play button").count() < 2 or not page.locator(".w-frame .noUi-handle").count():
        d.fail("first render", "no Play widget with its sample slider")
    if page.locator(".w-custom input").get_attribute("placeholder") is None or \
            "Enter" not in page.locator(".w-custom input").get_attribute("placeholder"):
        d.fail("first render", "the custom-A box does not say how to apply it (Enter)")
    if NOTEBOOK == DASHBOARD:
        top = page.locator(PLOT_IMG).bounding_box()["y"]
        if top >= VIEWPORT["height"] - 200:
            d.fail("first render", f"the plots start at y = {top:.0f} px, below the fold of "
                                   f"{VIEWPORT['height']} px")
    print(f"\nfirst render of {served}: {first_render:.1f} s after the request")

    # 2. Play steps the arm through the run: new frames arrive; pause stops them.
    arm_end = d.arm()
    page.locator(".w-play button").nth(0).click()  # play (from the end it restarts at sample 0)
    try:
        page.wait_for_function("([sel, old]) => document.querySelector(sel).src !== old",
                               arg=[ARM_IMG, arm_end], timeout=STEP_MS, polling=100)
        arm_mid = d.arm()   # a second new frame after that one: the arm keeps moving
        page.wait_for_function("([sel, old]) => document.querySelector(sel).src !== old",
                               arg=[ARM_IMG, arm_mid], timeout=STEP_MS, polling=100)
    except PwError:
        d.fail("play", "pressing Play did not move the arm (no new frames)")
    page.locator(".w-play button").nth(1).click()  # pause
    # Frames already requested still arrive; then the sample must rest for a whole second
    # (while playing it moves every 200 ms, seen by a 100-ms poll), within the 2.5 s that the
    # test used to wait (1.5 s for late frames, then a 1-s window).
    try:
        page.wait_for_function("""(sel) => {
            const now = performance.now(), text = document.querySelector(sel).innerText;
            if (!window.__rest || window.__rest.text !== text) window.__rest = {text, since: now};
            return now - window.__rest.since >= 1000;
        }""", arg=".w-frame .widget-readout", timeout=2_500, polling=100)
    except PwError:
        d.fail("pause", "the sample kept moving after Pause")

    # 3. Preset dropdown: no motor at joint 3 stops as singular at t ≈ 0.26 s; new plot.
    d.select(".w-preset", "no motor at joint 3")
    d.wait("no motor at joint 3", "infeasible: stopped at t = 0.2", old_img=img_default)
    m = re.match(r"infeasible: stopped at t = (\d+\.\d+) s", d.verdict())
    if not m or not 0.24 <= float(m.group(1)) <= 0.28:
        d.fail("no motor at joint 3", "expected a stop near t = 0.26 s")
    img_joint3 = d.img()

    # 4. Bad custom text keeps the last good state.  Garbage entered while a preset is chosen
    #    switches the choice to "custom A" and shows the input error; the joint-3 plot stays.
    d.enter_text(".w-custom", "garbage")
    d.wait("custom A with garbage", "input error")
    if page.locator(".w-preset select").input_value() != "custom A":
        d.fail("custom A with garbage", "Enter did not switch the choice to 'custom A'")
    page.wait_for_timeout(500)  # a wrongly redrawn plot would arrive right after the verdict
    if d.img() != img_joint3:
        d.fail("custom A with garbage", "the plot changed although the input was invalid")

    # 5. Valid text + Enter (the Text commits on Enter): feasible again, a new plot.
    d.enter_text(".w-custom", "0 1 0; 0 0 1")
    d.wait("custom A = 0 1 0; 0 0 1", "feasible:", old_img=img_joint3)
    verdict_joint, img_custom = d.verdict(), d.img()

    # 6. Inertia dropdown: same directions, other inertia model, other peak moments.
    d.select(".w-inertia", "com")
    d.wait("inertia com", "feasible:", old_img=img_custom)
    if d.verdict() == verdict_joint:
        d.fail("inertia com", f"the verdict did not change with the inertia: {verdict_joint!r}")
    img_com = d.img()

    # 7. Garbage typed while "custom A" is chosen: error message, the last plot stays.
    d.enter_text(".w-custom", "garbage")
    d.wait("custom text garbage", "input error")
    page.wait_for_timeout(500)
    if d.img() != img_com:
        d.fail("custom text garbage", "the plot changed although the input was invalid")

    # 8. What the instructions say: with a preset chosen, Enter in the custom-A box (its text
    #    unchanged) switches to "custom A" and runs it; so does Apply after typing another A.
    if INSTRUCTIONS not in page.inner_text("body"):
        d.fail("instructions", f"the dashboard does not say {INSTRUCTIONS!r}")
    d.enter_text(".w-custom", "0 1 0; 0 0 1")             # a valid text again (step 7 left garbage)
    d.wait("valid custom text", "feasible:", old_img=None)
    d.select(".w-preset", "no motor at joint 2")
    d.wait("no motor at joint 2", "", old_img=img_com)
    verdict_joint2, img_joint2 = d.verdict(), d.img()
    d.page.locator(".w-custom input").press("Enter")    # the text is unchanged: no new value
    d.wait("Enter from a preset", "", old_img=img_joint2)
    if page.locator(".w-preset select").input_value() != "custom A":
        d.fail("Enter from a preset", "Enter did not switch the choice to 'custom A'")
    d.select(".w-preset", "no motor at joint 2")
    d.wait("no motor at joint 2 again", "", old_img=d.img())
    verdict_joint2, img_joint2 = d.verdict(), d.img()
    d.type_text(".w-custom", "0.5 1 0; 0 0 1")
    page.wait_for_timeout(300)
    if d.verdict() != verdict_joint2 or d.img() != img_joint2:
        d.fail("typing without Enter", "text typed while a preset is chosen changed the panel")
    page.locator(".w-apply button, button.w-apply").first.click()
    d.wait("Apply", "feasible:", old_img=img_joint2)
    if page.locator(".w-preset select").input_value() != "custom A":
        d.fail("Apply", "Apply did not switch the choice to 'custom A'")
    img_apply = d.img()

    # 9. Sliders do not flood the kernel: a 1-s drag of the gravity slider (12 moves) runs one
    #    simulation, at the release (continuous_update=False) — exactly one new plot.
    d.watch_plot()
    d.drag_slider(".w-gravity", 0.3)
    d.wait("gravity drag", "", old_img=img_apply)
    page.wait_for_timeout(3_000)  # further runs, if the drag had queued them, arrive in this time
    readout = page.locator(".w-gravity .widget-readout").inner_text()
    if float(readout) < 1.0:
        d.fail("gravity drag", f"the slider did not move (readout {readout})")
    if (n := d.plots_seen()) != 2:  # the plot before the drag and the one after
        d.fail("gravity drag", f"a drag produced {n - 1} plots, expected 1 (one run at release)")

    if page.errors:
        d.fail("page errors", f"uncaught JavaScript exceptions: {page.errors}")


def _kernels(pid: int) -> list[int]:
    """The kernel processes Voilà (``pid``) has running: its descendants running ipykernel."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            try:
                if b"ipykernel" in (Path("/proc") / str(child) / "cmdline").read_bytes():
                    found.append(child)
            except OSError:
                pass
    return found


def test_a_closed_page_leaves_no_kernel(browser, voila_url, workdir):
    """Each page load starts a kernel; when the page closes, the kernel goes (Voilà's culling of
    idle kernels without a connection, MappingKernelManager in notebooks/panels/voila.json; here
    after CULL_IDLE s), instead of staying alive until the server stops."""
    url, served, proc = voila_url
    deadline = time.monotonic() + CULL_IDLE + 30      # the idle time, the 1-s cull interval, a loaded machine
    while _kernels(proc.pid) and time.monotonic() < deadline:     # an earlier test's page's kernel
        time.sleep(0.5)
    before = _kernels(proc.pid)
    assert before == [], f"kernels of closed pages still alive: {before}"
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.errors = []
    d = Driver(page, workdir / "voila.log", served)
    _load(page, url, d)
    d.wait("first render", "feasible:", timeout=FIRST_RENDER_MS)
    opened = _kernels(proc.pid)
    assert len(opened) == len(before) + 1, f"one kernel per page: {before} before, {opened} with the page open"
    context.close()
    deadline = time.monotonic() + CULL_IDLE + 30      # the idle time, the 1-s cull interval, a loaded machine
    while _kernels(proc.pid) != before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _kernels(proc.pid) == before, (f"the closed page's kernel is still alive {CULL_IDLE + 30} s later "
                                          f"(kernels {_kernels(proc.pid)}, before {before})")


def test_every_notebook_link_reaches_its_target_in_voila(voila_url):
    """Voilà serves the repository as `make panel` does: from each notebook's page, each relative
    link resolves to the file it names.  A Markdown or image target is fetched (redirected to
    /voila/files/, 200); a notebook target is a /voila/render/ page of an existing notebook (not
    fetched: Voilà would execute the whole notebook)."""
    import urllib.parse
    _url, _served, proc = voila_url
    notebooks = sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("notebooks/panels/*.ipynb"))
    checked, bad = 0, []
    for nb in notebooks:
        page_url = f"{proc.base}/voila/render/{nb.relative_to(ROOT).as_posix()}"
        for link in relative_links(nb):
            target = urllib.parse.urljoin(page_url, link)
            path = urllib.parse.unquote(urllib.parse.urlparse(target).path)
            if not path.startswith("/voila/render/"):
                bad.append(f"{nb.name}: {link} -> {path} (outside what Voilà serves)")
                continue
            rel = path[len("/voila/render/"):]
            if not (ROOT / rel).is_file():
                bad.append(f"{nb.name}: {link} -> {rel} (no such file)")
            elif not rel.endswith(".ipynb"):
                try:
                    with urllib.request.urlopen(target, timeout=30) as r:
                        ok = r.status == 200 and r.url.startswith(f"{proc.base}/voila/files/")
                except urllib.error.HTTPError as e:
                    ok = False
                    rel += f" (HTTP {e.code})"
                if not ok:
                    bad.append(f"{nb.name}: {link} -> {rel} not served")
            checked += 1
    assert checked >= 20, f"only {checked} relative links found: is the link pattern right?"
    assert not bad, "links that do not work in Voilà:\n" + "\n".join(bad)
