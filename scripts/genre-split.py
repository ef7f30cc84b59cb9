#!/usr/bin/env python3
"""en_ewt's genres as a domain shift (issue 30): one genre apart from the four others, by the
genre prefix of `sent_id` (answers, email, newsgroup, reviews, weblog).

  genre-split.py GENRE OUT    writes OUT/GENRE/{train,dev}.conllu.zst (the genre: the corpus to
                              adapt to and its dev set, what simulate-annotator.py --domain
                              takes) and OUT/base-{train,dev}.conllu (the four other genres: the
                              model's training data and --base, and its dev set)

Reads ../shared/data/ud/en_ewt/{train,dev}.conllu.zst beside the repository (zstd on PATH).
Then, for example: spoolparse train --train OUT/base-train.conllu --dev OUT/base-dev.conllu
--tagger --jackknife 0 --epochs 8 --output OUT/base.model.
"""
import os
import subprocess
import sys

UD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "ud", "en_ewt")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    genre, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, genre), exist_ok=True)
    for split in ("train", "dev"):
        text = subprocess.run(["zstd", "-qdc", os.path.join(UD, f"{split}.conllu.zst")], check=True,
                              capture_output=True).stdout.decode("utf-8")
        inside, outside = [], []
        for block in text.split("\n\n"):
            if not block.strip():
                continue
            sid = next((line[len("# sent_id = "):] for line in block.split("\n") if line.startswith("# sent_id = ")), "")
            (inside if sid.startswith(genre + "-") else outside).append(block)
        if not inside:
            sys.exit(f"no sentence of {split} has a sent_id starting with {genre}-")
        target = os.path.join(out, genre, f"{split}.conllu.zst")
        subprocess.run(["zstd", "-qf", "-o", target], input=("\n\n".join(inside) + "\n\n").encode(), check=True)
        with open(os.path.join(out, f"base-{split}.conllu"), "w", encoding="utf-8") as f:
            f.write("\n\n".join(outside) + "\n\n")
        print(f"{split}: {len(inside)} sentences of {genre}, {len(outside)} of the other genres")


if __name__ == "__main__":
    main()
