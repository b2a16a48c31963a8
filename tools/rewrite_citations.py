#!/usr/bin/env python3
"""Rewrites the citations in code comments and markdown into the style of docs/references.md.

Run from the repository root:

    python3 tools/rewrite_citations.py            rewrite in place; prints the replacements per file
    python3 tools/rewrite_citations.py --dry-run  the same counts, nothing written
    python3 tools/rewrite_citations.py --check    exit 1 listing every citation that does not resolve

Files: *.hpp *.h *.cpp *.cc *.c *.py *.md *.ini *.sh *.cmake and CMakeLists.txt, outside .git, docs/ and
build*/ directories. What is rewritten:

  - "DESIGN.md section N" -> "docs/design.md section N", a bare "DESIGN.md" -> "docs/design.md": in
    comments, markdown and also in string literals (user-visible text must point at a file that exists);
  - "seed 000, eq. 2.16" / "seed 000 eq. 2.16" -> "[seed-000, eq. 2.16]" (also lists and ranges:
    "eq. 2.6, 2.9, 2.17-2.18", "after eq. 2.18"), "seed 003, section 5" -> "[seed-003, section 5]",
    "seed 004, Theorem 2" -> "[seed-004, Theorem 2]", 'seed 004, "Added masses"' and
    'seed 002 ("Common Mistake")' -> '[seed-004, "Added masses"]', "(seed 004)" -> "[seed-004]"
    (parentheses that hold only the citation become its brackets), "seed 003's" -> "[seed-003]'s",
    "Seeds 000 and 002" -> "[seed-000] and [seed-002]": in comments and markdown only. Seed mentions in
    string literals (registry descriptions shown by `clmbench list`, help texts) are left as they are.

Comments are found by a small lexer per language (C/C++: //, /* */, skipping string, raw-string and
character literals and digit separators; Python: the tokenize module, triple-quoted strings count as
documentation; shell/CMake: # outside quotes; INI: ; or # comments), so code is never changed. The
rewrite is idempotent: a second run changes nothing.

--check lists, and exits 1 on: a "seed NNN" citation in a comment or markdown that is not in bracket
style, any "DESIGN.md", and any bracket label (a bracketed word with a hyphen, [seed-000, ...],
[HW-II, ...]) used in a comment or markdown (docs/ included) without a heading "### [label]" in
docs/references.md. Seed mentions left in string literals are listed as notes, not errors.
"""
import argparse
import io
import os
import re
import sys
import tokenize

SPECIAL_NAMES = {"CMakeLists.txt": "hash"}
EXTENSIONS = {".hpp": "c", ".h": "c", ".hh": "c", ".cpp": "c", ".cc": "c", ".cxx": "c", ".c": "c",
              ".py": "py", ".md": "md", ".ini": "ini", ".sh": "hash", ".cmake": "hash"}
REFERENCES = os.path.join("docs", "references.md")
# This script quotes the old citation forms in its own documentation: never rewritten or checked.
SELF = os.path.abspath(__file__)
SELF_REL = os.path.join("tools", "rewrite_citations.py")

# ---- patterns ------------------------------------------------------------------------------------------

SP = r"[ \t]"
SEED_NUM = r"00[0-4]"
NUM = r"\d+(?:\.\d+)*[a-z]?"
DOTTED = r"\d+\.\d+(?:\.\d+)*[a-z]?"
RANGE = NUM + r"(?:" + SP + r"*[-\u2013]" + SP + r"*" + NUM + r")?"
DOTTED_RANGE = DOTTED + r"(?:" + SP + r"*[-\u2013]" + SP + r"*" + DOTTED + r")?"
EQ = (r"(?:after" + SP + r"+)?eqs?\." + SP + r"*" + RANGE +
      r"(?:" + SP + r"*(?:,|and)" + SP + r"*" + DOTTED_RANGE + r")*")
SECTION = (r"sections?" + SP + r"+\d+[a-z]?(?:" + SP + r"*(?:[-\u2013,]|and)" + SP + r"*\d+[a-z]?(?![\d.]))*")
THEOREM = r"(?:Theorem" + SP + r"+of" + SP + r"+section" + SP + r"+\d+|(?:Theorem|Thm\.?|Proposition|Prop\.)" + SP + r"+\d+)"
QUOTED = r"\"[^\"\n]{1,80}\""
LOC = r"(?:" + EQ + r"|" + SECTION + r"|" + THEOREM + r"|" + QUOTED + r")"
CHAIN = LOC + r"(?:(?:," + SP + r"*|" + SP + r"+and" + SP + r"+)" + LOC + r")*"

# seed 002 ("Common Mistake")  ->  [seed-002, "Common Mistake"]
SEED_TITLE_RE = re.compile(r"\b[Ss]eed" + SP + r"+(" + SEED_NUM + r")(?!\d)" + SP + r"+\((" + QUOTED + r")\)")
# Seeds 000 and 002  ->  [seed-000] and [seed-002]
SEEDS_PLURAL_RE = re.compile(r"\b[Ss]eeds" + SP + r"+(" + SEED_NUM + r"(?:" + SP + r"*(?:,|and|&)" + SP + r"*" +
                             SEED_NUM + r")+)(?!\d)")
# (seed 004) / seed 000, eq. 2.16 / seed 003 section 5 / seed 003's
SEED_RE = re.compile(r"(?P<open>\()?\b[Ss]eed" + SP + r"+(?P<num>" + SEED_NUM + r")(?!\d)"
                     r"(?:(?:," + SP + r"*|" + SP + r"+)(?P<loc>" + CHAIN + r"))?(?(open)\))")
DESIGN_RE = re.compile(r"(?<![\w/.\-])DESIGN\.md")

# What --check looks for.
ANY_SEED_RE = re.compile(r"\b[Ss]eeds?" + SP + r"+\d{3}(?!\d)")
LABEL_RE = re.compile(r"\[([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+)(?=[\],])")
HEADING_RE = re.compile(r"^#{2,6}" + SP + r"+\[([^\]\s]+)\]", re.M)

# Bare equation numbers whose source is clear only from context: (path, old, new). Exact strings, so
# the rewrite stays idempotent (the old text is gone after the first run).
CONTEXT_REWRITES = [
    ("README.md", "| `schur` (eq. 2.9), Baumgarte option |", "| `schur` [seed-000, eq. 2.9], Baumgarte option |"),
    ("README.md", "| `nullspace` (eq. 2.17-2.18): natural", "| `nullspace` [seed-000, eq. 2.17-2.18]: natural"),
]


def seed_label(num, loc=None):
    if loc:
        loc = re.sub(SP + r"+", " ", loc.strip())
        return "[seed-%s, %s]" % (num, loc)
    return "[seed-%s]" % num


def rewrite_seeds(text):
    count = 0

    def title(m):
        nonlocal count
        count += 1
        return seed_label(m.group(1), m.group(2))

    def plural(m):
        nonlocal count
        count += 1
        return re.sub(SEED_NUM, lambda n: seed_label(n.group(0)), m.group(1))

    def single(m):
        nonlocal count
        count += 1
        return seed_label(m.group("num"), m.group("loc"))

    text = SEED_TITLE_RE.sub(title, text)
    text = SEEDS_PLURAL_RE.sub(plural, text)
    text = SEED_RE.sub(single, text)
    return text, count


def rewrite_design(text):
    return DESIGN_RE.subn("docs/design.md", text)


# ---- regions: which parts of a file are documentation ("doc") and which are string literals ("str") ----

def c_regions(text):
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((i, j, "doc"))
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append((i, j, "doc"))
            i = j
        elif c == '"':
            prefix = re.search(r"(?:u8|u|U|L)?R$", text[max(0, i - 3):i])
            if prefix and (i - len(prefix.group(0)) == 0 or
                           not (text[i - len(prefix.group(0)) - 1].isalnum() or
                                text[i - len(prefix.group(0)) - 1] == "_")):
                paren = text.find("(", i + 1)
                delim = text[i + 1:paren] if paren >= 0 else ""
                if paren < 0 or len(delim) > 16 or any(ch in delim for ch in ' ()\\\t\n'):
                    i += 1
                    continue
                end = text.find(")" + delim + '"', paren + 1)
                end = n if end < 0 else end + len(delim) + 2
                out.append((i, end, "str"))
                i = end
            else:
                j = i + 1
                while j < n and text[j] != '"' and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                j = min(j + 1, n)
                out.append((i, j, "str"))
                i = j
        elif c == "'":
            if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):  # digit separator 200'000 or u8'x'
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = min(j + 1, n)
        else:
            i += 1
    return out


def py_regions(text):
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(pos):
        return starts[pos[0] - 1] + pos[1]

    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.append((offset(tok.start), offset(tok.end), "doc"))
            elif tok.type == tokenize.STRING:
                body = tok.string.lstrip("rRbBuUfF")
                kind = "doc" if body.startswith('"""') or body.startswith("'''") else "str"
                out.append((offset(tok.start), offset(tok.end), kind))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return out


def hash_regions(text, comment_chars="#"):
    out = []
    pos = 0
    for line in text.splitlines(keepends=True):
        quote = None
        k = 0
        while k < len(line):
            ch = line[k]
            if quote:
                if ch == "\\" and quote == '"':
                    k += 2
                    continue
                if ch == quote:
                    out.append((pos + start, pos + k + 1, "str"))
                    quote = None
            elif ch in "\"'":
                quote, start = ch, k
            elif ch in comment_chars and (k == 0 or line[k - 1].isspace()):
                end = len(line.rstrip("\r\n"))
                out.append((pos + k, pos + end, "doc"))
                break
            k += 1
        pos += len(line)
    return out


def ini_regions(text):
    out = []
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        m = re.search(r"(^|\s)[;#]", body)
        if m:
            k = m.start() + len(m.group(1))
            if k > 0:
                out.append((pos, pos + k, "str"))
            out.append((pos + k, pos + len(body), "doc"))
        else:
            out.append((pos, pos + len(body), "str"))
        pos += len(line)
    return out


def regions(kind, text):
    if kind == "c":
        return c_regions(text)
    if kind == "py":
        r = py_regions(text)
        return r if r is not None else hash_regions(text)
    if kind == "hash":
        return hash_regions(text)
    if kind == "ini":
        return ini_regions(text)
    return [(0, len(text), "doc")]  # markdown


# ---- files ---------------------------------------------------------------------------------------------

def file_kind(name):
    if name in SPECIAL_NAMES:
        return SPECIAL_NAMES[name]
    return EXTENSIONS.get(os.path.splitext(name)[1])


def candidate_files(root, include_docs=False):
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        keep = []
        for d in sorted(dirnames):
            if d == ".git" or d.startswith("build") or d == "__pycache__" or d.startswith(".mirror"):
                continue
            if rel_dir == "." and d == "docs" and not include_docs:
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            kind = file_kind(f)
            path = os.path.join(dirpath, f)
            if kind and os.path.abspath(path) != SELF and os.path.normpath(os.path.join(rel_dir, f)) != SELF_REL:
                yield os.path.normpath(os.path.join(rel_dir, f)), kind


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def rewrite_text(rel, kind, text):
    count = 0
    for path, old, new in CONTEXT_REWRITES:
        if rel == path and old in text:
            count += text.count(old)
            text = text.replace(old, new)
    pieces, last = [], 0
    for start, end, what in sorted(regions(kind, text)):
        if start < last:  # overlapping regions cannot happen; never duplicate text if they do
            continue
        pieces.append(text[last:start])
        segment = text[start:end]
        if what == "doc":
            segment, n = rewrite_seeds(segment)
            count += n
        segment, n = rewrite_design(segment)
        count += n
        pieces.append(segment)
        last = end
    pieces.append(text[last:])
    return "".join(pieces), count


def known_labels(root):
    path = os.path.join(root, REFERENCES)
    if not os.path.exists(path):
        return None
    return set(HEADING_RE.findall(read(path)))


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def check(root):
    labels = known_labels(root)
    problems, notes = [], []
    if labels is None:
        problems.append("%s: missing (no labels to resolve against)" % REFERENCES)
        labels = set()
    files = list(candidate_files(root))
    docs_dir = os.path.join(root, "docs")
    if os.path.isdir(docs_dir):
        for f in sorted(os.listdir(docs_dir)):
            if f.endswith(".md"):
                files.append((os.path.join("docs", f), "docs-md"))
    for rel, kind in files:
        text = read(os.path.join(root, rel))
        if kind == "docs-md":
            for m in LABEL_RE.finditer(text):
                if m.group(1) not in labels:
                    problems.append("%s:%d: label [%s] has no entry in %s" %
                                    (rel, line_of(text, m.start()), m.group(1), REFERENCES))
            continue
        for m in DESIGN_RE.finditer(text):
            problems.append("%s:%d: DESIGN.md (should be docs/design.md)" % (rel, line_of(text, m.start())))
        for start, end, what in regions(kind, text):
            segment = text[start:end]
            for m in ANY_SEED_RE.finditer(segment):
                where = "%s:%d" % (rel, line_of(text, start + m.start()))
                if what == "doc":
                    problems.append("%s: '%s' not in bracket style ([seed-NNN, ...])" % (where, m.group(0)))
                else:
                    notes.append("%s: '%s' in a string literal (left as is)" % (where, m.group(0)))
            if what == "doc":
                for m in LABEL_RE.finditer(segment):
                    if m.group(1) not in labels:
                        problems.append("%s:%d: label [%s] has no entry in %s" %
                                        (rel, line_of(text, start + m.start()), m.group(1), REFERENCES))
    for n in notes:
        print("note: " + n)
    for p in problems:
        print(p)
    if problems:
        print("rewrite_citations --check: %d unresolved citation(s)" % len(problems))
        return 1
    print("rewrite_citations --check: every citation resolves (%d labels in %s)" % (len(labels), REFERENCES))
    return 0


def main():
    parser = argparse.ArgumentParser(description="Rewrite citations into the style of docs/references.md "
                                                 "(run from the repository root).")
    parser.add_argument("--check", action="store_true", help="list unresolved citations; exit 1 if any")
    parser.add_argument("--dry-run", action="store_true", help="count the replacements, write nothing")
    parser.add_argument("--root", default=".", help="repository root (default: the current directory)")
    args = parser.parse_args()
    root = args.root
    if not os.path.isdir(os.path.join(root, ".git")) and not os.path.isfile(os.path.join(root, ".git")):
        print("rewrite_citations: %s is not a repository root (no .git)" % os.path.abspath(root), file=sys.stderr)
        return 2
    if args.check:
        return check(root)
    total, changed = 0, 0
    for rel, kind in candidate_files(root):
        path = os.path.join(root, rel)
        text = read(path)
        new, count = rewrite_text(rel, kind, text)
        if count and new != text:
            changed += 1
            total += count
            print("%s: %d" % (rel, count))
            if not args.dry_run:
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(new)
    print("rewrite_citations: %d replacement(s) in %d file(s)%s" %
          (total, changed, " (dry run, nothing written)" if args.dry_run else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
