"""Every figure the README and the docs/ pages state as a speed ratio ("1.86x") or a BLEU score
("38.15 BLEU", "BLEU 38.4") can be traced: its paragraph links a results file under
tools/experiments/results/, or says in so many words that there is "no results file" behind it.
A table counts as part of the paragraph that introduces it (the block just before it), because
a link does not fit a table's cells, and the paragraph right after a table, which discusses it,
counts as part of that table. Code (fenced or indented blocks, inline spans) is not prose
and is not checked."""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_links_test import SOURCE_DIR, documentation_pages  # noqa: E402

# A speed ratio: digits (a decimal or a range) glued to an "x" that ends the word: 1.86x, 2x,
# 1.83-1.90x; not 3 x 3, 0x7f or x86. A BLEU figure: a decimal just before or after the word
# BLEU (not sacreBLEU 2.6.0, whose BLEU is inside a word).
SPEED = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?x(?!\w)")
BLEU = re.compile(r"\d+\.\d+ (?:test |valid )?BLEU\b|\bBLEU\b (?:of |=|is |score )?\d+\.\d+")
RESULTS_LINK = re.compile(r"\]\((?:\.\./)*tools/experiments/results/[^)#/]+\.(?:md|png)(?:#[^)]*)?\)")
UNBACKED = "no results file"


def blocks(path):
    """(first line number, kind, text) of the prose blocks of a Markdown file: paragraphs (each
    list item is one) and tables, split at blank lines and headings, without code."""
    out, lines, start, kind = [], [], None, None
    fenced = indented = False

    def flush():
        nonlocal lines, start, kind
        if lines:
            out.append((start, kind, "".join(lines)))
        lines, start, kind = [], None, None

    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                flush()
                continue
            # An indented code block starts after a blank line (a list item's continuation lines
            # are indented too, but follow their item) and lasts while its lines stay indented.
            if line.strip() and not line.startswith("    "):
                indented = False
            elif line.startswith("    ") and not lines:
                indented = True
            if fenced or indented or not line.strip() or line.startswith("#"):
                flush()
                continue
            line_kind = "table" if line.lstrip().startswith("|") else "paragraph"
            if lines and (line_kind != kind or re.match(r"\s*(?:[-*]|\d+\.) ", line)):
                flush()  # a list item is a paragraph of its own
            if not lines:
                start, kind = number, line_kind
            lines.append(line)
    flush()
    return out


def figures(text):
    prose = re.sub(r"`[^`]*`", "", text)
    prose = re.sub(r"\]\([^)]*\)", "]", prose)  # link targets are not figures
    return SPEED.findall(prose) + BLEU.findall(prose)


def traced(text):
    return bool(RESULTS_LINK.search(text)) or UNBACKED in " ".join(text.lower().split())


def untraced_figures(path):
    found, previous_kind, previous_covered = [], None, False
    for start, kind, text in blocks(path):
        # A table takes its introduction's trace; the paragraph after a table takes the table's.
        covered = traced(text) or (previous_covered and (kind == "table" or previous_kind == "table"))
        stated = figures(text)
        if stated and not covered:
            found.append(f"{os.path.relpath(path, SOURCE_DIR)}:{start}: {', '.join(stated[:3])}")
        previous_kind, previous_covered = kind, covered
    return found


class DocFiguresTest(unittest.TestCase):
    def check(self, markdown):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            doc = os.path.join(d, "doc.md")
            with open(doc, "w", encoding="utf-8") as f:
                f.write(markdown)
            return [line.split(": ", 1)[0].rsplit(":", 1)[1] for line in untraced_figures(doc)]

    def test_figures_are_found(self):
        self.assertEqual(figures("CCN took 1.86x the time, bf16 1.83-1.90x, int8 2x PyTorch"), ["1.86x", "1.83-1.90x", "2x"])
        self.assertEqual(figures("test BLEU 38.15 against 38.9 BLEU; 37.01 test BLEU"), ["BLEU 38.15", "38.9 BLEU", "37.01 test BLEU"])

    def test_prose_that_is_not_a_figure_is_left_alone(self):
        self.assertEqual(figures("a 3 x 3 convolution, [320 x 256] by 0x7f on x86, sacreBLEU 2.6.0, "
                                 "`--ratio 2x`, BLEU and chrF2 of each system"), [])

    def test_an_untraced_figure_is_reported_with_its_line(self):
        self.assertEqual(self.check("# T\n\nIntro.\n\nCCN took 1.86x the Transformer's time.\n"), ["5"])

    def test_a_linked_results_file_or_an_open_admission_traces_it(self):
        self.assertEqual(self.check("CCN 1.86x ([r](../tools/experiments/results/ccn.md)).\n\n"
                                    "bf16 1.5x (no results file: recorded in 1234abc's README).\n\n"
                                    "int8 2.1x. No results\nfile was kept for it.\n"), [])

    def test_a_table_is_traced_by_the_paragraph_that_introduces_it(self):
        self.assertEqual(self.check("Speeds ([r](tools/experiments/results/a.md)):\n\n| a | 1.9x |\n|---|--:|\n\n"
                                    "So a is 1.9x.\n\nIntro without a link:\n\n| b | 2.1x |\n|---|--:|\n\n"
                                    "So b is 2.1x.\n\nAnd a again 1.9x.\n"), ["10", "13", "15"])

    def test_a_link_to_the_results_folder_is_not_a_results_file(self):
        self.assertEqual(self.check("CCN 1.86x ([all](tools/experiments/results/)).\n"), ["1"])

    def test_each_list_item_is_a_paragraph(self):
        self.assertEqual(self.check("- CCN 1.86x ([r](tools/experiments/results/ccn.md))\n- CSAN 1.03x\n"
                                    "  still CSAN\n1. int8 2.7x\n"), ["2", "4"])

    def test_code_is_not_prose(self):
        self.assertEqual(self.check("```\nBLEU = 38.15 at 2x\n```\n\n    print(1.5x)\n      --ratio 2x\n\n    more 3x\n\nText `2x`.\n"
                                    "- an item\n    continued at 2x\n"), ["11"])

    def test_every_figure_of_the_readme_and_the_docs_is_traced(self):
        untraced = [u for page in documentation_pages() for u in untraced_figures(page)]
        self.assertEqual(untraced, [], "figures whose paragraph links no results file:\n" + "\n".join(untraced))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
