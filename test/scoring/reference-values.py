# Reference values for test/scoring/compute.test.ts, computed by independent implementations: NLTK's
# sentence_bleu (Debian's python3-nltk, 3.8) with SmoothingFunction().method1 for BLEU, and
# python-Levenshtein (Debian's python3-levenshtein) for edit distances. Tokens are made as the store
# makes them (lower-cased runs of letters or digits, and each other non-space character).
# Run: /usr/bin/python3 test/scoring/reference-values.py  > test/scoring/reference-values.json (the values the test compares with).
import json
import re

import Levenshtein
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

def tokens(text):
    return re.findall(r"[^\W_]+|[^\s\w]|_", text.lower())

BLEU_CASES = [
    ("The cat sat on the mat.", ["The cat sat on the mat."]),
    ("The cat is on the mat.", ["The cat sat on the mat."]),
    ("It is sunny and 21 C in Paris.", ["It is sunny in Paris, 21 degrees."]),
    ("Paris", ["It is sunny in Paris."]),
    ("completely unrelated words here", ["The cat sat on the mat."]),
    ("the the the the the the the", ["The cat is on the mat."]),
    ("A quick brown fox jumps over the lazy dog", ["The quick brown fox jumped over the lazy dog", "A fast brown fox leaps over a lazy dog"]),
    ("Berlin is the capital of Germany and its largest city.", ["The capital of Germany is Berlin."]),
    ("yes", ["yes"]),
    ("yes no", ["yes no maybe"]),
]
LEV_CASES = [("kitten", "sitting"), ("", "abc"), ("flaw", "lawn"), ("It is sunny.", "It is sunny!"), ("same", "same"), ("Gumbo", "Gambol")]

out = {
    "bleu": [
        {"candidate": c, "references": refs, "value": sentence_bleu([tokens(r) for r in refs], tokens(c), smoothing_function=SmoothingFunction().method1)}
        for c, refs in BLEU_CASES
    ],
    "levenshtein": [{"a": a, "b": b, "distance": Levenshtein.distance(a, b)} for a, b in LEV_CASES],
}
print(json.dumps(out, indent=2))
