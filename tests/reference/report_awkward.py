"""Print how gradcli compares with the awkward-point reference: values matched, and the
values that differ, by documented class (with its reason) and unexplained.

    .venv/bin/python tests/reference/report_awkward.py [--examples N]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import awkward as A  # noqa: E402 - tests/awkward.py, beside the tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=3, help="examples shown per class")
    args = parser.parse_args()
    print(f"reference: torch {A.META['torch']}, JAX {A.META['jax']}, mpmath {A.META['mpmath']}")
    total = collections.Counter()
    for table in A.TABLES:
        ours = A.gradcli_table(table)
        want, source = A.target(table)
        ok = A.agree(ours, want, derivative=np.arange(ours.shape[2]) > 0)
        exprs, points = A.REFERENCE[f"{table}_exprs"], A.REFERENCE[f"{table}_points"]
        torch, jax = A.REFERENCE[f"{table}_torch"], A.REFERENCE[f"{table}_jax"]
        counts, examples = collections.Counter(), collections.defaultdict(list)
        for e, p, c in zip(*np.nonzero(~ok), strict=True):
            cls = A.classify(str(exprs[e]), points[p], ours[e, p, c], want[e, p, c],
                     str(source[e, p, c]), torch[e, p, c], jax[e, p, c], c) or \
                "UNEXPLAINED"
            counts[cls] += 1
            examples[cls].append(f"{exprs[e]} at {points[p].tolist()} "
                                 f"{A.COLUMNS[points.shape[1]][c]}: gradcli {ours[e, p, c]!r}, "
                                 f"expected {want[e, p, c]!r} ({source[e, p, c]})")
        by_source = collections.Counter(source[ok].tolist())
        print(f"\n{table}: {ok.size} values, {int(ok.sum())} match "
              f"({', '.join(f'{k} {v}' for k, v in sorted(by_source.items()))})")
        total["values"] += ok.size
        total["match"] += int(ok.sum())
        for cls, n in counts.most_common():
            total[cls] += n
            print(f"  {n:6d} differ: {cls}")
            for line in examples[cls][:args.examples]:
                print(f"           {line}")
    print(f"\ntotal: {total['values']} values, {total['match']} match")
    for cls, reason in A.CLASSES.items():
        print(f"  {total[cls]:6d} differ: {cls} — {reason}")
    print(f"  {total['UNEXPLAINED']:6d} differ: unexplained")


if __name__ == "__main__":
    main()
