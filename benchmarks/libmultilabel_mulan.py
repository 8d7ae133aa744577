"""LibMultiLabel's linear model as the ranker on 8 Mulan sets: its decision threshold (``native``), its
micromacro-freq thresholding (``lml_thresholding``) and this project's recommended rule (``pooled``), all on
the same 5-fold cross-fitted decision values (protocol=crossfit) of the fit documents, evaluated on the test split.

One command-line sweep (the rankers' scores are computed once per set and cached); the table reads each job's
result.json: F-macro, macro-F and micro-F on the test split, and the CPU seconds of the rule's own fit (the
ranker's seconds are the same for every rule of a set and are given once). Writes ``libmultilabel_mulan.md``.

    .venv/bin/python benchmarks/libmultilabel_mulan.py            # about 2 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETS = ("emotions", "scene", "yeast", "birds", "genbase", "medical", "enron", "cal500")
RULES = ("native", "lml_thresholding", "pooled")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--out", type=Path, default=HERE / "libmultilabel_mulan.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sweep = Path(tmp) / "sweep"
        command = [sys.executable, "-m", "xmlthresh", "-m", "ranker=lml_linear", "protocol=crossfit",
                   f"dataset={args.sets}", f"strategy={','.join(RULES)}", "tracking.enabled=false", "plots=false",
                   f"hydra.sweep.dir={sweep}"]
        subprocess.run(command, check=True, env={**os.environ, "XMLTHRESH_HOME": tmp})
        results = [json.loads(path.read_text()) for path in sweep.glob("*/result.json")]
    by = {(r["dataset"], r["strategy"]): r for r in results}
    sets = args.sets.split(",")
    lines = ["| data set | rule | F-macro | macro-F | micro-F | rule CPU s |", "|---|---|---|---|---|---|"]
    means = {rule: [0.0, 0.0, 0.0] for rule in RULES}
    for name in sets:
        for rule in RULES:
            r = by[(name, rule)]
            lines.append(f"| {name} | {rule} | {r['f_macro']:.4f} | {r['macro_f']:.4f} | {r['micro_f']:.4f} | "
                         f"{r['fit_seconds']:.4f} |")
            for i, key in enumerate(("f_macro", "macro_f", "micro_f")):
                means[rule][i] += r[key] / len(sets)
    lines += ["", "| rule | mean F-macro | mean macro-F | mean micro-F |", "|---|---|---|---|"]
    lines += [f"| {rule} | {m[0]:.4f} | {m[1]:.4f} | {m[2]:.4f} |" for rule, m in means.items()]
    text = "\n".join(["# LibMultiLabel's linear model on 8 Mulan sets (crossfit, test split)", "",
                      f"`xmlthresh {' '.join(command[3:-1])}`", "", *lines, ""])
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
