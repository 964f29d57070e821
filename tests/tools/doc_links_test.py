"""The links of the project's Markdown files (README.md, the pages of docs/, the results
files) lead somewhere: a relative path names a file or folder of the tree, and a #fragment
names a heading of the file it points to (GitHub's anchors). The paths the README and the
docs/ pages name in their text (recipes/..., tools/..., toolkit/...) exist too."""
import glob
import os
import re
import subprocess
import sys
import unittest

SOURCE_DIR = os.path.abspath(os.environ.get("CSAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def markdown_files():
    """Tracked Markdown files and new ones not yet added (a page being written is checked too)."""
    listed = subprocess.run(["git", "-C", SOURCE_DIR, "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
                            capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout.strip():
        return sorted({os.path.join(SOURCE_DIR, f) for f in listed.stdout.split()})
    found = []  # not a git checkout (a source archive): walk the tree
    for top, dirs, files in os.walk(SOURCE_DIR):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        found += [os.path.join(top, f) for f in files if f.endswith(".md")]
    return found


def prose_lines(path):
    """(line number, text) of the lines outside fenced and indented code blocks, with
    inline code spans removed."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced or line.startswith("    ") and not line.lstrip().startswith(("-", "*", "!", "[")):
                continue
            yield number, re.sub(r"`[^`]*`", "", line)


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
            m = None if fenced else re.match(r"^#{1,6} (.*)", line)
            if m:
                a = anchor(m.group(1))
                n = seen.get(a, 0)
                seen[a] = n + 1
                out.add(a if n == 0 else f"{a}-{n}")
    return out


def broken_links(path):
    broken = []
    for number, line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            file_part, _, fragment = target.partition("#")
            linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = f"{os.path.relpath(path, SOURCE_DIR)}:{number}: {target}"
            if not os.path.exists(linked):
                broken.append(f"{where}: no such file")
            elif fragment and linked.endswith(".md") and fragment not in anchors(linked):
                broken.append(f"{where}: no heading with that anchor")
    return broken


def documentation_pages():
    """README.md and every page under docs/: the files whose named paths must exist."""
    return [os.path.join(SOURCE_DIR, "README.md")] + sorted(glob.glob(os.path.join(SOURCE_DIR, "docs", "**", "*.md"),
                                                                      recursive=True))


NAMED_PATH = re.compile(r"(?<![\w/.-])((?:recipes|tools|tests|toolkit|cli|third_party)/[\w./-]*[\w/-])")


def missing_named_paths(path):
    """Repository paths named in the text that match nothing. A name may stop where a
    placeholder starts (recipes/locality-<method>-base.yaml) or leave out an extension
    (tools/bench/bench-train, built from bench-train.cpp): it must begin some path. An
    upper-case component is a placeholder (tests/fuzz/corpus/TARGET/): the name ends before it."""
    missing = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            for named in NAMED_PATH.findall(line):
                parts = named.split("/")
                fixed = next((i for i, part in enumerate(parts) if re.fullmatch(r"[A-Z][A-Z_]*", part)), len(parts))
                prefix = "/".join(parts[:fixed]) + ("/" if fixed < len(parts) else "")
                if not glob.glob(os.path.join(SOURCE_DIR, glob.escape(prefix)) + "*"):
                    missing.append(f"{os.path.relpath(path, SOURCE_DIR)}:{number}: {named}")
    return missing


class DocLinksTest(unittest.TestCase):
    def test_anchor_rules(self):
        self.assertEqual(anchor("csan-score: sacreBLEU 2.6.0 on local files"), "csan-score-sacrebleu-260-on-local-files")
        self.assertEqual(anchor("CCN: crossed co-attention networks (Li & Jiang 2020)"),
                         "ccn-crossed-co-attention-networks-li--jiang-2020")
        self.assertEqual(anchor("Fast CPU decoding: `--precision bf16|int8`, `--shortlist`"),
                         "fast-cpu-decoding---precision-bf16int8---shortlist")

    def test_a_broken_link_is_found(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            doc = os.path.join(d, "doc.md")
            with open(doc, "w") as f:
                f.write("# Title\n\n## A section\n\n[ok](#a-section) [bad](#b-section) [file](missing.md)\n"
                        "![here](doc.md#title)\n```\n[in code](nowhere.md)\n```\n`[inline](nowhere.md)`\n")
            self.assertEqual(broken_links(doc), [
                os.path.relpath(doc, SOURCE_DIR) + ":5: #b-section: no heading with that anchor",
                os.path.relpath(doc, SOURCE_DIR) + ":5: missing.md: no such file"])

    def test_every_link_of_the_project_leads_somewhere(self):
        files = markdown_files()
        self.assertIn(os.path.join(SOURCE_DIR, "README.md"), files)
        broken = [b for path in files for b in broken_links(path)]
        self.assertEqual(broken, [], "\n".join(broken))

    def test_every_docs_page_is_checked(self):
        files = markdown_files()
        pages = documentation_pages()
        self.assertIn(os.path.join(SOURCE_DIR, "docs", "README.md"), pages)
        for page in pages:
            self.assertIn(page, files)

    def test_every_path_the_readme_and_the_docs_name_exists(self):
        missing = [m for page in documentation_pages() for m in missing_named_paths(page)]
        self.assertEqual(missing, [], "\n".join(missing))

    def test_a_renamed_path_is_found(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            doc = os.path.join(d, "doc.md")
            with open(doc, "w") as f:
                f.write("`recipes/tiny-transformer.yaml`, recipes/locality-<method>-base.yaml,\n"
                        "tools/bench/bench-train, tests/fuzz/corpus/TARGET/ and toolkit/no_such_file.cpp.\n")
            self.assertEqual(missing_named_paths(doc), [os.path.relpath(doc, SOURCE_DIR) + ":2: toolkit/no_such_file.cpp"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
