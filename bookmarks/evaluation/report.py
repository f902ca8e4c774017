"""Results as the paper reports them: a paired comparison of two runs over the same items
(difference, 95% bootstrap interval, permutation p-value), and the Table 2 layout —
methods × five NAP dimensions + mean, Best@1 / Best@k, MCQ accuracy — with intervals, as
Markdown, CSV or LaTeX."""

from __future__ import annotations

import csv
import io

from bookmarks.engine.methods import METHODS
from bookmarks.errors import BookmarksError
from bookmarks.evaluation.evaluate import DIMENSIONS, mean
from bookmarks.evaluation.stats import paired_difference
from bookmarks.store import Store

COLUMNS = (*DIMENSIONS, "mean")
# what two runs compared item by item must share besides their story: the protocol
# (every eligible action or a sample) and how the judge was asked (five calls or one)
PROTOCOL = (("protocol", "every eligible action", "protocol"), ("judge", "single", "judge mode"))


def _item_scores(store: Store, run: dict, best: bool = False) -> dict[str, dict[str, float]]:
    """Per item key: the run's score per NAP column (Best@1, or Best@k), or MCQ accuracy."""
    out = {}
    for r in store.records(run["id"]):
        if run["kind"] == "mcq":
            out[r["qid"]] = {"accuracy": 100.0 if r["correct"] else 0.0}
            continue
        s = r["scores"][r["best"] if best else 0]
        out[str(r["point"])] = {**{d: float(s[d]) for d in DIMENSIONS}, "mean": mean(s)}
    return out


def compare(store: Store, run_a: int, run_b: int) -> dict:
    """Run A − run B over the items both have: per column, the mean paired difference, its
    95% bootstrap interval (items resampled) and a sign-flip permutation p-value."""
    a, b = store.run(run_a), store.run(run_b)
    if a["kind"] != b["kind"]:
        raise BookmarksError(f"Run {run_a} is {a['kind']} and run {run_b} is {b['kind']}: "
                             "compare runs of the same kind.")
    if a["story_id"] != b["story_id"]:  # item keys are story points: another story's differ
        raise BookmarksError(f"Run {run_a} is on story {a['story_id']} and run {run_b} on story "
                             f"{b['story_id']}: a paired comparison needs the same story.")
    for key, default, what in PROTOCOL:
        va, vb = a["params"].get(key, default), b["params"].get(key, default)
        if va != vb:
            raise BookmarksError(f"Run {run_a} was judged with {what} {va!r} and run {run_b} with "
                                 f"{vb!r}: their scores are not comparable item by item.")
    sa, sb = _item_scores(store, a), _item_scores(store, b)
    shared = sorted(set(sa) & set(sb), key=lambda k: (len(k), k))
    if not shared:
        raise BookmarksError("The two runs have no item in common (different stories, "
                             "characters or ranges?).")
    columns = ("accuracy",) if a["kind"] == "mcq" else COLUMNS
    return {"kind": a["kind"], "a": {"id": run_a, "method": a["method"]},
            "b": {"id": run_b, "method": b["method"]}, "items": len(shared),
            "only_a": len(sa) - len(shared), "only_b": len(sb) - len(shared),
            "columns": {c: paired_difference([sa[k][c] for k in shared],
                                             [sb[k][c] for k in shared]) for c in columns}}


def format_compare(result: dict) -> str:
    a, b = result["a"], result["b"]
    lines = [f"{METHODS.get(a['method'], a['method'])} (run {a['id']}) − "
             f"{METHODS.get(b['method'], b['method'])} (run {b['id']}) over {result['items']} "
             f"shared items ({result['only_a']} only in A, {result['only_b']} only in B):"]
    for c, r in result["columns"].items():
        lo, hi = r["ci"]
        lines.append(f"  {c:<10} {r['diff']:+7.2f}  95% CI [{lo:+.2f}, {hi:+.2f}]  p = {r['p']:.4f}"
                     + ("  *" if r["p"] < 0.05 else ""))
    return "\n".join(lines)


def _label(run: dict) -> str:
    """The method's name, with the knowledge mode when it is not the default."""
    name = METHODS.get(run["method"], run["method"])
    knowledge = run["params"].get("knowledge", "omniscient")
    return name if knowledge == "omniscient" else f"{name} ({knowledge})"


def _same_setup(a: dict, b: dict) -> bool:
    return (a["story_id"], a["method"], a["params"].get("knowledge", "omniscient")) == \
        (b["story_id"], b["method"], b["params"].get("knowledge", "omniscient"))


def _mean_ci(values: list[float]) -> tuple[float, tuple[float, float]]:
    r = paired_difference(values, [0.0] * len(values))
    return r["diff"], r["ci"]


def table(store: Store, run_ids: list[int]) -> dict:
    """Rows for the Table 2 layout: one per NAP run (with the MCQ run of the same method
    and story folded in when given)."""
    runs = [store.run(i) for i in run_ids]
    nap = [r for r in runs if r["kind"] == "nap"]
    mcq = [r for r in runs if r["kind"] == "mcq"]
    if not nap and not mcq:
        raise BookmarksError("Give the ids of finished NAP (and MCQ) runs.")
    rows = []
    for run in nap:
        one, best = _item_scores(store, run), _item_scores(store, run, best=True)
        row = {"method": _label(run), "run": run["id"],
               "items": len(one), "k": run["params"].get("k", 1),
               "judge": run["params"].get("judge", "single")}
        for c in COLUMNS:
            row[c] = _mean_ci([v[c] for v in one.values()])
        row["best@1"] = row["mean"]
        row["best@k"] = _mean_ci([v["mean"] for v in best.values()])
        m = next((x for x in mcq if _same_setup(x, run)), None)
        if m is not None:
            mcq.remove(m)
        row["mcq"] = _mean_ci([v["accuracy"] for v in _item_scores(store, m).values()]) if m else None
        rows.append(row)
    for m in mcq:  # MCQ runs without a NAP run of their method and setup
        rows.append({"method": _label(m), "run": m["id"],
                     "items": 0, "k": None, "judge": "",
                     **dict.fromkeys((*COLUMNS, "best@1", "best@k")),
                     "mcq": _mean_ci([v["accuracy"] for v in _item_scores(store, m).values()])})
    return {"rows": rows}


HEAD = ("Method", "Emotion", "Intent", "Causality", "Position", "Content", "Mean", "Best@1",
        "Best@k", "MCQ")
KEYS = (*COLUMNS, "best@1", "best@k", "mcq")


def _cell(value, fmt: str) -> str:
    if value is None:
        return "–"
    m, (lo, hi) = value
    if fmt == "latex":
        return f"{m:.1f}$_{{[{lo:.1f},{hi:.1f}]}}$"
    return f"{m:.1f} [{lo:.1f}, {hi:.1f}]"


def format_table(result: dict, fmt: str = "markdown") -> str:
    rows = result["rows"]
    body = [[r["method"], *(_cell(r[k], fmt) for k in KEYS)] for r in rows]
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(["method", "run", "items", "k", "judge",
                    *[f"{k}{s}" for k in KEYS for s in ("", "_lo", "_hi")]])
        for r in rows:
            cells = []
            for k in KEYS:
                cells += ["", "", ""] if r[k] is None else [round(r[k][0], 2), round(r[k][1][0], 2),
                                                            round(r[k][1][1], 2)]
            w.writerow([r["method"], r["run"], r["items"], r["k"], r["judge"], *cells])
        return out.getvalue()
    if fmt == "latex":
        lines = ["\\begin{tabular}{l" + "r" * (len(HEAD) - 1) + "}", "\\toprule",
                 " & ".join(HEAD) + " \\\\", "\\midrule"]
        lines += [" & ".join(row) + " \\\\" for row in body]
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines)
    if fmt != "markdown":
        raise BookmarksError("The table format is markdown, csv or latex.")
    lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    notes = sorted({f"run {r['run']}: {r['items']} items, k={r['k']}, judge {r['judge']}"
                    for r in rows if r["items"]})
    return "\n".join(lines) + ("\n\nMeans with 95% bootstrap intervals; " + "; ".join(notes)
                               if notes else "")
