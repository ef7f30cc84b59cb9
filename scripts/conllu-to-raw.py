#!/usr/bin/env python3
r"""The raw text of a CoNLL-U file, as the CoNLL 2018 shared task gave systems their input.

  conllu-to-raw.py [FILE]          reads FILE (or stdin; plain CoNLL-U: `zstd -dc` a .zst
                                   first), writes the text to stdout
  conllu-to-raw.py --exact [FILE]  the text that CoNLL-U written by `spoolparse parse --format
                                   raw` came from, byte for byte (see below)

A paragraph starts at every `# newpar` and `# newdoc` comment (with or without an id); a file
with neither mark is one paragraph. Paragraphs are written one per line, separated by a blank
line. Within a paragraph the sentences' `# text` follow each other with one space between,
none where the sentence's last token has SpaceAfter=No. A sentence without `# text` gets its
text from its tokens (multiword tokens, not their words; SpaceAfter=No respected).

--exact follows the tokens' MISC instead (src/parse/raw/mod.rs says how spoolparse writes it): per
token, SpacesBefore=, then RawForm= or else the form, then SpacesAfter=, or nothing after
SpaceAfter=No, or else one space; values escaped as \s \t \n \r \p \\ and \u{X}. It is
written apart from the Rust side's recover_text, so that a round trip checks one against the
other (scripts/raw-roundtrip.sh).
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

ESCAPES = {"s": " ", "t": "\t", "n": "\n", "r": "\r", "p": "|", "\\": "\\"}


def unescape(value):
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c != "\\" or i + 1 == len(value):
            out.append(c)
            i += 1
        elif value[i + 1] == "u" and value[i + 2:i + 3] == "{":
            end = value.index("}", i)
            out.append(chr(int(value[i + 3:end], 16)))
            i = end + 1
        else:
            out.append(ESCAPES.get(value[i + 1], value[i + 1]))
            i += 2
    return "".join(out)


def exact(lines, out):
    for _, rows in sentences(lines):
        for cols in tokens(rows):
            misc = [] if cols[9] == "_" else cols[9].split("|")
            entry = lambda key: next((e[len(key):] for e in misc if e.startswith(key)), None)
            before, raw, after = entry("SpacesBefore="), entry("RawForm="), entry("SpacesAfter=")
            out.write(unescape(before) if before is not None else "")
            out.write(unescape(raw) if raw is not None else cols[1])
            if after is not None:
                out.write(unescape(after))
            elif "SpaceAfter=No" not in misc:
                out.write(" ")


if __name__ == "__main__":
    args = sys.argv[1:]
    mode = convert
    if args[:1] == ["--exact"]:
        mode, args = exact, args[1:]
    if len(args) > 1 or args[:1] in (["-h"], ["--help"]):
        sys.exit(__doc__)
    with (open(args[0], encoding="utf-8", newline="") if args else
          open(sys.stdin.fileno(), encoding="utf-8", newline="", closefd=False)) as f:
        out = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="", closefd=False)
        mode(f, out)
        out.flush()
