#!/usr/bin/env bash
# Checks every relative link and anchor in the repository's Markdown (the files git tracks, plus new
# ones it does not ignore): [text](path), ![alt](path), [ref]: path, with or without #anchor. A path
# must exist (file or directory, relative to the linking file); an anchor must be a heading of the
# target file as GitHub slugs it (lowercase, punctuation dropped, spaces to '-', repeats get -1, -2)
# or an explicit <a name|id="...">. Links with a scheme (https:, mailto:) are not followed. Fenced
# code blocks and inline code are skipped. Prints each broken link as file:line and exits 1 if any.
# make lint runs it; needs only python3.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
have python3 || die "python3 not found"
cd "$REPO_ROOT"
git ls-files --cached --others --exclude-standard -z -- '*.md' | python3 -c '
import os, re, sys, unicodedata

files = [f for f in sys.stdin.read().split("\0") if f and os.path.isfile(f)]
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)
CODE = re.compile(r"(`+)(.+?)\1")


def slug(text):
    text = re.sub(r"<[^>]+>", "", text)                    # inline HTML
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = text.strip().lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in " -_" or cat[0] in "LN":
            out.append("-" if ch == " " else ch)
    return "".join(out)


def lines_outside_code(path):
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if fence:
                if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                    fence = None
                continue
            if m:
                fence = m.group(1)
                continue
            yield n, line


anchors_cache = {}


def anchors(path):
    if path not in anchors_cache:
        seen, found = {}, set()
        for _, line in lines_outside_code(path):
            for a in HTML_ANCHOR.findall(line):
                found.add(a)
            m = HEADING.match(line)
            if m:
                s = slug(m.group(2))
                k = seen.get(s, 0)
                found.add(s if k == 0 else "%s-%d" % (s, k))
                seen[s] = k + 1
        anchors_cache[path] = found
    return anchors_cache[path]


bad = 0
for f in sorted(files):
    for n, line in lines_outside_code(f):
        text = CODE.sub("", line)
        targets = INLINE.findall(text)
        m = REFDEF.match(text)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t):
                continue
            path, _, anchor = t.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            why = None
            if not os.path.exists(target):
                why = "no such file"
            elif anchor and target.endswith(".md") and os.path.isfile(target):
                if anchor not in anchors(target):
                    why = "no heading #" + anchor
            if why:
                bad += 1
                print("%s:%d: %s (%s)" % (f, n, t, why))
print("doc-links: %d Markdown files, %s" % (len(files), "%d broken" % bad if bad else "all links resolve"))
sys.exit(1 if bad else 0)
'
