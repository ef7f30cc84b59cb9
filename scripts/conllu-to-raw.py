#!/usr/bin/env python3
"""The raw text of a CoNLL-U file, as the CoNLL 2018 shared task gave systems their input.

  conllu-to-raw.py [FILE]      reads FILE (or stdin; plain CoNLL-U: `zstd -dc` a .zst first),
                               writes the text to stdout

A paragraph starts at every `# newpar` and `# newdoc` comment (with or without an id); a file
with neither mark is one paragraph. Paragraphs are written one per line, separated by a blank
line. Within a paragraph the sentences' `# text` follow each other with one space between,
none where the sentence's last token has SpaceAfter=No. A sentence without `# text` gets its
text from its tokens (multiword tokens, not their words; SpaceAfter=No respected).
"""
import sys


def sentences(lines):
    """Yields (comments, token rows) per sentence."""
    comments, rows = [], []
    for line in lines:
        line = line.rstrip("\r\n")
        if not line:
            if rows or comments:
                yield comments, rows
            comments, rows = [], []
        elif line.startswith("#"):
            comments.append(line)
        else:
            rows.append(line.split("\t"))
    if rows or comments:
        yield comments, rows


def tokens(rows):
    """The token rows: multiword-token lines and the words outside them, no empty nodes."""
    inside_until = 0
    for cols in rows:
        if len(cols) != 10:
            sys.exit(f"not CoNLL-U: a token line without 10 tab-separated columns: {cols}")
        ident = cols[0]
        if "." in ident:
            continue
        if "-" in ident:
            inside_until = int(ident.split("-")[1])
            yield cols
        elif int(ident) > inside_until:
            yield cols


def no_space_after(cols):
    return "SpaceAfter=No" in cols[9].split("|")


def text_of(comments, rows):
    for c in comments:
        if c.startswith("# text = ") or c.startswith("# text="):
            return c.split("=", 1)[1].strip()
    out = []
    for cols in tokens(rows):
        out.append(cols[1] + ("" if no_space_after(cols) else " "))
    return "".join(out).strip()


def convert(lines, out):
    sents = list(sentences(lines))
    is_mark = lambda c: c.startswith("# newpar") or c.startswith("# newdoc")
    marked = any(is_mark(c) for comments, _ in sents for c in comments)
    paragraphs, current, glued = [], "", False
    for comments, rows in sents:
        if marked and any(is_mark(c) for c in comments) and current:
            paragraphs.append(current)
            current, glued = "", False
        if not rows:
            continue
        if current and not glued:
            current += " "
        current += text_of(comments, rows)
        glued = no_space_after(list(tokens(rows))[-1])
    if current:
        paragraphs.append(current)
    out.write("\n".join(p + "\n" for p in paragraphs))

if __name__ == "__main__":
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help")):
        sys.exit(__doc__)
    with (open(sys.argv[1], encoding="utf-8") if len(sys.argv) == 2 else sys.stdin) as f:
        convert(f, sys.stdout)
