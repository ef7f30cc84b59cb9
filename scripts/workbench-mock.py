#!/usr/bin/env python3
"""A stand-in for `spoolparse annotate`, for developing the workbench page (src/workbench/page/)
without the server: it serves the page and canned answers of the JSON API, with four sentences
of en_ewt dev as a small model parsed them (7 words; 6 of 9 flagged; a non-projective gold tree
with made-up confidences; 42 words). Answers are written to ANNOTATED/SENT_ID.conllu (through a
rename, like the server's), bad sentences to ANNOTATED/rejected/. Not a test of the server.
  usage: scripts/workbench-mock.py [--port 8077] [--annotated DIR] [--token T] [--admin]
The page is then at http://127.0.0.1:8077/; python/tests/test_workbench_browser.py drives it with
WORKBENCH_URL=http://127.0.0.1:8077 WORKBENCH_ANNOTATED=DIR (and WORKBENCH_TOKEN=T)."""

import argparse
import copy
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "src" / "workbench" / "page"
FILES = {"/": "index.html", "/models": "index.html", "/workbench.css": "workbench.css", "/workbench.js": "workbench.js",
         "/api.js": "api.js", "/tree.js": "tree.js", "/choosers.js": "choosers.js", "/models.js": "models.js"}
TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
LABELS = sorted("acl acl:relcl advcl advmod amod appos aux aux:pass case cc ccomp compound compound:prt conj cop csubj "
                "dep det discourse expl fixed flat iobj mark nmod nmod:poss nsubj nsubj:pass nsubj:outer nummod obj obl "
                "obl:npmod obl:tmod parataxis punct reparandum root xcomp".split())
# SENT_ID<TAB>FORM/UPOS/HEAD/DEPREL/CONF[!] ... (! = flagged, LowConf=Yes)
SENTENCES = """\
weblog-blogspot.com_nominations_20041117172713_ENG_20041117_172713-0001	From/ADP/4/case/1.00 the/DET/4/det/1.00 AP/PROPN/4/nsubj/1.00 comes/VERB/0/root/0.00! this/DET/6/det/1.00 story/NOUN/4/obj/1.00 :/PUNCT/4/punct/1.00
weblog-blogspot.com_gettingpolitical_20030906235000_ENG_20030906_235000-0005	A/X/8/nsubj:outer/1.00 la/X/8/cop/0.96! guerre/X/8/mark/0.77! c'est/X/8/mark/0.61! comme/X/8/cop/0.42! a/X/8/xcomp/0.47! la/X/8/xcomp/0.66! guerre/X/0/root/1.00 !/PUNCT/8/punct/1.00
weblog-blogspot.com_tacitusproject_20040712123425_ENG_20040712_123425-0032	I/PRON/5/reparandum/0.35! --/PUNCT/1/punct/0.97 which/PRON/7/obj/0.97 I/PRON/5/nsubj/0.35! try/VERB/0/root/0.97 to/PART/7/mark/0.97 do/VERB/5/xcomp/0.35! ,/PUNCT/10/punct/0.97 as/ADV/10/advmod/0.97 best/ADV/7/advmod/0.35! as/SCONJ/14/mark/0.97 I/PRON/14/nsubj/0.97 possibly/ADV/14/advmod/0.35! can/AUX/10/advcl/0.97 ./PUNCT/5/punct/0.97
weblog-blogspot.com_marketview_20050210075500_ENG_20050210_075500-0003	They/PRON/2/nsubj/1.00 work/VERB/0/root/1.00 on/ADP/4/case/0.98! Wall/PROPN/2/obl/1.00 Street/PROPN/4/flat/1.00 ,/PUNCT/24/punct/1.00 after/ADP/24/case/1.00 all/DET/24/advmod/1.00 ,/PUNCT/8/punct/1.00 so/ADV/13/advmod/1.00 when/ADV/13/advmod/1.00 they/PRON/13/nsubj/1.00 hear/VERB/24/advcl/0.86! a/DET/15/det/1.00 company/NOUN/13/obj/1.00 who's/PRON/19/advmod/0.63! stated/VERB/18/amod/1.00 goals/NOUN/19/nsubj/1.00 include/VERB/13/advcl/0.95! "/PUNCT/13/punct/1.00 Do/AUX/24/cop/1.00 n't/PART/24/advmod/1.00 be/AUX/24/cop/1.00 evil/ADJ/2/parataxis/0.58! ,/PUNCT/24/punct/1.00 "/PUNCT/24/punct/1.00 they/PRON/28/nsubj/1.00 imagine/VERB/2/ccomp/1.00 a/DET/30/det/1.00 company/NOUN/40/nsubj/1.00 who's/PRON/40/advmod/1.00 eventually/ADJ/33/amod/1.00 history/NOUN/40/nsubj/1.00 will/AUX/40/aux/1.00 be/AUX/40/cop/1.00 "/PUNCT/35/punct/1.00 Do/AUX/40/cop/1.00 n't/PART/40/advmod/1.00 be/AUX/40/cop/1.00 profitable/ADJ/28/xcomp/0.56! ./PUNCT/40/punct/0.98! "/PUNCT/40/punct/1.00
"""


def words_of(line: str) -> list[dict]:
    words = []
    for i, token in enumerate(line.split(" "), 1):
        form, upos, head, deprel, conf = token.rsplit("/", 4)
        flagged = conf.endswith("!")
        words.append({"id": i, "form": form, "upos": upos, "head": int(head), "deprel": deprel,
                      "conf": float(conf.rstrip("!")), "check": flagged})
    for w in words:  # made-up alternatives: nearby heads, the rest of the probability
        near = dict.fromkeys((w["id"] - 1, w["id"] + 1, 0, w["id"] - 2))
        heads = [h for h in near if 0 <= h <= len(words) and h not in (w["id"], w["head"])]
        rest = round(1 - w["conf"], 2)
        w["alternatives"] = [{"head": h, "deprel": "root" if h == 0 else ("obl", "nmod", "advmod")[k], "conf": round(rest / (2 + k), 2)}
                             for k, h in enumerate(heads[:3])] if w["check"] else []
    return words


class State:
    def __init__(self, annotated: Path):
        self.annotated = annotated
        self.queue = []
        for n, line in enumerate(SENTENCES.strip().splitlines(), 1):
            sent_id, tokens = line.split("\t")
            words = words_of(tokens)
            self.queue.append({"task": f"t{n}", "sent_id": sent_id, "text": " ".join(w["form"] for w in words), "words": words})
        self.answered = 0
        self.arcs = 0

    def task(self, body: dict) -> dict:
        for t in self.queue:
            if t["task"] == body.get("task"):
                return t
        raise ApiError(404, f"no task {body.get('task')!r}: answered, skipped or never given")

    def write(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{path.name}.tmp"
        tmp.write_text(text)
        os.replace(tmp, path)

    def conllu(self, task: dict, arcs: dict, comments: list[str]) -> str:
        lines = [f"# sent_id = {task['sent_id']}", f"# text = {task['text']}", *comments]
        for w in task["words"]:
            head, deprel = arcs.get(w["id"], ("_", "_"))
            lines.append(f"{w['id']}\t{w['form']}\t_\t{w['upos']}\t_\t_\t{head}\t{deprel}\t_\t_")
        return "\n".join(lines) + "\n\n"


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def reparse(task: dict, arcs: list[dict]) -> list[dict]:
    """The task's tree with the given arcs imposed (a real parser would re-decide the rest)."""
    words = copy.deepcopy(task["words"])
    fixed = {arc["id"] for arc in arcs}
    for arc in arcs:
        w = words[arc["id"] - 1]
        if arc["head"] == w["id"] or not 0 <= arc["head"] <= len(words):
            raise ApiError(400, f"word {w['id']} cannot have head {arc['head']}")
        head = words[arc["head"] - 1] if arc["head"] else None
        if head and head["head"] == w["id"] and head["id"] not in fixed:  # no 2-cycle: the head takes w's place
            head.update(head=w["head"], deprel=w["deprel"])
        label = arc["deprel"] or (w["deprel"] if arc["head"] == w["head"] else next(
            (a["deprel"] for a in w["alternatives"] if a["head"] == arc["head"]), "dep"))
        w.update(head=arc["head"], deprel="root" if arc["head"] == 0 else label, conf=1.0, check=False)
    return words


def handle(state: State, method: str, path: str, body: dict):
    if (method, path) == ("GET", "/api/next"):
        return (200, state.queue[0]) if state.queue else (204, None)
    if (method, path) == ("GET", "/api/labels"):
        return 200, {"labels": LABELS}
    if (method, path) == ("GET", "/api/stats"):
        return 200, {"answered_today": state.answered, "arcs_today": state.arcs, "arcs_per_hour": state.arcs * 6.0,
                     "queue_left": len(state.queue), "queued": len(state.queue) + state.answered}
    if (method, path) == ("GET", "/api/models"):
        return 200, MODELS
    if (method, path) == ("POST", "/api/retrain"):
        if not ADMIN:
            raise ApiError(403, "retraining is for admins: this token may only annotate")
        return 202, {}
    if method != "POST":
        raise ApiError(404, f"no such endpoint: {method} {path}")
    task = state.task(body)
    if path == "/api/reparse":
        return 200, {"words": reparse(task, body.get("arcs", []))}
    if path == "/api/answer":
        arcs = body.get("arcs") or []
        if not arcs:
            raise ApiError(400, "an answer needs at least one arc")
        tree = {w["id"]: (w["head"], w["deprel"]) for w in reparse(task, arcs)}
        given = {a["id"]: tree[a["id"]] for a in arcs}
        comment = ["# annotation = whole"] if body.get("whole") else []
        state.write(state.annotated / f"{task['sent_id']}.conllu", state.conllu(task, given, comment))
        state.answered += 1
        state.arcs += len(arcs)
        state.queue.remove(task)
        return 200, {"stored": len(arcs)}
    if path in ("/api/skip", "/api/bad"):
        if path == "/api/bad":
            reason = (body.get("reason") or "").strip()
            if not reason:
                raise ApiError(400, "a bad sentence needs a reason")
            text = state.conllu(task, {}, [f"# rejected_reason = {reason}"])
            state.write(state.annotated / "rejected" / f"{task['sent_id']}.conllu", text)
        state.queue.remove(task)
        return 200, {}
    raise ApiError(404, f"no such endpoint: {method} {path}")


# As the real server gives them (`GET /api/models`): time in seconds since the epoch, LAS in
# percent, events `configured`, `promoted`, `rollback` and `rejected`.
MODELS = {"current": "en_ewt-3f2a9c1e.model", "stored_since_last_cycle": 37, "models": [
    {"time": 1763609400, "event": "configured", "model": "en_ewt-0a1b2c3d.model", "from": None, "heldout_las": None, "annotations_las": None, "reasons": []},
    {"time": 1763695800, "event": "promoted", "model": "en_ewt-5e6f7a8b.model", "from": "en_ewt-0a1b2c3d.model", "heldout_las": 87.31, "your_text_las": 84.0, "annotations_las": 81.2, "reasons": ["held-out LAS +0.22"]},
    {"time": 1763782200, "event": "rejected", "model": "en_ewt-9c0d1e2f.model", "heldout_las": 86.55, "your_text_las": 79.1, "annotations_las": 83.0, "reasons": ["held-out LAS dropped 0.76 > max_las_drop 0.0"]},
    {"time": 1763868600, "event": "promoted", "model": "en_ewt-3f2a9c1e.model", "from": "en_ewt-5e6f7a8b.model", "heldout_las": 87.48, "your_text_las": 85.2, "annotations_las": 83.5, "reasons": []},
    {"time": 1763889120, "event": "rollback", "model": "en_ewt-5e6f7a8b.model", "from": "en_ewt-3f2a9c1e.model", "heldout_las": 87.31, "annotations_las": None, "reasons": []},
]}
TOKEN = None
ADMIN = False


def make_handler(state: State):
    class Handler(BaseHTTPRequestHandler):
        def send(self, status: int, data, content_type: str = "application/json") -> None:
            raw = b"" if data is None else (data if isinstance(data, bytes) else json.dumps(data).encode())
            self.send_response(status)
            if status != 204:
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def serve(self, method: str) -> None:
            path = self.path.split("?")[0]
            if method == "GET" and path in FILES:
                name = FILES[path]
                return self.send(200, (PAGE / name).read_bytes(), TYPES[Path(name).suffix])
            if not path.startswith("/api/"):
                return self.send(404, {"error": f"no page {path}"})
            if TOKEN and self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self.send(401, {"error": "a token is needed"})
            try:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}") if method == "POST" else {}
                self.send(*handle(state, method, path, body))
            except ApiError as e:
                self.send(e.status, {"error": str(e)})
            except (ValueError, KeyError, TypeError) as e:
                self.send(400, {"error": f"bad request: {e}"})

        def do_GET(self) -> None:
            self.serve("GET")

        def do_POST(self) -> None:
            self.serve("POST")

    return Handler


def main() -> None:
    global TOKEN, ADMIN
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8077)
    parser.add_argument("--annotated", type=Path, default=Path("target/workbench-mock/annotated"))
    parser.add_argument("--token", help="require Authorization: Bearer TOKEN on the API")
    parser.add_argument("--admin", action="store_true", help="allow POST /api/retrain (else 403)")
    args = parser.parse_args()
    TOKEN, ADMIN = args.token, args.admin
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(State(args.annotated)))
    print(f"workbench mock on http://127.0.0.1:{args.port}/, answers in {args.annotated}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
