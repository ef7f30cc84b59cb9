#!/usr/bin/env python3
"""UDPipe 1 as the raw-text peer of scripts/raw-text-eval.sh: trains a whole model (its own
tokenizer, tagger and parser) and runs it.

  udpipe-raw.py train TRAIN.conllu MODEL     trains with OPTIONS below unless MODEL exists and was
                                             trained with the same options (MODEL.options says)
  udpipe-raw.py run MODEL INPUT OUTPUT MODE  MODE: raw-beam, raw-greedy (tokenize INPUT as raw text,
                                             tag, parse with the default beam or beam_search=1) or
                                             gold-greedy, gold-beam (INPUT is CoNLL-U: keep its
                                             tokens, tag and parse). Prints the seconds the whole
                                             process took from its start (import and model load
                                             included), one thread: UDPipe 1 is single-threaded.

MODEL is named TREEBANK.udpipe. Training is shortened to fit a shared two-core machine; the
options are exactly those below (UDPipe's defaults: tokenizer epochs=100, tagger iterations=20,
parser iterations=10), the rest UDPipe's defaults. With UDPIPE_TRAINING=default in the
environment, every option is UDPipe's default (hours for en_ewt on one core).
"""
import os
import sys
import time

START = time.perf_counter()
import ufal.udpipe as u  # noqa: E402  (imported after START: the import is part of the process)

TOKENIZER = "epochs=20"
TAGGER = "iterations=5"
PARSER = "iterations=3"
# en_ewt, ten times larger, gets less (the machine ran at a load of 11 on 2 cores, and a first
# run's tagger had not ended its first iteration in 16 minutes): fewer epochs and iterations,
# and no lemmas among the tagger's tags (no score here uses them; they multiply its candidates).
LARGE = {"en_ewt": ("epochs=10", "iterations=1;use_lemma=0;provide_lemma=0", "iterations=1")}


def options(treebank):
    if os.environ.get("UDPIPE_TRAINING") == "default":
        return "", "", "", "UDPipe's defaults"
    tokenizer, tagger, parser = LARGE.get(treebank, (TOKENIZER, TAGGER, PARSER))
    return tokenizer, tagger, parser, f"tokenizer: {tokenizer}; tagger: {tagger}; parser: {parser}"


def train(train_path, model_path):
    tokenizer, tagger, parser, OPTIONS = options(os.path.basename(model_path).split(".")[0])
    stamp = model_path + ".options"
    if os.path.exists(model_path) and os.path.exists(stamp) and open(stamp).read() == OPTIONS:
        print(f"{model_path}: cached ({OPTIONS})", file=sys.stderr)
        return
    inp = u.InputFormat.newConlluInputFormat()
    inp.setText(open(train_path, encoding="utf-8").read())
    sents, s, err = u.Sentences(), u.Sentence(), u.ProcessingError()
    while inp.nextSentence(s, err):
        sents.push_back(s)
        s = u.Sentence()
    if err.occurred():
        sys.exit(f"{train_path}: {err.message}")
    t = time.perf_counter()
    m = u.Trainer.train("morphodita_parsito", sents, u.Sentences(), tokenizer, tagger, parser, err)
    if err.occurred():
        sys.exit(f"training on {train_path}: {err.message}")
    tmp = model_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(m if isinstance(m, bytes) else m.encode("latin1"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, model_path)
    with open(stamp, "w") as f:
        f.write(OPTIONS)
    print(f"{model_path}: trained in {time.perf_counter() - t:.0f} s ({OPTIONS})", file=sys.stderr)


def run(model_path, input_path, output_path, mode):
    model = u.Model.load(model_path)
    if model is None:
        sys.exit(f"{model_path}: cannot load the UDPipe model")
    source, search = mode.split("-")
    parser = "beam_search=1" if search == "greedy" else u.Pipeline.DEFAULT
    pipe = u.Pipeline(model, "tokenize" if source == "raw" else "conllu", u.Pipeline.DEFAULT, parser, "conllu")
    err = u.ProcessingError()
    out = pipe.process(open(input_path, encoding="utf-8").read(), err)
    if err.occurred():
        sys.exit(f"{input_path}: {err.message}")
    with open(output_path, "w", encoding="utf-8") as f:
        f.write(out)
    print(f"{time.perf_counter() - START:.3f}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "train":
        train(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 6 and sys.argv[1] == "run" and sys.argv[5] in (
            "raw-beam", "raw-greedy", "gold-beam", "gold-greedy"):
        run(*sys.argv[2:])
    else:
        sys.exit(__doc__)
