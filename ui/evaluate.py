"""Evaluate tab: run NAP / MCQ benchmarks with progress, compare runs, efficiency, and
the arena (generate starts, run continuations, LLM judge, results, exports)."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr
import pandas as pd

from bookmarks.engine.methods import METHODS
from bookmarks.errors import BookmarksError
from bookmarks.evaluation import arena, evaluate, mcq, report
from bookmarks.evaluation.export import label_studio_tasks, run_rows, to_csv, to_jsonl
from bookmarks.services import Services

from .library import story_choices
from .render import esc, parse_id, user_errors

METHOD_CHOICES = [(label, key) for key, label in METHODS.items()]


def runs_table(services: Services) -> list[list]:
    rows = []
    for r in services.store.runs():
        s = r["summary"]
        metric = (f"mean {s['best@1']['mean']:.1f} (best@{s.get('k', 1)} {s['best@k']['mean']:.1f})"
                  if r["kind"] == "nap" and "best@1" in s else
                  f"accuracy {s['accuracy']:.1f}% ({s['invalid']} invalid)"
                  if r["kind"] == "mcq" and "accuracy" in s else "")
        rows.append([r["id"], r["kind"], r["story_id"], METHODS.get(r["method"], r["method"]),
                     r["status"], s.get("items", 0), metric])
    return rows


def dimension_frame(services: Services) -> pd.DataFrame:
    rows = []
    for r in services.store.runs():
        if r["kind"] == "nap" and "best@1" in r["summary"]:
            for d in evaluate.DIMENSIONS:
                rows.append({"run": f"#{r['id']} {METHODS.get(r['method'], r['method'])}",
                             "dimension": d, "score": r["summary"]["best@1"][d]})
    return pd.DataFrame(rows, columns=["run", "dimension", "score"])


def results_md(r: dict, a: str, b: str) -> str:
    if not r["votes"]:
        return "No votes yet."
    lines = [f"**{esc(METHODS[a])} vs {esc(METHODS[b])}** — {r['votes']} votes", "",
             f"| outcome for {esc(METHODS[a])} | rate | 95% CI |", "|---|---|---|"]
    for c in arena.OUTCOMES:
        lo, hi = r["ci95"][c]
        lines.append(f"| {c} | {100 * r['rates'][c]:.1f}% | {100 * lo:.1f}–{100 * hi:.1f}% |")
    lines += ["", "| annotator | votes | win | tie | loss | both bad |", "|---|---|---|---|---|---|"]
    for who, v in r["per_annotator"].items():
        lines.append(f"| {esc(who)} | {v['votes']} | {100 * v['win']:.0f}% | {100 * v['tie']:.0f}% | "
                     f"{100 * v['loss']:.0f}% | {100 * v['both_bad']:.0f}% |")
    ag = r["agreement"]
    fmt = lambda x: "n/a" if x is None else f"{x:.2f}"  # noqa: E731
    lines += ["", f"Agreement on {ag['items']} shared items: Krippendorff's α "
              f"{fmt(ag['krippendorff_alpha'])}, Gwet's AC1 {fmt(ag['gwet_ac1'])}"]
    return "\n".join(lines)


def summary_text(run: dict) -> str:
    """A run's result in words (plain text; the caller escapes it)."""
    s = run["summary"]
    if run["kind"] == "mcq":
        return (f"MCQ accuracy {s.get('accuracy', 0):.1f}% over {s.get('items', 0)} questions "
                f"({s.get('invalid', 0)} invalid answers).")
    one, best = s.get("best@1", {}), s.get("best@k", {})
    dims = ", ".join(f"{d} {one.get(d, 0):.1f}" for d in evaluate.DIMENSIONS)
    return (f"NAP over {s.get('items', 0)} actions: mean {one.get('mean', 0):.1f} (Best@1), "
            f"{best.get('mean', 0):.1f} (Best@{s.get('k', 1)}); {dims}; "
            f"{s.get('unusable_predictions', 0)} unusable predictions, "
            f"{s.get('stand_in_predictions', 0)} stand-in lines.")


def build_evaluate_tab(services: Services) -> None:
    store = services.store
    exports = services.settings.data_dir / "exports"
    with gr.Tab("Evaluate") as tab:
        gr.Markdown("### Benchmarks")
        with gr.Row():
            story = gr.Dropdown(story_choices(services), value=None, label="Story")
            kind = gr.Radio(["NAP", "MCQ"], value="NAP", label="Benchmark")
            method = gr.Dropdown(METHOD_CHOICES, value="bookmarks", label="Method")
            points = gr.Number(5, precision=0, minimum=0,
                               label="Points (NAP; 0 = every eligible action, as the paper) / "
                                     "questions (MCQ; 0 = all)")
            k = gr.Number(1, precision=0, minimum=1, maximum=8, label="k (Best@k)")
            budget = gr.Number(3, precision=0, minimum=1, maximum=8, label="Budget K")
        with gr.Row():
            run_btn = gr.Button("Run", variant="primary", elem_id="eval-run")
            resume = gr.Number(None, precision=0, minimum=0, label="…or resume run id (0: new run)")
        status = gr.Markdown(elem_id="eval-status")
        runs = gr.Dataframe(runs_table(services), headers=["id", "kind", "story", "method", "status",
                                                           "items", "result"],
                            label="Runs", interactive=False)
        dims = gr.LinePlot(dimension_frame(services), x="dimension", y="score", color="run",
                          title="NAP per dimension (Best@1)", y_lim=[0, 100])
        with gr.Row():
            run_id = gr.Number(None, precision=0, label="Run id")
            fmt = gr.Radio(["csv", "jsonl"], value="csv", label="Format")
            export_btn = gr.Button("Export records")
            eff_btn = gr.Button("Efficiency")
        export_file = gr.File(label="Download", interactive=False)
        # line plots: Gradio's bar plots stack series, which would add the two costs up
        eff_plot = gr.LinePlot(pd.DataFrame(columns=["bucket", "cost", "tokens"]), x="bucket",
                              y="tokens", color="cost",
                              title="Sync tokens by story progress: actual vs without reuse")
        eff = gr.Dataframe(label="Sync cost by progress: actual vs without reuse", interactive=False,
                           headers=["bucket", "syncs", "actions_read", "actions_read_wo", "calls",
                                    "calls_wo", "tokens", "tokens_wo", "output_tokens",
                                    "output_tokens_wo"])
        with gr.Row():
            table_runs = gr.Textbox(label="Runs for the results table (ids, e.g. 3 5 7) or two "
                                          "to compare", elem_id="table-runs")
            table_fmt = gr.Radio(["markdown", "csv", "latex"], value="markdown", label="Table as")
            table_btn = gr.Button("Results table", elem_id="table-btn")
            compare_btn = gr.Button("Compare two runs (paired)")
        table_out = gr.Markdown(elem_id="table-out")
        with gr.Row():
            sweep_btn = gr.Button("Capacity sweep (Bookmarks K ∈ {2,3,5} vs 3-way ETA "
                                  "capacity ∈ {128,256,512})")
        sweep_plot = gr.LinePlot(pd.DataFrame(columns=["setting", "mean", "method"]), x="setting",
                                 y="mean", color="method", title="NAP mean score vs capacity")
        sweep_table = gr.Dataframe(headers=["method", "knob", "value", "run", "mean",
                                            "sync_tokens"], interactive=False)
        gr.Markdown("### Arena (Bookmarks vs 3-way ETA, or any two methods)")
        with gr.Row():
            a_story = gr.Dropdown(story_choices(services), value=None, label="Story")
            n_starts = gr.Number(3, precision=0, minimum=1, label="Starting scenes")
            a_source = gr.Radio([("the storyline (any model)", "storyline"),
                                 ("the memory model", "model")], value="storyline",
                                label="Starting scenes from", elem_id="arena-source")
            turns = gr.Number(10, precision=0, minimum=1, label="Turns per continuation")
            m_a = gr.Dropdown(METHOD_CHOICES, value="bookmarks", label="Method A")
            m_b = gr.Dropdown(METHOD_CHOICES, value="eta3", label="Method B")
        with gr.Row():
            gen_btn = gr.Button("Generate starts")
            cont_btn = gr.Button("Run continuations")
            judge_btn = gr.Button("LLM judge (both orders)")
        starts = gr.Dataframe(headers=["id", "point", "characters", "setting", "first line"],
                              interactive=True, label="Starting scenes (edit setting and first line)")
        save_starts = gr.Button("Save edits")
        arena_status = gr.Markdown(elem_id="arena-status")
        with gr.Row():
            source = gr.Radio(["human", "llm"], value="human", label="Votes from")
            results_btn = gr.Button("Show results")
        results = gr.Markdown(elem_id="arena-results")
        with gr.Row():
            vfmt = gr.Radio(["csv", "jsonl", "label-studio"], value="csv", label="Export")
            vexport_btn = gr.Button("Export votes / items")
        vfile = gr.File(label="Download", interactive=False)

    def starts_rows(story_label):
        sid = parse_id(story_label) if story_label else None
        return [[s["id"], s["point"], ", ".join(s["characters"]), s["setting"], s["first_line"]]
                for s in store.arena_starts(sid)]

    async def do_run(story_label, kind_, method_, points_, k_, budget_, resume_,
                     progress=gr.Progress()):
        def on_record(record, n, total):
            progress((n, total), desc=f"{kind_} item {n} of {total}")

        if not resume_ and not story_label:
            raise gr.Error("Choose a story (or give a run id to resume).")
        yield "Running… (see the progress bar)", gr.update(), gr.update()
        try:
            sid = parse_id(story_label) if story_label else None
            rid = int(resume_) if resume_ else None
            if kind_ == "NAP":
                if warning := evaluate.judge_warning(services.llms):
                    gr.Warning(warning)
                # points 0: every eligible action (the paper's protocol)
                run = await evaluate.run_nap(store, services.llms, sid, method=method_,
                                             points=int(points_) or None, k=int(k_),
                                             budget=int(budget_), run_id=rid, on_record=on_record)
            else:
                run = await mcq.run_mcq(store, services.llms, sid, method=method_,
                                             budget=int(budget_), limit=int(points_) or None,
                                             run_id=rid,
                                             on_record=on_record)
        except BookmarksError as exc:
            raise gr.Error(str(exc)) from None
        yield (f"Run {run['id']} done: {esc(summary_text(run))}",
               runs_table(services), dimension_frame(services))

    @user_errors
    def do_export(rid, fmt_):
        if not rid:
            raise gr.Error("Enter a run id.")
        rows = run_rows(store, int(rid))
        exports.mkdir(parents=True, exist_ok=True)
        path = exports / f"run-{int(rid)}.{fmt_}"
        path.write_text(to_csv(rows) if fmt_ == "csv" else to_jsonl(rows), "utf-8")
        return str(path)

    @user_errors
    def do_eff(rid):
        if not rid:
            raise gr.Error("Enter a run id.")
        run = store.run(int(rid))
        rows = evaluate.efficiency_buckets(store.sync_costs(run["story_id"], run["space"]))
        long = [{"bucket": r["bucket"], "cost": label, "tokens": r[key]} for r in rows
                for label, key in (("actual", "tokens"), ("without reuse", "tokens_wo"))]
        return pd.DataFrame(rows), pd.DataFrame(long, columns=["bucket", "cost", "tokens"])

    async def do_sweep(story_label, points_, progress=gr.Progress()):
        if not story_label:
            raise gr.Error("Choose a story.")
        done: list[dict] = []

        def on_run(row):
            done.append(row)
            progress((len(done), 6), desc=f"{row['method']} {row['knob']}={row['value']}")

        try:
            rows = await evaluate.run_sweep(store, services.llms, parse_id(story_label),
                                            points=int(points_), on_run=on_run)
        except BookmarksError as exc:
            raise gr.Error(str(exc)) from None
        plot = pd.DataFrame([{"setting": str(r["value"]), "mean": r["mean"],
                              "method": METHODS[r["method"]]} for r in rows])
        return plot, pd.DataFrame(rows)

    async def do_generate(story_label, n, from_, progress=gr.Progress()):
        # what went wrong is said here, in words, next to the buttons (not an Error badge)
        if not story_label:
            return "Choose a story first.", gr.update()
        refused: list[str] = []
        progress((0, int(n)), desc="starting scenes")
        try:
            ids = await arena.generate_starts(store, services.llms["memory"],
                                              parse_id(story_label), int(n), source=from_,
                                              refused=refused, on_start=lambda k, total: progress(
                                                  (k, total), desc=f"start {k + 1} of {total}"))
        except BookmarksError as exc:
            return esc(str(exc)), gr.update()
        where = "drawn from the storyline" if from_ == "storyline" else "written by the model"
        text = f"{len(ids)} of {int(n)} starting scenes {where}."
        text += "".join(f"\n- {esc(r)}" for r in refused)
        return text, starts_rows(story_label)

    @user_errors
    def do_save_starts(table):
        frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table)
        for row in frame.itertuples(index=False):
            store.update_arena_start(int(row[0]), str(row[3]).strip(), str(row[4]).strip())
        return "Starting scenes saved."

    async def do_continue(story_label, turns_, a, b, progress=gr.Progress()):
        if a == b:
            yield "Choose two different methods."
            return
        sid = parse_id(story_label) if story_label else None
        made = {i["start_id"] for i in store.arena_items()
                if (i["method_a"], i["method_b"]) == (a, b)}
        pending = [s for s in store.arena_starts(sid) if s["id"] not in made]
        if not pending:
            yield ("Every starting scene already has an item for these two methods: generate "
                   "more starting scenes first." if made else "Generate starting scenes first.")
            return
        steps = len(pending) * 2 * int(turns_)
        said: list[str] = []
        ready = 0
        for n, s in enumerate(pending, start=1):
            where = f"Start {n} of {len(pending)} (id {s['id']})"
            yield "\n".join([*said, f"{where}: continuing…"])

            def on_turn(method: str, k: int, total: int, n: int = n, where: str = where) -> None:
                done = ((n - 1) * 2 + (method == b)) * total + k
                progress((done, steps), desc=f"{where}: {METHODS.get(method, method)}, turn "
                                             f"{k + 1} of {total}")

            try:
                await arena.run_item(store, services.llms, s["id"], method_a=a, method_b=b,
                                     turns=int(turns_), on_turn=on_turn)
                ready += 1
                said.append(f"- {where}: an item is ready.")
            except BookmarksError as exc:  # said in place; the other starts still run
                said.append(f"- {where} gave no item: {esc(str(exc))}")
        yield "\n".join([f"{ready} of {len(pending)} items ready for annotation.", *said])

    async def do_judge():
        try:
            n = await arena.llm_judge(store, services.llms["judge"])
        except BookmarksError as exc:
            return esc(str(exc))
        return f"The judge model cast {n} votes."

    @user_errors
    def do_results(a, b, src):
        return results_md(arena.results(store, a, b, source=src), a, b)

    @user_errors
    def do_vexport(fmt_):
        exports.mkdir(parents=True, exist_ok=True)
        if fmt_ == "label-studio":
            path = exports / "arena-label-studio.json"
            path.write_text(json.dumps(label_studio_tasks(store), ensure_ascii=False, indent=1))
        else:
            path = exports / f"votes.{fmt_}"
            votes = store.judgments()
            path.write_text(to_csv(votes) if fmt_ == "csv" else to_jsonl(votes), "utf-8")
        return str(Path(path))

    def refresh():
        choices = gr.update(choices=story_choices(services))
        return choices, choices, runs_table(services), dimension_frame(services)

    tab.select(refresh, None, [story, a_story, runs, dims])
    run_btn.click(do_run, [story, kind, method, points, k, budget, resume], [status, runs, dims],
                  concurrency_id="models")
    export_btn.click(do_export, [run_id, fmt], export_file)
    eff_btn.click(do_eff, [run_id], [eff, eff_plot])

    def _ids(text: str | None) -> list[int]:
        try:
            ids = [int(x) for x in (text or "").replace(",", " ").split()]
        except ValueError:
            raise gr.Error("Run ids are whole numbers separated by spaces.") from None
        if not ids:
            raise gr.Error("Give the ids of finished runs (see the Runs table).")
        return ids

    @user_errors
    def do_table(text, fmt_):
        out = report.format_table(report.table(store, _ids(text)), fmt_)
        return out if fmt_ == "markdown" else f"```\n{out}\n```"

    @user_errors
    def do_compare(text):
        ids = _ids(text)
        if len(ids) != 2:
            raise gr.Error("Give exactly two run ids to compare.")
        return f"```\n{report.format_compare(report.compare(store, *ids))}\n```"

    table_btn.click(do_table, [table_runs, table_fmt], [table_out])
    compare_btn.click(do_compare, [table_runs], [table_out])
    sweep_btn.click(do_sweep, [story, points], [sweep_plot, sweep_table], concurrency_id="models")
    gen_btn.click(do_generate, [a_story, n_starts, a_source], [arena_status, starts],
                  concurrency_id="models")
    a_story.change(user_errors(starts_rows), [a_story], starts)
    save_starts.click(do_save_starts, [starts], arena_status)
    cont_btn.click(do_continue, [a_story, turns, m_a, m_b], arena_status, concurrency_id="models")
    judge_btn.click(do_judge, None, arena_status, concurrency_id="models")
    results_btn.click(do_results, [m_a, m_b, source], results)
    vexport_btn.click(do_vexport, [vfmt], vfile)
