"""The correction workbench (`spoolparse annotate`) in a real browser: headless Chromium driven by
Selenium loads the page, corrects one arc with the keyboard and one with the mouse, accepts a
sentence whole, changes a word's tag, flags one as bad, and reads the correction files the
server wrote into annotated/. Screenshots go to target/screenshots/ (first load, a keyboard
correction, a 65-word sentence, a 480px window with and without the label chooser, the models
view, the tag, lemma and label choosers, a changed tag and lemma).

The server is started on a spool made here: a model trained by conftest's `data` fixture parses
a few en_ewt dev sentences with `--min-confidence 0.99`, and its `--rejected` output is the
spool's lowconf/ file. With WORKBENCH_URL set, an already running server is used instead (e.g.
scripts/workbench-mock.py); WORKBENCH_ANNOTATED then names its annotated/ directory (without it
the files are not checked) and WORKBENCH_TOKEN the token to enter if the page asks for one.

Needs Debian's chromium and chromium-driver and Python selenium (scripts/python-test.sh installs
them); skips with a message where they are missing."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest
from conftest import REPO, UD, Data, decompress, note, sentences

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SCREENSHOTS = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "screenshots"
TOKEN = os.environ.get("WORKBENCH_TOKEN", "")
REASON = "broken tokenization (browser test)"


class Workbench:
    """A running server: its URL, when known its annotated/ directory, and the kind of model it
    serves (`linear` or `neural`; empty for a server started elsewhere)."""

    def __init__(self, url: str, annotated: Optional[Path], kind: str = ""):
        self.url = url.rstrip("/")
        self.annotated = annotated
        self.kind = kind


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_http(url: str, process: subprocess.Popen, log: Path, seconds: float = 60) -> None:
    """Until the server answers anything at all (a 401 counts: it is up)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"spoolparse annotate exited with {process.returncode}:\n{log.read_text()}")
        try:
            urllib.request.urlopen(f"{url}/api/stats", timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"spoolparse annotate did not answer on {url} within {seconds} s:\n{log.read_text()}")


def make_spool(data: Data, root: Path, port: int, model: Path) -> Path:
    """The spool of a daemon serving `model` that wrote a lowconf/ file: a config and
    OUTPUT/lowconf/dev.conllu.zst, the sentences of en_ewt dev that the small model parses below
    0.99 (most of them). Among them
    are short ones (the corrections) and the longest of a few hundred (the long screenshot)."""
    dev = sentences(decompress(UD / "en_ewt" / "dev.conllu.zst").decode())[700:1000]  # conftest uses 0-700
    size = lambda s: sum(1 for line in s.splitlines() if line.split("\t")[0].isdigit())
    short = [s for s in dev if 6 <= size(s) <= 16][:10]
    longest = max(dev, key=size)
    picked = short[:3] + [longest] + short[3:]
    (root / "input.conllu").write_text("".join(picked))
    spool, output = root / "spool", root / "out"
    (output / "lowconf").mkdir(parents=True)
    lowconf = output / "lowconf" / "dev.conllu.zst"
    data.run("parse", "--model", model, root / "input.conllu", "--output", root / "accepted.conllu",
             "--min-confidence", "0.99", "--rejected", lowconf)
    found = decompress(lowconf).decode().count("# sent_id")
    assert found >= 5, f"only {found} of {len(picked)} sentences went below 0.99: too few for the test"
    # A model history as the daemon writes it: a configured model, a promotion and a rollback in
    # models/history.jsonl, and the reports of two cycles (the promoted candidate's and a
    # rejected one's) beside them: what the Models view draws.
    models = spool / "models"
    models.mkdir(parents=True)
    history = [
        {"time": 1763609400, "event": "configured", "model": "m-a.model", "from": None},
        {"time": 1763695800, "event": "promoted", "model": "m-b.model", "from": "m-a.model"},
        {"time": 1763889120, "event": "rollback", "model": "m-a.model", "from": "m-b.model"},
    ]
    (models / "history.jsonl").write_text("".join(json.dumps(h) + "\n" for h in history))
    for name, started, decision, las, whole in [("m-b", 1763695700, "promoted", 87.31, (80.5, 84.0)),
                                                 ("m-c", 1763782200, "rejected", 86.55, (72.5, 70.0))]:
        report = {"decision": decision, "reasons": [f"{name} {decision}"], "started": started, "seconds": 1.0,
                  "current": {"model": "m-a.model", "heldout_uas": 90.0, "heldout_las": 87.09,
                              "annotations_las": 75.0 if decision == "promoted" else 0.0},
                  "candidate": {"model": f"{name}.model", "heldout_uas": 90.0, "heldout_las": las, "annotations_las": 81.2},
                  "gate": {"annotations_whole": {"serving_las": whole[0], "candidate_las": whole[1]}}}
        (models / f"{name}.json").write_text(json.dumps(report))
    config = root / "spoolparse.toml"
    config.write_text(
        "[paths]\n"
        f'spool = "{spool}"\n'
        f'output = "{output}"\n'
        f'model = "{model}"\n'
        f'annotated = "{spool / "annotated"}"\n'
        "\n[annotate]\n"
        f'listen = "127.0.0.1:{port}"\n'
    )
    return config


@pytest.fixture(scope="module", params=["linear", "neural"])
def workbench(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workbench]:
    """The server every browser test uses: once serving the linear test model, once a neural one
    (conftest's `neural`), so that each test runs with both kinds; with WORKBENCH_URL, that
    server, once."""
    if os.environ.get("WORKBENCH_URL"):
        annotated = os.environ.get("WORKBENCH_ANNOTATED")
        if not annotated:
            note("WORKBENCH_ANNOTATED is not set: the correction files are not checked")
        yield Workbench(os.environ["WORKBENCH_URL"], Path(annotated) if annotated else None)
        return
    data: Data = request.getfixturevalue("data")
    if not data.from_treebank:
        note(f"{UD / 'en_ewt' / 'dev.conllu.zst'} not found: the workbench browser test needs en_ewt dev")
        pytest.skip("the workbench browser test needs en_ewt dev (../shared/data/ud)")
    model = data.model if request.param == "linear" else request.getfixturevalue("neural")
    yield from serve(data, tmp_path_factory.mktemp("workbench"), model=model, kind=request.param)


def serve(data: Data, root: Path, more_config: Callable[[Path], str] = lambda _: "",
          sample_every: int = 0, model: Optional[Path] = None, kind: str = "linear") -> Iterator[Workbench]:
    """`spoolparse annotate` serving `model` (default: the linear test model) on a spool made in
    `root` (`make_spool`), with `more_config(root)` added to its configuration, until the caller
    is done with it; one task in `sample_every` a sentence of the uniform sample (0, the tests'
    default: tasks in the queue's order)."""
    port = free_port()
    config = make_spool(data, root, port, model or data.model)
    config.write_text(config.read_text() + more_config(root))
    log = root / "annotate.log"
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        process = subprocess.Popen([str(data.bin), "annotate", "--config", str(config), "--listen", f"127.0.0.1:{port}",
                                    "--sample-every", str(sample_every)],
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_http(url, process, log)
        yield Workbench(url, root / "spool" / "annotated", kind)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output = log.read_text(errors="replace")
        if output.strip():
            print(f"spoolparse annotate's output:\n{output}")


def start_chromium(profile: Path):
    """Headless Chromium under Selenium, with its profile in `profile`; skips the test where
    either is missing."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).is_file()]
    if missing:
        note(f"{', '.join(missing)} not found: the workbench browser test needs Debian's chromium and chromium-driver")
        pytest.skip(f"{', '.join(missing)} not found (apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        note("selenium is not installed: pip install -r python/requirements-dev.txt")
        pytest.skip("selenium is not installed")
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not look for drivers online
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,900",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


@pytest.fixture(scope="module")
def browser(workbench: Workbench, tmp_path_factory: pytest.TempPathFactory):
    driver = start_chromium(tmp_path_factory.mktemp("chromium-profile"))
    # Screenshots of the neural server's pages beside the linear one's, not over them.
    driver.screenshot_prefix = "" if workbench.kind in ("", "linear") else f"{workbench.kind}-"
    try:
        driver.get(workbench.url + "/")
        authenticate(driver)
        yield driver
    finally:
        driver.quit()


# ------------------------------------------------------------------ page helpers

def wait(driver, condition: Callable[[], object], what: str, seconds: float = 20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    error = driver.execute_script("return document.getElementById('error').hidden ? '' : document.getElementById('error-text').textContent")
    raise AssertionError(f"timed out waiting for {what}" + (f"; the page shows the error: {error}" if error else ""))


def authenticate(driver) -> None:
    """Enters WORKBENCH_TOKEN if the page asks for a token (the server answered 401)."""
    time.sleep(0.3)
    if driver.execute_script("return !document.getElementById('auth').hidden"):
        assert TOKEN, "the server asks for a token: set WORKBENCH_TOKEN"
        driver.find_element("id", "auth-token").send_keys(TOKEN + "\n")


def settled(driver) -> None:
    """No request in flight (the page counts them on body[data-pending])."""
    wait(driver, lambda: driver.execute_script("return document.body.dataset.pending === '0'"), "the API requests to finish")


def task(driver) -> dict:
    """The task on the page: its ids and every word as the data attributes of its SVG group."""
    return driver.execute_script("""
        const box = document.getElementById('sentence');
        if (document.getElementById('task').hidden) return {task: null, words: []};
        const words = [...box.querySelectorAll('g.word[data-word-id]')].filter((g) => g.dataset.wordId !== '0').map((g) => ({
            id: Number(g.dataset.wordId), head: Number(g.dataset.head), deprel: g.dataset.deprel, upos: g.dataset.upos,
            state: g.dataset.state, current: g.classList.contains('current'), picking: g.classList.contains('picking'),
            tag_fixed: g.classList.contains('tag-fixed'), lemma: g.dataset.lemma,
            lemma_fixed: g.classList.contains('lemma-fixed')}));
        return {task: box.dataset.task, sent_id: box.dataset.sentId, words};
    """)


def word(driver, id: int) -> dict:
    return next(w for w in task(driver)["words"] if w["id"] == id)


ENTER, ESCAPE = "\ue007", "\ue00c"  # selenium's Keys.ENTER and Keys.ESCAPE


def proposed(driver) -> int:
    """The head proposed by moving (h/l), -1 for none."""
    return int(driver.find_element("id", "sentence").get_attribute("data-proposed") or -1)


def propose_other_head(driver, w: dict, n: int) -> int:
    """Moves the proposed head of the current word `w` with l (right), or h (left) once the right
    end is reached, to a word that is not its head: that word's id."""
    key = "l"
    for _ in range(2 * n + 2):
        press(driver, key)
        p = proposed(driver)
        if p > 0 and p != w["head"]:
            return p
        if p in (-1, n) or (p == n - 1 and w["id"] == n):
            key = "h"
    raise AssertionError(f"no other head than {w['head']} found for word {w['id']}")


def press(driver, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    chain = ActionChains(driver)
    for key in keys:
        chain.send_keys(key)
    chain.perform()


def ctrl_enter(driver) -> None:
    """Submits, as an annotator who took the time to look: at least a second per word to check
    (spoolparse::workbench::review holds back arcs the queue rated likely wrong confirmed faster)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    flagged = driver.execute_script("return document.querySelectorAll('#sentence g.word.flagged').length")
    time.sleep(1.0 * flagged + 0.1)
    ActionChains(driver).key_down(Keys.CONTROL).send_keys(Keys.ENTER).key_up(Keys.CONTROL).perform()


def click_word(driver, id: int) -> None:
    element = driver.find_element("css selector", f'#sentence g.word[data-word-id="{id}"] rect.hit')
    driver.execute_script("arguments[0].scrollIntoView({inline: 'center', block: 'nearest'})", element)
    element.click()


def next_task(driver, before: str) -> None:
    """Waits for the page to show another task than `before` (or the empty queue)."""
    wait(driver, lambda: task(driver)["task"] != before, f"the task after {before}")
    settled(driver)


def screenshot(driver, name: str) -> None:
    path = SCREENSHOTS / f"workbench-{getattr(driver, 'screenshot_prefix', '')}{name}.png"
    assert driver.save_screenshot(str(path)), f"no screenshot {path}"


# ------------------------------------------------------------------ correction files

def stored_files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file() and not p.name.startswith(".")]


def stored_block(annotated: Path, sent_id: str) -> Optional[str]:
    """The sentence `sent_id` as a correction file of annotated/ (not rejected/ or suspect/) has it."""
    for path in stored_files(annotated):
        parts = path.relative_to(annotated).parts
        if "rejected" in parts or "suspect" in parts or ".conllu" not in path.name or path.name.endswith(".error"):
            continue
        for block in sentences(decompress(path).decode()):
            if f"# sent_id = {sent_id}\n" in block:
                return block
    return None


def rows(block: str) -> dict[int, list[str]]:
    """The word lines of a sentence, by id, split into columns."""
    split = [line.split("\t") for line in block.splitlines() if line and not line.startswith("#")]
    return {int(r[0]): r for r in split if r[0].isdigit()}


def stored_tree(annotated: Path, sent_id: str) -> Optional[dict[int, tuple[str, str]]]:
    """The sentence `sent_id` in a correction file of annotated/ (not rejected/): id -> (HEAD, DEPREL)."""
    block = stored_block(annotated, sent_id)
    return None if block is None else {i: (r[6], r[7]) for i, r in rows(block).items()}


def wait_stored_block(workbench: Workbench, sent_id: str) -> Optional[str]:
    if workbench.annotated is None:
        return None
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        block = stored_block(workbench.annotated, sent_id)
        if block is not None:
            return block
        time.sleep(0.1)
    raise AssertionError(f"no correction file in {workbench.annotated} holds {sent_id}: {stored_files(workbench.annotated)}")


def wait_stored(workbench: Workbench, sent_id: str) -> Optional[dict[int, tuple[str, str]]]:
    block = wait_stored_block(workbench, sent_id)
    return None if block is None else {i: (r[6], r[7]) for i, r in rows(block).items()}


# ------------------------------------------------------------------ the tests

def in_view(driver) -> dict:
    """Where the current word's column and its arc's label are, against the tree's visible part:
    {word: [left, right], label: [left, right], view: [left, right]} in the tree's coordinates."""
    return driver.execute_script("""
        const box = document.getElementById('sentence');
        const current = box.querySelector('g.word.current');
        const hit = current.querySelector('rect.hit');
        const span = (r) => [Number(r.getAttribute('x')), Number(r.getAttribute('x')) + Number(r.getAttribute('width'))];
        const label = box.querySelector(`.labels g[data-dep="${current.dataset.wordId}"] rect.label-bg`);
        return {word: span(hit), label: span(label), view: [box.scrollLeft, box.scrollLeft + box.clientWidth]};
    """)


def crowded_words(driver, apart: float = 1.5) -> list:
    """Words where the arrowhead of their own arc and the legs of the arcs leaving them are closer
    than `apart` px: each word's ends, sorted, with the word's id."""
    return driver.execute_script("""
        const box = document.getElementById('sentence');
        const ends = new Map();
        const add = (id, x) => { if (!ends.has(id)) ends.set(id, []); ends.get(id).push(Number(x)); };
        for (const g of box.querySelectorAll('.arcs g.arc[data-dep]')) {
            add(g.dataset.dep, g.dataset.x2);
            if (g.dataset.x1 !== undefined) add(g.dataset.head, g.dataset.x1);
        }
        const crowded = [];
        for (const [id, xs] of ends) {
            xs.sort((a, b) => a - b);
            if (xs.some((x, i) => i > 0 && x - xs[i - 1] < arguments[0])) crowded.push([id, xs]);
        }
        return crowded;
    """, apart)


def overlapping_labels(driver) -> list:
    """Pairs of arc labels drawn over each other: (label, label) by their text."""
    return driver.execute_script("""
        const boxes = [...document.querySelectorAll('#sentence .labels g')].map((g) => {
            const r = g.querySelector('rect.label-bg');
            const x = Number(r.getAttribute('x')), y = Number(r.getAttribute('y'));
            return {text: g.textContent, x0: x, x1: x + Number(r.getAttribute('width')), y0: y, y1: y + Number(r.getAttribute('height'))};
        });
        const pairs = [];
        boxes.forEach((a, i) => boxes.slice(i + 1).forEach((b) => {
            if (a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) pairs.push([a.text, b.text]);
        }));
        return pairs;
    """)


def overlaps_tree(driver, dialog_id: str) -> bool:
    """Whether the open dialog `dialog_id` covers any of the tree's visible box."""
    return driver.execute_script("""
        const tree = document.getElementById('sentence').getBoundingClientRect();
        const d = document.querySelector(`#${arguments[0]} .dialog`).getBoundingClientRect();
        return d.top < tree.bottom && d.bottom > tree.top && d.left < tree.right && d.right > tree.left;
    """, dialog_id)


def test_a_long_sentence_scrolls_and_a_narrow_window_fits(browser) -> None:
    driver = browser
    # Run first, while every sentence is queued: skipped ones come back only when nothing else is
    # left, so each of the spool's sentences is shown once before any comes again.
    for _ in range(16):  # skip to the longest sentence of the spool (65 words)
        shown = task(driver)
        if not shown["task"] or len(shown["words"]) >= 60:
            break
        press(driver, "s")
        next_task(driver, shown["task"])
    shown = task(driver)
    assert len(shown["words"]) >= 60, f"no 60-word sentence in the queue (the last had {len(shown['words'])} words)"
    box = driver.find_element("id", "sentence")
    assert int(box.get_attribute("scrollWidth")) > int(box.get_attribute("clientWidth")), "a long sentence scrolls"
    # No leg of an arc runs into the arrowhead of another or over another leg, at any word.
    assert not crowded_words(driver), f"ends of arcs drawn on top of each other: {crowded_words(driver)}"
    # A label wider than its arc sits a level up rather than over its neighbour's.
    assert not overlapping_labels(driver), f"labels drawn over each other: {overlapping_labels(driver)}"
    # Each flagged word in turn: scrolled into view with its arc's label, however long the arc.
    for _ in range(4):
        press(driver, "j")
        at = in_view(driver)
        left, right = at["view"]
        assert left <= at["word"][0] and at["word"][1] <= right, f"the word asked about is out of view: {at}"
        assert left <= at["label"][0] and at["label"][1] <= right, f"the label of its arc is out of view: {at}"
    screenshot(driver, "3-long-sentence")

    driver.set_window_size(480, 900)
    time.sleep(0.3)
    screenshot(driver, "4-narrow-480px")
    page_width = driver.execute_script("return document.documentElement.scrollWidth")
    window_width = driver.execute_script("return window.innerWidth")
    assert page_width <= window_width, f"the page is {page_width}px wide in a {window_width}px window: only the tree may scroll"
    at = in_view(driver)
    assert at["view"][0] <= at["word"][0] and at["word"][1] <= at["view"][1], f"480px: the word asked about is out of view: {at}"
    # The label chooser opens below the tree, not over the arc it labels.
    press(driver, "/")
    wait(driver, lambda: driver.find_element("id", "label-chooser").is_displayed(), "the label chooser")
    screenshot(driver, "10-narrow-label-chooser")
    assert not overlaps_tree(driver, "label-chooser"), "480px: the label chooser covers the tree"
    press(driver, ESCAPE)
    driver.set_window_size(1280, 900)


def test_corrections_by_keyboard_and_mouse_are_stored(browser, workbench: Workbench) -> None:
    driver = browser
    wait(driver, lambda: task(driver)["words"], "the first sentence")
    settled(driver)
    screenshot(driver, "1-first-load")
    first = task(driver)

    # Nothing fixed yet: submitting says so, and sends nothing.
    ctrl_enter(driver)
    wait(driver, lambda: driver.find_element("id", "error").is_displayed(), "the error of an empty answer")
    press(driver, ESCAPE)
    wait(driver, lambda: not driver.find_element("id", "error").is_displayed(), "Escape to close the error")

    # Keyboard: move the proposed head of the current word off its head (never to ROOT), confirm
    # it with Enter, then choose a new label with the type-ahead chooser.
    current = next(w for w in first["words"] if w["current"])
    head = propose_other_head(driver, current, len(first["words"]))
    press(driver, ENTER)
    settled(driver)
    assert word(driver, current["id"])["head"] == head
    press(driver, "/")
    wait(driver, lambda: driver.find_element("id", "label-chooser").is_displayed(), "the label chooser")
    labels = [li.get_attribute("data-label") for li in driver.find_elements("css selector", "#label-list li[data-label]")]
    drawn = word(driver, current["id"])["deprel"]
    label = next((l for l in ("dep", "obl", "nmod") if l in labels and l != drawn), None)
    assert label, f"the chooser offers none of dep, obl, nmod: {labels}"
    driver.find_element("id", "label-input").send_keys(label)
    active = driver.find_element("css selector", "#label-list li.active").get_attribute("data-label")
    assert active == label, f"typing {label} offers {active} first"
    driver.find_element("id", "label-input").send_keys(ENTER)
    settled(driver)
    fixed = word(driver, current["id"])
    assert (fixed["head"], fixed["deprel"], fixed["state"]) == (head, label, "corrected"), fixed
    screenshot(driver, "2-keyboard-correction")
    assert not overlapping_labels(driver), f"labels drawn over each other: {overlapping_labels(driver)}"

    # Mouse: click another word, then a head for it that is neither its head nor a cycle.
    other = next(w for w in task(driver)["words"] if w["id"] != current["id"])
    click_word(driver, other["id"])
    assert word(driver, other["id"])["picking"], "a clicked word waits for its head"
    target = next(i for i in range(1, len(first["words"]) + 1)
                  if i not in (other["id"], other["head"]) and not (i == current["id"] and head == other["id"]))
    click_word(driver, target)
    settled(driver)
    clicked = word(driver, other["id"])
    assert (clicked["head"], clicked["state"]) == (target, "corrected"), clicked
    fixed = word(driver, current["id"])
    assert (fixed["head"], fixed["deprel"]) == (head, label), f"the reparse kept the keyboard's arc: {fixed}"

    ctrl_enter(driver)
    next_task(driver, first["task"])
    tree = wait_stored(workbench, first["sent_id"])
    if tree is not None:
        assert tree[current["id"]] == (str(head), label), tree
        assert tree[other["id"]] == (str(target), clicked["deprel"]), tree


def test_a_tag_is_changed_and_the_correction_carries_it(browser, workbench: Workbench) -> None:
    driver = browser
    shown = task(driver)
    assert shown["task"], "the queue ran out before a tag could be changed"
    current = next(w for w in shown["words"] if w["current"])
    new = "SYM" if current["upos"] != "SYM" else "X"
    # A click on the tag under the word opens the chooser of the 17 UPOS.
    element = driver.find_element("css selector", f'#sentence g.word[data-word-id="{current["id"]}"] rect.tag-hit')
    driver.execute_script("arguments[0].scrollIntoView({inline: 'center', block: 'nearest'})", element)
    element.click()
    wait(driver, lambda: driver.find_element("id", "tag-dialog").is_displayed(), "the tag chooser")
    from selenium.webdriver.support.select import Select
    select = Select(driver.find_element("id", "tag-select"))
    assert len(select.options) == 17, [o.text for o in select.options]
    assert select.first_selected_option.text == current["upos"], "the chooser starts on the word's tag"
    select.select_by_value(new)
    screenshot(driver, "6-tag-chooser")
    assert not overlaps_tree(driver, "tag-dialog"), "the tag chooser covers the tree"
    driver.find_element("css selector", "#tag-form button[type=submit]").click()
    settled(driver)
    changed = word(driver, current["id"])
    assert (changed["upos"], changed["tag_fixed"]) == (new, True), changed
    assert (changed["head"], changed["deprel"]) != (None, None)
    screenshot(driver, "7-tag-changed")
    # The tag goes with the word's arc, accepted as drawn (Enter), then submitted.
    press(driver, ENTER)
    settled(driver)
    accepted = word(driver, current["id"])
    ctrl_enter(driver)
    next_task(driver, shown["task"])
    block = wait_stored_block(workbench, shown["sent_id"])
    if block is not None:
        stored = rows(block)[current["id"]]
        assert stored[3] == new, stored
        assert (stored[6], stored[7]) == (str(accepted["head"]), accepted["deprel"]), stored
        assert f"# upos_checked = {current['id']}\n" in block, block
        unchanged = [w for w in shown["words"] if w["id"] != current["id"]]
        assert all(rows(block)[w["id"]][3] == w["upos"] for w in unchanged), "only the word changed has a new tag"


def test_a_lemma_is_changed_by_keyboard_and_the_correction_carries_it(browser, workbench: Workbench) -> None:
    driver = browser
    shown = task(driver)
    assert shown["task"], "the queue ran out before a lemma could be changed"
    current = next(w for w in shown["words"] if w["current"])
    assert current["lemma"], f"the word shows no lemma: {current}"
    new = current["lemma"] + "-fixed"
    # e opens the lemma editor on the current word, holding its lemma.
    press(driver, "e")
    wait(driver, lambda: driver.find_element("id", "lemma-dialog").is_displayed(), "the lemma editor")
    field = driver.find_element("id", "lemma-input")
    assert field.get_attribute("value") == current["lemma"], "the editor starts on the word's lemma"
    field.clear()
    field.send_keys(new)
    screenshot(driver, "8-lemma-editor")
    assert not overlaps_tree(driver, "lemma-dialog"), "the lemma editor covers the tree"
    field.send_keys(ENTER)
    settled(driver)
    changed = word(driver, current["id"])
    assert (changed["lemma"], changed["lemma_fixed"]) == (new, True), changed
    assert not driver.find_element("id", "lemma-dialog").is_displayed()
    screenshot(driver, "9-lemma-changed")
    # The lemma goes with the word's arc, accepted as drawn (Enter), then submitted.
    press(driver, ENTER)
    settled(driver)
    ctrl_enter(driver)
    next_task(driver, shown["task"])
    block = wait_stored_block(workbench, shown["sent_id"])
    if block is not None:
        assert rows(block)[current["id"]][2] == new, rows(block)[current["id"]]
        assert f"# lemmas_checked = {current['id']}\n" in block, block
        unchanged = [w for w in shown["words"] if w["id"] != current["id"]]
        assert all(rows(block)[w["id"]][2] == w["lemma"] for w in unchanged), "only the word changed has a new lemma"


def test_a_whole_sentence_is_accepted_when_read_and_held_back_when_not(browser, workbench: Workbench) -> None:
    driver = browser
    stamped = task(driver)
    assert stamped["task"], "the queue ran out before the whole sentence could be accepted"
    press(driver, "a")  # at once: faster than it can be read
    next_task(driver, stamped["task"])
    banner = driver.find_element("id", "error")
    assert banner.is_displayed() and "held back" in banner.text, banner.text
    if workbench.annotated is not None:
        assert stored_block(workbench.annotated, stamped["sent_id"]) is None, "a rubber stamp was stored"
    shown = task(driver)
    assert shown["task"], "the queue ran out before the whole sentence could be accepted"
    time.sleep(0.25 * len(shown["words"]) + 0.2)  # read it (spoolparse::workbench::review)
    press(driver, "a")
    next_task(driver, shown["task"])
    tree = wait_stored(workbench, shown["sent_id"])
    if tree is not None:
        assert tree == {w["id"]: (str(w["head"]), w["deprel"]) for w in shown["words"]}


def test_a_bad_sentence_is_set_aside_with_its_reason(browser, workbench: Workbench) -> None:
    driver = browser
    shown = task(driver)
    assert shown["task"], "the queue ran out before a sentence could be flagged as bad"
    press(driver, "b")
    wait(driver, lambda: driver.find_element("id", "bad-reason").is_displayed(), "the reason form")
    driver.find_element("id", "bad-reason").send_keys(REASON + "\n")
    next_task(driver, shown["task"])
    if workbench.annotated is None:
        return
    rejected = workbench.annotated / "rejected"
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        texts = [decompress(p).decode(errors="replace") for p in stored_files(rejected)] if rejected.is_dir() else []
        if any(shown["sent_id"] in t and REASON in t for t in texts):
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"no file in {rejected} holds {shown['sent_id']} with the reason")
    assert stored_tree(workbench.annotated, shown["sent_id"]) is None, "a bad sentence is never a correction"


def test_the_models_view_draws_every_event_of_the_real_servers_history(browser, workbench: Workbench) -> None:
    driver = browser
    driver.find_element("id", "nav-models").click()
    wait(driver, lambda: driver.find_element("id", "models-view").is_displayed(), "the models view")
    settled(driver)
    assert driver.find_element("id", "models-stored").text != "–", "the corrections since the last cycle are shown"
    if workbench.annotated is not None:
        # The four events of the spool's history (three changes, one rejected candidate), newest
        # first, with the LAS the cycles' reports give.
        rows = [[td.text for td in tr.find_elements("tag name", "td")]
                for tr in driver.find_elements("css selector", "#model-history tbody tr")]
        assert [r[1] for r in rows] == ["rollback", "rejected", "promoted", "configured"], rows
        assert rows[-1][0] == "2025-11-20 03:30:00", rows
        # Each with its change over the model it was gated against, where the report has both.
        assert [r[3] for r in rows] == ["–", "86.55 (−0.54)", "87.31 (+0.22)", "–"], rows
        # Your text as a whole (what the gate decides on), then its corrected arcs alone.
        assert [r[4] for r in rows] == ["–", "70.00 (−2.50)", "84.00 (+3.50)", "–"], rows
        assert [r[5] for r in rows] == ["–", "81.20", "81.20 (+6.20)", "–"], rows
        dots = driver.find_elements("css selector", "#las-chart svg circle.dot")
        assert sorted(d.get_attribute("class") for d in dots) == ["dot promoted", "dot rejected"], dots
        driver.execute_script("document.getElementById('model-history').scrollIntoView()")
        screenshot(driver, "5-models-history")
    driver.find_element("id", "retrain").click()
    wait(driver, lambda: driver.find_element("id", "retrain-result").text not in ("", "asking…"), "the answer to retrain")
    screenshot(driver, "5-models")
    driver.find_element("id", "nav-check").click()
    wait(driver, lambda: driver.find_element("id", "check-view").is_displayed(), "the check view again")


def test_skip_after_a_correction_asks_before_dropping_it(browser) -> None:
    """A correction not submitted is not dropped by one s: the page says so, a second s skips."""
    driver = browser
    shown = task(driver)
    assert shown["task"], "the queue ran out"
    press(driver, ENTER)  # accept the current arc: a change
    settled(driver)
    press(driver, "s")
    settled(driver)
    assert task(driver)["task"] == shown["task"], "one s dropped the correction"
    banner = driver.find_element("id", "error")
    assert banner.is_displayed() and "not submitted" in banner.text, banner.text
    press(driver, "s")
    next_task(driver, shown["task"])
    settled(driver)
    assert not banner.is_displayed(), f"the last sentence's warning is on the next one: {banner.text}"


def test_a_reload_mid_task_resumes_it_with_its_changes(browser) -> None:
    """A reload shows the same sentence again, with what was set on it (it used to show another,
    the half-done one lost and leased for 15 minutes)."""
    driver = browser
    shown = task(driver)
    assert shown["task"], "the queue ran out"
    current = next(w for w in shown["words"] if w["current"])
    press(driver, "e")
    wait(driver, lambda: driver.find_element("id", "lemma-dialog").is_displayed(), "the lemma editor")
    field = driver.find_element("id", "lemma-input")
    field.clear()
    field.send_keys("reloaded" + ENTER)
    settled(driver)
    press(driver, ENTER)
    settled(driver)
    driver.refresh()
    wait(driver, lambda: task(driver)["task"] == shown["task"], "the same task after the reload")
    settled(driver)
    again = word(driver, current["id"])
    assert (again["lemma"], again["lemma_fixed"], again["state"]) == ("reloaded", True, "accepted"), again
    assert "Resumed" in driver.find_element("id", "notice").text
    # Undo reaches back past the reload: the accepted arc, then the lemma (it found nothing).
    press(driver, "z")
    settled(driver)
    again = word(driver, current["id"])
    assert (again["lemma"], again["state"]) == ("reloaded", current["state"]), again
    press(driver, "z")
    settled(driver)
    again = word(driver, current["id"])
    assert (again["lemma"], again["lemma_fixed"]) == (current["lemma"], False), again
    press(driver, "s")
    next_task(driver, shown["task"])


def test_the_label_chooser_offers_a_ud_relation_the_model_has_not_seen(browser) -> None:
    driver = browser
    assert task(driver)["task"], "the queue ran out"
    press(driver, "/")
    wait(driver, lambda: driver.find_element("id", "label-chooser").is_displayed(), "the label chooser")
    assert not overlaps_tree(driver, "label-chooser"), "the label chooser covers the tree"
    driver.find_element("id", "label-input").send_keys("obl:tmod")
    screenshot(driver, "11-label-chooser")
    items = [li.text for li in driver.find_elements("css selector", "#label-list li[data-label]")]
    assert "obl:tmod (a UD relation the model has not seen)" in items, items
    field = driver.find_element("id", "label-input")
    field.clear()
    field.send_keys("oblx:tmod")  # no relation: a typo is not offered
    assert not driver.find_elements("css selector", "#label-list li[data-label]")
    press(driver, ESCAPE)


def test_tab_reaches_the_buttons_for_a_keyboard_only_user(browser) -> None:
    """Tab moves the focus through the page's controls (it used to be taken for "next word")."""
    driver = browser
    shown = task(driver)
    assert shown["task"], "the queue ran out"
    driver.execute_script("document.activeElement && document.activeElement.blur()")
    focused = []
    for _ in range(12):
        press(driver, "\ue004")  # Keys.TAB
        focused.append(driver.execute_script("const a = document.activeElement; return a ? a.id || a.tagName : ''"))
    assert {"submit", "accept-all", "skip"} <= set(focused), focused
    assert task(driver)["words"] == shown["words"], "Tab changed the task's state"


def test_the_page_logged_no_script_error(browser) -> None:
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE" and "/api/" not in e["message"]]
    assert not errors, f"the page's console: {errors}"


def test_a_page_of_another_origin_cannot_frame_the_workbench(workbench: Workbench, tmp_path: Path) -> None:
    """Clickjacking: a page on another port frames the workbench under a decoy and gets the
    user's clicks and keys on it. The server forbids framing (CSP frame-ancestors, and
    X-Frame-Options for older browsers); the frame stays empty. Its own browser, so that the
    refusal logged in the console does not count against the page's own test."""
    import http.server
    import threading
    page = (f'<!doctype html><title>decoy</title><p>Click to win!</p>'
            f'<iframe id="victim" src="{workbench.url}/" style="width:900px;height:600px;opacity:0.3"></iframe>')
    (tmp_path / "index.html").write_text(page)
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **k)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = start_chromium(tmp_path / "profile")
    try:
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        frame = wait(driver, lambda: driver.find_elements("id", "victim"), "the decoy's frame")[0]
        time.sleep(1.5)  # time for the frame to load whatever it may
        screenshot(driver, "12-framed-by-another-origin")
        driver.switch_to.frame(frame)
        shown = driver.execute_script("return [document.URL, !!document.getElementById('error-text'), "
                                      "document.body ? document.body.innerText.slice(0, 200) : '']")
        assert not shown[1], f"the workbench loaded inside another origin's frame: {shown}"
    finally:
        driver.quit()
        server.shutdown()


@pytest.fixture
def checked_workbench(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workbench]:
    """A server of its own whose retraining names a held-out file (300 en_ewt dev sentences,
    none of the queue's), so that one task in two is a known-answer check."""
    data: Data = request.getfixturevalue("data")
    if not data.from_treebank:
        pytest.skip("the known-answer checks' browser test needs en_ewt dev (../shared/data/ud)")

    def checks(root: Path) -> str:
        heldout = root / "heldout.conllu"
        heldout.write_text("".join(sentences(decompress(UD / "en_ewt" / "dev.conllu.zst").decode())[:300]))
        return f'check_every = 2\n\n[retrain]\nheldout = "{heldout}"\n'
    yield from serve(data, tmp_path_factory.mktemp("checked"), checks)


def test_a_rubber_stamp_at_reading_pace_is_held_back_by_the_known_answer_checks(browser, checked_workbench: Workbench) -> None:
    """The tester's trial in the page: each sentence accepted whole (a) as parsed, at 0.26 s a
    word and 1.05 s a flagged word, which passes the speed limits. An annotator's first task is a
    check; confirming the model's errors on it fails it, and the page says that the answers are
    held back and why; the Models view shows the annotator held back; nothing is stored."""
    driver = browser
    driver.get(checked_workbench.url + "/")
    authenticate(driver)
    answered = []
    for _ in range(2):
        wait(driver, lambda: task(driver)["task"], "a task")
        settled(driver)
        shown = task(driver)
        flagged = driver.execute_script("return document.querySelectorAll('#sentence g.word.flagged').length")
        time.sleep(0.26 * len(shown["words"]) + 1.05 * flagged)
        press(driver, "a")
        next_task(driver, shown["task"])
        answered.append(shown)
    banner = driver.find_element("id", "error")
    assert banner.is_displayed() and "held back" in banner.text and "known-answer check" in banner.text, banner.text
    screenshot(driver, "12-held-back-by-checks")
    for shown in answered:
        assert stored_block(checked_workbench.annotated, shown["sent_id"]) is None, f"{shown['sent_id']} was stored"
    driver.find_element("id", "nav-models").click()
    wait(driver, lambda: driver.find_element("id", "models-view").is_displayed(), "the models view")
    settled(driver)
    rows = [[td.text for td in tr.find_elements("tag name", "td")]
            for tr in driver.find_elements("css selector", "#annotator-standing tbody tr")]
    assert rows and rows[0][0] == "local" and rows[0][3].startswith("held back"), rows
    driver.execute_script("document.getElementById('annotator-standing').scrollIntoView()")
    screenshot(driver, "13-models-annotator-held-back")


@pytest.fixture
def sampled_workbench(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workbench]:
    """A server of its own where every task is a sentence of the uniform sample of what was
    published."""
    data: Data = request.getfixturevalue("data")
    if not data.from_treebank:
        pytest.skip("the sample's browser test needs en_ewt dev (../shared/data/ud)")
    yield from serve(data, tmp_path_factory.mktemp("sampled"), sample_every=1)


def test_a_sampled_sentence_says_so_and_its_whole_review_is_counted_in_the_precision_on_your_text(
        browser, sampled_workbench: Workbench) -> None:
    """A sentence of the uniform sample asks for a whole review; accepted whole at reading pace,
    it is stored marked as a sample, and the Models view counts it in the precision on the
    user's text, with a row for each precision a user may ask for."""
    driver = browser
    driver.get(sampled_workbench.url + "/")
    authenticate(driver)
    wait(driver, lambda: task(driver)["task"], "a task")
    settled(driver)
    sample_note = driver.find_element("id", "sample-note")
    assert sample_note.is_displayed() and "every" in sample_note.text, sample_note.text
    screenshot(driver, "14-sampled-sentence")
    shown = task(driver)
    flagged = driver.execute_script("return document.querySelectorAll('#sentence g.word.flagged').length")
    time.sleep(0.26 * len(shown["words"]) + 1.05 * flagged)
    press(driver, "a")
    next_task(driver, shown["task"])
    block = wait_stored_block(sampled_workbench, shown["sent_id"])
    assert block is not None and "# workbench_sample = uniform" in block, block
    driver.find_element("id", "nav-models").click()
    wait(driver, lambda: driver.find_element("id", "models-view").is_displayed(), "the models view")
    settled(driver)
    summary = driver.find_element("id", "precision-summary").text
    assert summary.startswith("1 sampled sentence reviewed whole"), summary
    assert "by other models, or by files that name none" in summary, summary  # `parse` wrote no `# model` head
    assert "serving threshold 0.80" in summary, summary
    targets = [[td.text for td in tr.find_elements("tag name", "td")]
               for tr in driver.find_elements("css selector", "#precision-targets tbody tr")]
    assert [t[0] for t in targets] == ["90.0%", "95.0%", "98.0%"], targets
    screenshot(driver, "15-precision-on-your-text")
    driver.find_element("id", "nav-check").click()
