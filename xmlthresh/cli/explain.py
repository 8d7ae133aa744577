"""``xmlthresh explain <overrides>``: the threshold problem of a small data set, spelled out.

For the reference work's small instances (``dataset=counterexample``: Table 1; ``dataset=example``: Table 7):

1. every threshold vector over every cut position (1..L_k and "predict all"), with P, R, F-macro, and which
   are **coordinate-wise maxima** (no single label can improve F-macro by moving its cut) and which is the
   global optimum -- printed when there are at most ``--max-vectors`` of them (Table 1);
2. per distinct label (labels with the same candidate set are shown once, with their count): the linear
   objective R0^2 p + beta^2 P0^2 r of every cut (1..L_k and "predict all"; the Pareto candidates marked) at
   the optimum's (P0, R0) = (P, R), its best response marked (Table 7: at a fixed point of V every label's cut at the optimum is its best response;
   where V has none, as on Example, some are not);
3. cyclic coordinate ascent on F-macro from ``--start`` (cuts, one per label; default: every label at its own
   F optimum, as ``strategy=coordinate`` starts), every move printed, until no label can improve: from
   (4, 1) on the counterexample it is stuck at 0.75 while the optimum is 0.7895.

    xmlthresh explain dataset=counterexample --start 4,1
    xmlthresh explain dataset=example beta=2
"""

from __future__ import annotations

import argparse
import itertools
import math
from typing import Any, Sequence

import numpy as np

from xmlthresh.data.candidates import build_candidates
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.metrics import f_beta_raw

#: labels above which the coordinate ascent is not traced (use strategy=coordinate)
MAX_TRACED_LABELS = 1000


def cut_options(lists: RankedLists, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every admissible cut of label k (1..L_k and, when allowed, "predict all" = m) and its tp. With tied
    scores a relevant document counts from the end of its tie group on, and cuts inside a relevant
    document's tie group (from its rank to the group's end) are not admissible."""
    length, m = int(lists.list_length[k]), int(lists.num_docs)
    rank = lists.relevant_rank[lists.label_ptr[k]:lists.label_ptr[k + 1]]
    end = lists.cut_of_relevant[lists.label_ptr[k]:lists.label_ptr[k + 1]]
    inside = np.zeros(length + 2, dtype=np.int64)  # difference array over positions: [rank, end) is inside
    np.add.at(inside, np.minimum(rank, length + 1), 1)
    np.add.at(inside, np.minimum(end, length + 1), -1)
    cuts = np.flatnonzero(np.cumsum(inside)[1:length + 1] == 0).astype(np.int64) + 1
    if lists.include_predict_all:
        cuts = np.r_[cuts[cuts != m], m]
    tp = np.searchsorted(np.sort(end), np.minimum(cuts, length), side="right").astype(np.int64)
    if lists.include_predict_all:
        tp[-1] = lists.n_relevant[k]
    return cuts, tp


def tp_at_cuts(lists: RankedLists, cuts: np.ndarray) -> np.ndarray:
    """tp of each label at admissible ``cuts`` (a relevant document counts once its tie group is included)."""
    tp = np.zeros(lists.n_labels, dtype=np.int64)
    for k in range(lists.n_labels):  # explain handles at most MAX_TRACED_LABELS labels here
        end = lists.cut_of_relevant[lists.label_ptr[k]:lists.label_ptr[k + 1]]
        tp[k] = lists.n_relevant[k] if cuts[k] == lists.num_docs else int(np.count_nonzero(end <= cuts[k]))
    return tp


def _pr(tp: np.ndarray, cut: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.where(cut > 0, tp / np.maximum(cut, 1), 0.0), tp / s


def all_vectors(lists: RankedLists, beta: float) -> dict[str, np.ndarray]:
    """Every threshold vector of a small instance: cuts (V x n), P, R, F and the coordinate-wise maxima."""
    options = [cut_options(lists, k) for k in range(lists.n_labels)]
    n = lists.n_labels
    index = np.array(list(itertools.product(*[range(len(c)) for c, _ in options])), dtype=np.int64).reshape(-1, n)
    per_p = [_pr(tp, c, lists.n_relevant[k])[0] for k, (c, tp) in enumerate(options)]
    per_r = [_pr(tp, c, lists.n_relevant[k])[1] for k, (c, tp) in enumerate(options)]
    p_sum = sum(per_p[k][index[:, k]] for k in range(n))
    r_sum = sum(per_r[k][index[:, k]] for k in range(n))
    f = f_beta_raw(p_sum / n, r_sum / n, beta)
    local = np.ones(len(index), dtype=bool)
    for k in range(n):  # a move of label k alone: the best F over its options with the others fixed
        others_p, others_r = p_sum - per_p[k][index[:, k]], r_sum - per_r[k][index[:, k]]
        best = f_beta_raw((others_p[:, None] + per_p[k][None, :]) / n, (others_r[:, None] + per_r[k][None, :]) / n,
                      beta).max(axis=1)
        local &= best <= f + 1e-12
    cuts = np.column_stack([options[k][0][index[:, k]] for k in range(n)])
    return {"cuts": cuts, "P": p_sum / n, "R": r_sum / n, "F": f, "coordinate_max": local}


def linear_objective_table(lists: RankedLists, beta: float, p0: float, r0: float,
                           chosen: np.ndarray) -> list[dict[str, Any]]:
    """Per distinct label (same cuts, tp and chosen cut): the linear objective R0^2 p + beta^2 P0^2 r at
    (p0, r0) of every admissible cut (1..L_k and "predict all"), and which cuts are Pareto candidates (no other
    cut has a precision and a recall at least as high, one of them higher; only those can be a best response)."""
    cands = build_candidates(lists)
    weight_p, weight_r = r0 * r0, beta * beta * p0 * p0
    rows, seen = [], {}
    for k in range(lists.n_labels):
        cut, tp = cut_options(lists, k)
        key = (tuple(cut.tolist()), tuple(tp.tolist()), int(lists.n_relevant[k]), int(chosen[k]))
        if key in seen:
            seen[key]["labels"] += 1
            continue
        p, r = _pr(tp, cut, lists.n_relevant[k])
        objective = weight_p * p + weight_r * r
        pareto = np.isin(cut, cands.cut[cands.cand_ptr[k]:cands.cand_ptr[k + 1]])
        entry = {"label": lists.label_ids[k], "position": k, "labels": 1, "cut": cut, "p": p, "r": r,
                 "objective": objective, "pareto": pareto, "best": int(np.argmax(objective)), "chosen": int(chosen[k])}
        seen[key] = entry
        rows.append(entry)
    return rows


def coordinate_ascent(lists: RankedLists, beta: float, start: np.ndarray) -> tuple[list[str], np.ndarray, float]:
    """Cyclic coordinate ascent over every cut position from ``start``: the moves (text), final cuts and F."""
    n = lists.n_labels
    options = [cut_options(lists, k) for k in range(n)]
    cuts = np.asarray(start, dtype=np.int64).copy()
    tp = tp_at_cuts(lists, cuts)
    p, r = _pr(tp, cuts, lists.n_relevant)
    moves = []
    f = float(f_beta_raw(p.mean(), r.mean(), beta))
    for sweep in range(1, 1000):
        moved = False
        for k in range(n):
            opt_p, opt_r = _pr(options[k][1], options[k][0], lists.n_relevant[k])
            trial = f_beta_raw((p.sum() - p[k] + opt_p) / n, (r.sum() - r[k] + opt_r) / n, beta)
            best = int(np.argmax(trial))
            if trial[best] > f + 1e-12:
                moves.append(f"  sweep {sweep}: label {lists.label_ids[k]} (position {k}) cut {cuts[k]} -> {options[k][0][best]}: "
                             f"F-macro {f:.6f} -> {trial[best]:.6f}")
                cuts[k], p[k], r[k], f = options[k][0][best], opt_p[best], opt_r[best], float(trial[best])
                moved = True
        if not moved:
            break
    return moves, cuts, f


def _count(total: int) -> str:
    """A count as digits, or as a power of ten when it has more than 12 digits."""
    digits = str(total)
    return f"{total:,}" if len(digits) <= 12 else f"about {digits[0]}.{digits[1]} x 10^{len(digits) - 1}"


def check_start(lists: RankedLists, start: Sequence[int]) -> np.ndarray:
    """``start`` as cuts, one admissible cut per label of ``lists`` (labels with relevant documents), or a
    ValueError naming the first that is not (a cut beyond the list gave precisions above 1 or below 0)."""
    cuts = np.asarray(start, dtype=np.int64)
    if len(cuts) != lists.n_labels:
        raise ValueError(f"--start has {len(cuts)} cuts; the data set has {lists.n_labels} labels with relevant "
                         "documents")
    for k, cut in enumerate(cuts):
        admissible = cut_options(lists, k)[0]
        if cut not in admissible:
            shown = ", ".join(map(str, admissible[:8])) + (", ..." if len(admissible) > 8 else "")
            raise ValueError(f"--start: {int(cut)} is not a cut of label {k + 1}; its cuts are {shown} (m = "
                             f"{lists.num_docs} predicts every document)")
    return cuts


def explain(lists: RankedLists, beta: float = 1.0, start: Sequence[int] | None = None,
            max_vectors: int = 10_000) -> str:
    """The text ``xmlthresh explain`` prints (module docstring)."""
    from xmlthresh.strategies import STRATEGIES

    kept = lists.n_relevant > 0
    if not kept.all():
        lists = lists.select_labels(kept)
    out = [f"{lists.name or 'data'}: {lists.n_labels} labels with relevant documents, m = {lists.num_docs}, "
           f"beta = {beta:g}, predict all {'allowed' if lists.include_predict_all else 'not allowed'}"]
    domain = STRATEGIES.get("domain")(beta=beta).fit_lists(lists)
    p0, r0 = domain.metrics_["precision"], domain.metrics_["recall"]
    out.append(f"optimum (domain, certified): F-macro {domain.f_macro_:.7f} <= {domain.upper_bound_:.7f} at cuts "
               f"{_short(domain.cuts_)}, P {p0:.6f}, R {r0:.6f}; V has "
               f"{'a' if domain.fixed_point_exists_ else 'no'} fixed point")

    counts = [len(cut_options(lists, k)[0]) for k in range(lists.n_labels)]
    total = math.prod(counts)  # exact (Python integers): ESP Game's count overflows a float
    out.append("")
    if total <= max_vectors:
        table = all_vectors(lists, beta)
        best = int(np.argmax(table["F"]))
        out.append(f"every threshold vector ({int(total)}): * = coordinate-wise maximum, ! = global optimum")
        out.append("| cuts | P | R | F-macro | |")
        out.append("|---|---|---|---|---|")
        for i in range(len(table["F"])):
            mark = ("!" if i == best else "") + ("*" if table["coordinate_max"][i] else "")
            out.append(f"| {tuple(table['cuts'][i].tolist())} | {table['P'][i]:.4f} | {table['R'][i]:.4f} | "
                       f"{table['F'][i]:.4f} | {mark} |")
        local = np.flatnonzero(table["coordinate_max"])
        out.append(f"{len(local)} coordinate-wise maxima: " + ", ".join(
            f"{tuple(table['cuts'][i].tolist())} F {table['F'][i]:.4f}" for i in local))
    else:
        out.append(f"every threshold vector: {_count(total)} of them (more than --max-vectors {max_vectors}), "
                   "not listed")

    out += ["", f"linear objective R0^2 p + beta^2 P0^2 r at the optimum (P0, R0) = ({p0:.6f}, {r0:.6f}) per "
                f"cut of each distinct label (> = its best response, o = its cut at the optimum; Pareto: no other cut has "
                f"a p and an r at least as high, one of them higher)"]
    for entry in linear_objective_table(lists, beta, p0, r0, domain.cuts_):
        out.append(f"label {entry['label']} (position {entry['position']}; {entry['labels']} label(s) like it):")
        out.append("| cut | p | r | objective | Pareto | |")
        out.append("|---|---|---|---|---|---|")
        for j in range(len(entry["cut"])):
            mark = (">" if j == entry["best"] else "") + ("o" if entry["cut"][j] == entry["chosen"] else "")
            out.append(f"| {entry['cut'][j]} | {entry['p'][j]:.4f} | {entry['r'][j]:.4f} | "
                       f"{entry['objective'][j]:.6f} | {'yes' if entry['pareto'][j] else 'no'} | {mark} |")
        if len(out) > 400:
            out.append("... (further labels not shown)")
            break

    out.append("")
    if lists.n_labels > MAX_TRACED_LABELS:
        out.append(f"coordinate ascent: not traced for more than {MAX_TRACED_LABELS} labels (strategy=coordinate)")
        return "\n".join(out) + "\n"
    if start is None:
        start_cuts = STRATEGIES.get("independent")(beta=beta).fit_lists(lists).cuts_
        origin = "every label at its own F optimum"
    else:
        start_cuts = check_start(lists, start)
        origin = "--start"
    moves, cuts, f = coordinate_ascent(lists, beta, start_cuts)
    out.append(f"cyclic coordinate ascent from {_short(start_cuts)} ({origin}):")
    out += moves or ["  no label can improve F-macro by moving alone"]
    gap = domain.f_macro_ - f
    out.append(f"stops at {_short(cuts)} with F-macro {f:.6f}: "
               + ("the optimum" if gap <= 1e-12 else f"a coordinate-wise maximum {gap:.6f} below the optimum"))
    return "\n".join(out) + "\n"


def _short(cuts: np.ndarray) -> str:
    cuts = np.asarray(cuts).tolist()
    return str(tuple(cuts)) if len(cuts) <= 12 else f"({', '.join(map(str, cuts[:12]))}, ... {len(cuts)} labels)"


def main(argv: Sequence[str]) -> int:
    """``xmlthresh explain [--start C1,C2,...] [--max-vectors N] <Hydra overrides>``."""
    import sys

    from hydra.errors import HydraException

    from xmlthresh.config import plugins  # noqa: F401 -- the registries find plugin data sets (counterexample) through it
    from xmlthresh.config.compose import compose
    from xmlthresh.datasets import DATASETS
    from xmlthresh._util.errors import first_line, user_error_types
    from xmlthresh._util.registry import ConfigError

    parser = argparse.ArgumentParser(prog="xmlthresh explain", description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", default=None, help="cuts to start coordinate ascent from, e.g. 4,1")
    parser.add_argument("--max-vectors", type=int, default=10_000, help="list every threshold vector up to this")
    args, overrides = parser.parse_known_args(list(argv))
    flags = [arg for arg in overrides if arg.startswith("-")]
    if flags:  # Hydra would report "LexerNoViableAltException: --bogus"
        parser.error(f"unknown option {flags[0]} (explain takes --start, --max-vectors and key=value overrides)")
    read = ("dataset", "beta", "seed", "hydra")  # what explain uses; any other key was ignored without a word
    unread = [arg.split("=", 1)[0] for arg in overrides
              if arg.lstrip("+~").split("=", 1)[0].split(".")[0].split("/")[0] not in read]
    if unread:
        parser.error(f"explain reads the data set (dataset=..., dataset.<key>=...) and beta only; {', '.join(unread)} "
                     "would be ignored: drop them")
    if args.max_vectors < 0:
        parser.error(f"--max-vectors must be >= 0, got {args.max_vectors}")
    try:
        cfg = compose(overrides)
        option = dict(cfg["dataset"])
        loader = option.pop("loader", None) or option.get("name")
        data = DATASETS.build(loader, option).load()
        if isinstance(data, ScoreData):  # score data: the ranked lists of its test split (what oracle fits)
            data = data.splits["test"].ranking().lists
        if not isinstance(data, RankedLists):
            raise ConfigError(f"explain needs ranked lists or scores; {option.get('name')!r} has features only "
                              "(rank it first, e.g. save a ranker's scores and use dataset=scores)")
        start = None
        if args.start is not None:
            try:
                start = [int(value) for value in args.start.split(",")]
            except ValueError:
                raise ConfigError(f"--start takes one cut per label, comma-separated integers (e.g. --start 4,1), "
                                  f"got {args.start!r}") from None
        print(explain(data, float(cfg.get("beta", 1.0)), start, args.max_vectors), end="")
    except (ConfigError, HydraException, *user_error_types()) as exc:
        print(f"xmlthresh explain: error: {first_line(exc)}", file=sys.stderr)
        return 1
    return 0
