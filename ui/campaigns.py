"""Campaigns tab (the owner's): people and their roles, annotation campaigns built from
arena items (new ones drawn from the storyline or model-written, or existing ones), each
item given to k annotators in a per-annotator order; progress per annotator, agreement
(α, AC1) between people and with the judge model as it grows; close, reopen, export."""

from __future__ import annotations

import asyncio

import gradio as gr
import pandas as pd

from bookmarks.engine.methods import METHODS
from bookmarks.errors import BookmarksError
from bookmarks.evaluation import arena, campaigns
from bookmarks.evaluation.export import to_csv, to_jsonl
from bookmarks.services import Services
from bookmarks.store.users import ROLES, new_password

from .auth import Access
from .library import story_choices
from .render import esc, parse_id

METHOD_CHOICES = [(label, key) for key, label in METHODS.items()]
STARTS = [("drawn from the storyline (any model)", "storyline"),
          ("written by the memory model", "model")]
USER_HEADERS = ["name", "role", "created", "last signed in"]
CAMPAIGN_HEADERS = ["id", "name", "status", "items", "k", "annotators", "votes"]
PROGRESS_HEADERS = ["annotator", "assigned", "voted", "skipped", "left", "median seconds"]


def users_rows(services: Services) -> list[list]:
    return [[u["name"], u["role"], (u["created_at"] or "")[:16].replace("T", " "),
             (u["last_seen_at"] or "")[:16].replace("T", " ")] for u in services.store.users()]


def campaign_rows(services: Services) -> list[list]:
    store = services.store
    rows = []
    for c in store.campaigns():
        people = {a["annotator"] for a in store.assignments(c["id"])}
        votes = sum(j["source"] == "human" for j in store.campaign_judgments(c["id"]))
        rows.append([c["id"], c["name"], c["status"], len(store.campaign_items(c["id"])),
                     c["k"], ", ".join(sorted(people)), votes])
    return rows


def agreement_md(ag: dict) -> str:
    fmt = lambda x: "n/a" if x is None else f"{x:.2f}"  # noqa: E731
    p, pj = ag["people"], ag["people_and_judge"]
    lines = [f"**Agreement between annotators** on {p['items']} items with two or more votes: "
             f"Krippendorff's α {fmt(p['krippendorff_alpha'])}, Gwet's AC1 {fmt(p['gwet_ac1'])}."]
    if ag["judge_votes"]:
        lines.append(f"**With the judge model** as one more annotator ({ag['judge_votes']} items, "
                     f"its two orders combined): α {fmt(pj['krippendorff_alpha'])}, AC1 "
                     f"{fmt(pj['gwet_ac1'])}.")
        lines += [f"- {esc(w)} agrees with the judge model on {100 * r:.0f}% of shared items"
                  for w, r in ag["agree_with_judge"].items()]
    else:
        lines.append("The judge model has not voted on this campaign (see *Judge model votes*).")
    return "\n\n".join(lines[:2]) + ("\n" + "\n".join(lines[2:]) if lines[2:] else "")


def build_campaigns_tab(services: Services, access: Access) -> dict:
    store = services.store
    exports = services.settings.data_dir / "exports"
    with gr.Tab("Campaigns") as tab:
        signin = gr.Markdown(elem_id="campaign-signin")
        gr.Markdown("### People")
        with gr.Row():
            u_name = gr.Textbox(label="Name", elem_id="user-name")
            u_role = gr.Radio(list(ROLES), value="annotator", label="Role", elem_id="user-role")
            add_btn = gr.Button("Add user", elem_id="user-add")
            remove_btn = gr.Button("Remove user", elem_id="user-remove")
        user_status = gr.Markdown(elem_id="user-status")
        users = gr.Dataframe(users_rows(services), headers=USER_HEADERS, interactive=False,
                             label="Users", elem_id="users-table")
        gr.Markdown("### New campaign")
        with gr.Row():
            c_name = gr.Textbox(label="Campaign name", elem_id="campaign-name")
            c_story = gr.Dropdown(story_choices(services), value=None, label="Story",
                                  elem_id="campaign-story")
            c_items = gr.Radio([("generate new items", "new"), ("existing arena items", "existing")],
                               value="new", label="Items", elem_id="campaign-items")
            c_source = gr.Radio(STARTS, value="storyline", label="Starting scenes",
                                elem_id="campaign-source")
        with gr.Row():
            c_n = gr.Number(3, precision=0, minimum=1, label="Items (starting scenes)",
                            elem_id="campaign-n")
            c_turns = gr.Number(2, precision=0, minimum=1, label="Turns per continuation",
                                elem_id="campaign-turns")
            c_a = gr.Dropdown(METHOD_CHOICES, value="bookmarks", label="Method A")
            c_b = gr.Dropdown(METHOD_CHOICES, value="eta3", label="Method B")
            c_k = gr.Number(2, precision=0, minimum=1, label="Annotators per item (k)",
                            elem_id="campaign-k")
        with gr.Row():
            c_people = gr.CheckboxGroup([], label="Annotators", elem_id="campaign-annotators")
            c_random = gr.Checkbox(True, label="Randomized order per annotator")
            c_judge = gr.Checkbox(False, label="The judge model votes too (both orders)")
        create_btn = gr.Button("Create campaign", variant="primary", elem_id="campaign-create")
        status = gr.Markdown(elem_id="campaign-status")
        gr.Markdown("### Campaigns")
        table = gr.Dataframe(campaign_rows(services), headers=CAMPAIGN_HEADERS, interactive=False,
                             label="Campaigns", elem_id="campaign-table")
        with gr.Row():
            c_id = gr.Number(None, precision=0, label="Campaign id", elem_id="campaign-id")
            show_btn = gr.Button("Progress and agreement", elem_id="campaign-show")
            assign_btn = gr.Button("Assign the chosen annotators")
            judge_btn = gr.Button("Judge model votes")
            close_btn = gr.Button("Close", elem_id="campaign-close")
            reopen_btn = gr.Button("Reopen")
        per_person = gr.Dataframe(headers=PROGRESS_HEADERS, interactive=False,
                                  label="Progress per annotator", elem_id="campaign-progress")
        agreement = gr.Markdown(elem_id="campaign-agreement")
        with gr.Row():
            fmt = gr.Radio(["csv", "jsonl"], value="csv", label="Export as")
            export_btn = gr.Button("Export votes", elem_id="campaign-export")
        export_file = gr.File(label="Download", interactive=False, elem_id="campaign-file")

    def annotator_names() -> list[str]:
        return [u["name"] for u in store.users() if u["role"] == "annotator"]

    def refresh():
        note = ("" if access.enabled else
                "*Sign-in is off: there were no accounts when the app started. People added "
                "here can sign in once the app is restarted.*")
        return (note, users_rows(services), gr.update(choices=annotator_names()),
                gr.update(choices=story_choices(services)), campaign_rows(services))

    def add_account(name, role):
        password = new_password()
        try:
            store.add_user(name or "", role, password)
        except BookmarksError as exc:
            return esc(str(exc)), gr.update(), gr.update()
        text = (f"Added {role} **{esc(name.strip())}**. Their password, shown once — send it to "
                f"them: `{password}`")
        return text, users_rows(services), gr.update(choices=annotator_names())

    def remove_account(name):
        try:
            store.remove_user((name or "").strip())
        except BookmarksError as exc:
            return esc(str(exc)), gr.update(), gr.update()
        return (f"Removed **{esc(name.strip())}**.", users_rows(services),
                gr.update(choices=annotator_names()))

    def _cid(value) -> int:
        if not value:
            raise BookmarksError("Enter a campaign id (see the Campaigns table).")
        return int(value)

    async def create_campaign(name, story_label, items_mode, source, n, turns, a, b, k, people, randomize,
                     with_judge, request: gr.Request, progress=gr.Progress()):
        user = access.user(request, ("owner",))
        try:
            if not (name or "").strip():
                raise BookmarksError("Give the campaign a name.")
            sid = parse_id(story_label) if story_label else None
            if sid is None:
                raise BookmarksError("Choose a story.")
            if a == b:
                raise BookmarksError("Choose two different methods.")
            problems: list[str] = []
            if items_mode == "existing":
                item_ids = [i["id"] for i in store.arena_items()
                            if {i["method_a"], i["method_b"]} == {a, b} and any(
                                s["id"] == i["start_id"] for s in store.arena_starts(sid))][:int(n)]
                if not item_ids:
                    raise BookmarksError("This story has no arena items for these two methods "
                                         "yet: generate new items.")
            else:
                said = {"text": "Preparing the starting scenes…"}

                def told(text: str, done: int, total: int) -> None:
                    said["text"] = text
                    progress((done, total), desc=text)

                job = asyncio.ensure_future(arena.make_items(
                    store, services.llms, sid, int(n), turns=int(turns), method_a=a, method_b=b,
                    source=source, on_progress=told))
                try:
                    while not job.done():
                        yield f"Generating items… {esc(said['text'])}", gr.update(), gr.update()
                        await asyncio.wait({job}, timeout=1.0)
                finally:
                    if not job.done():  # the page went away or Stop: no half-made item stays
                        job.cancel()
                item_ids, problems = job.result()
            words = "".join(f"\n- {esc(p)}" for p in problems)
            if not item_ids:
                yield "No item could be made, so no campaign was created:" + words, gr.update(), gr.update()
                return
            params = {"story_id": sid, "methods": [a, b], "turns": int(turns),
                      "starts": source if items_mode == "new" else "existing",
                      "judge": bool(with_judge)}
            cid = campaigns.create(store, name, item_ids, list(people or []), k=int(k),
                                   randomize=bool(randomize), params=params,
                                   created_by=user.name)
            text = (f"Campaign **{esc(name.strip())}** (id {cid}) created with {len(item_ids)} "
                    f"items, each for {int(k)} annotator(s).")
            if with_judge:
                yield text + " The judge model is voting…", campaign_rows(services), cid
                cast = await campaigns.judge(store, cid, services.llms["judge"])
                text += f" The judge model cast {cast} votes."
            if problems:
                text += " Not every start gave an item:" + words
            yield text, campaign_rows(services), cid  # the id box: this campaign
        except BookmarksError as exc:
            yield esc(str(exc)), gr.update(), gr.update()

    def campaign_progress(cid_value):
        try:
            cid = _cid(cid_value)
            rows = campaigns.progress(store, cid)
            return (pd.DataFrame([[r[k] for k in ("annotator", "assigned", "voted", "skipped",
                                                  "left", "median_seconds")] for r in rows],
                                 columns=PROGRESS_HEADERS),
                    agreement_md(campaigns.agreement(store, cid)))
        except BookmarksError as exc:
            return gr.update(), esc(str(exc))

    def set_status(new: str):
        def run(cid_value):
            try:
                store.set_campaign_status(_cid(cid_value), new)
            except BookmarksError as exc:
                return esc(str(exc)), gr.update()
            return f"Campaign {int(cid_value)} is {new}.", campaign_rows(services)
        run.__name__ = f"campaign_{new}"
        return run

    def assign_campaign(cid_value, people):
        try:
            added = campaigns.assign(store, _cid(cid_value), list(people or []))
        except BookmarksError as exc:
            return esc(str(exc)), gr.update()
        said = ", ".join(f"{esc(w)} {n}" for w, n in added.items()) or "nobody (each item has k)"
        return f"New items assigned: {said}.", campaign_rows(services)

    async def judge_campaign(cid_value):
        try:
            n = await campaigns.judge(store, _cid(cid_value), services.llms["judge"])
        except BookmarksError as exc:
            return esc(str(exc))
        return f"The judge model cast {n} votes on campaign {int(cid_value)}."

    def export_campaign(cid_value, fmt_):
        try:
            cid = _cid(cid_value)
            rows = campaigns.export_rows(store, cid)
        except BookmarksError as exc:
            raise gr.Error(str(exc), print_exception=False) from None
        exports.mkdir(parents=True, exist_ok=True)
        path = exports / f"campaign-{cid}.{fmt_}"
        path.write_text(to_csv(rows) if fmt_ == "csv" else to_jsonl(rows), "utf-8")
        return str(path)

    tab.select(refresh, None, [signin, users, c_people, c_story, table])
    add_btn.click(add_account, [u_name, u_role], [user_status, users, c_people])
    remove_btn.click(remove_account, [u_name], [user_status, users, c_people])
    create_btn.click(create_campaign, [c_name, c_story, c_items, c_source, c_n, c_turns, c_a, c_b, c_k,
                              c_people, c_random, c_judge], [status, table, c_id],
                     concurrency_id="models")
    show_btn.click(campaign_progress, [c_id], [per_person, agreement])
    close_btn.click(set_status("closed"), [c_id], [status, table])
    reopen_btn.click(set_status("open"), [c_id], [status, table])
    assign_btn.click(assign_campaign, [c_id, c_people], [status, table])
    judge_btn.click(judge_campaign, [c_id], [status], concurrency_id="models")
    export_btn.click(export_campaign, [c_id, fmt], [export_file])
    return {"refresh": refresh}
