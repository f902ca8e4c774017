"""Who may do what in the web app, enforced on the server.

Roles: *owner* (everything), *writer* (Library, Play, their own scenes), *annotator*
(Annotate only). Sign-in is Gradio's (`launch(auth=callable)`), so every handler's request
carries the signed-in name. After the Blocks are built, `protect` wraps every registered
event function with the check for the tab that registered it (`TAB_ROLES`; a function
registered anywhere else is the owner's), so a handler added later cannot be forgotten and
calling an endpoint directly (HTTP, `gradio_client`, a fn_index) is refused like a click.
A function may ask for fewer roles than its tab with `@requires(...)`.

Without any account the app is as before: one local user, the owner (served on 127.0.0.1).
"""

from __future__ import annotations

import hmac
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import gradio as gr
from gradio.helpers import special_args
from gradio.utils import get_type_hints

from bookmarks.store import Store

TAB_ROLES = {"Library": ("owner", "writer"), "Play": ("owner", "writer"),
             "Annotate": ("owner", "annotator"), "Campaigns": ("owner",),
             "Evaluate": ("owner",), "Settings": ("owner",)}
EVERYONE = ("owner", "writer", "annotator")
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
ASKING = "_bookmarks_request"  # the request parameter the role check adds in front
# Gradio 6 does not hide a tab's button when the tab is updated to invisible: a style rule
# hides the buttons of the tabs a role may not use (their handlers refuse it regardless)
HIDE_TABS = """(hidden) => {
  let style = document.getElementById('bookmarks-role-tabs');
  if (!style) {
    style = document.createElement('style');
    style.id = 'bookmarks-role-tabs';
    document.head.appendChild(style);
  }
  const ids = JSON.parse(hidden || '[]');
  style.textContent = ids.length ? ids.map(id => `#${id}-button`).join(', ') +
    ' { display: none !important; }' : '';
  return [];
}"""


@dataclass(frozen=True)
class User:
    name: str
    role: str


LOCAL = User("local", "owner")  # no accounts: the single local user


def requires(*roles: str) -> Callable:
    """Mark a handler as allowed only for these roles (within what its tab allows)."""
    def mark(fn: Callable) -> Callable:
        fn.__bookmarks_roles__ = tuple(roles)  # type: ignore[attr-defined]
        return fn
    return mark


class Access:
    """Accounts for one app: the sign-in check and who a request is."""

    def __init__(self, store: Store, env: dict[str, str] | None = None):
        env = os.environ if env is None else env
        self.store = store
        name, password = env.get("BOOKMARKS_USERNAME"), env.get("BOOKMARKS_PASSWORD")
        self.env_owner = (name, password) if name and password else None
        self.enabled = self.env_owner is not None or store.has_users()

    def authenticate(self, username: str, password: str) -> bool:
        """Gradio's sign-in callable."""
        if self.env_owner and hmac.compare_digest(username.encode(), self.env_owner[0].encode()):
            return hmac.compare_digest(password.encode(), self.env_owner[1].encode())
        return self.store.check_password(username, password) is not None

    def gradio_auth(self) -> Callable[[str, str], bool] | None:
        return self.authenticate if self.enabled else None

    def who(self, request: gr.Request | None) -> User | None:
        """The signed-in user (LOCAL without accounts); None: no such user (any more)."""
        if not self.enabled:
            return LOCAL
        name = getattr(request, "username", None) if request is not None else None
        if not name:
            return None
        if self.env_owner and name == self.env_owner[0]:
            return User(name, "owner")
        row = self.store.user(name)
        return User(row["name"], row["role"]) if row else None

    def user(self, request: gr.Request | None, roles: tuple[str, ...] = EVERYONE) -> User:
        """Who is asking, if their role may do this; otherwise a refusal in words."""
        user = self.who(request)
        if user is None:
            raise gr.Error("Sign in first (or your account was removed).", print_exception=False)
        if user.role not in roles:
            raise gr.Error(f"Not allowed for your role ({user.role}).", print_exception=False)
        return user

    def may_see_scene(self, user: User, scene_id: int) -> bool:
        return user.role == "owner" or self.store.scene_owner(scene_id) == user.name


# -- wrapping every registered function ------------------------------------------------
@dataclass
class ScenePolicy:
    """Play's scene references: a writer may only use their own scenes, the scenes they
    make become theirs, and the scene lists they are sent hold only theirs."""
    state: Any  # the gr.State holding the open scene's id
    picker: Any  # the dropdown of past scenes (labels "ID: …")


def _scene_id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.split(":", 1)[0].strip().isdigit():
        return int(value.split(":", 1)[0])
    return None


def _input_positions(fn: Callable, n_inputs: int) -> list[int]:
    """Where each input lands among fn's arguments once Gradio has added the arguments it
    fills in itself (request, progress), by Gradio's own rule."""
    markers = [object() for _ in range(n_inputs)]
    filled, *_ = special_args(fn, list(markers))
    where = {id(v): i for i, v in enumerate(filled)}
    return [where.get(id(m), -1) for m in markers]


def _filter_choices(update: Any, keep: Callable[[int], bool]) -> Any:
    if isinstance(update, dict) and isinstance(update.get("choices"), list):
        choices = [c for c in update["choices"]
                   if (sid := _scene_id(c[1] if isinstance(c, list | tuple) else c)) is None
                   or keep(sid)]
        return {**update, "choices": choices}
    return update


class _Check:
    def __init__(self, access: Access, roles: tuple[str, ...], block_fn: Any,
                 scenes: ScenePolicy | None):
        self.access, self.roles = access, roles
        self.scene_args: list[int] = []
        self.outputs = list(block_fn.outputs)
        self.scenes = scenes
        if scenes is not None:
            at = _input_positions(block_fn.fn, len(block_fn.inputs))
            self.scene_args = [at[i] for i, comp in enumerate(block_fn.inputs)
                               if (comp is scenes.state or comp is scenes.picker) and at[i] >= 0]

    def before(self, request: gr.Request | None, args: tuple) -> User:
        user = self.access.user(request, self.roles)
        if user.role == "writer":
            for pos in self.scene_args:
                sid = _scene_id(args[pos]) if pos < len(args) else None
                if sid is not None and not self.access.may_see_scene(user, sid):
                    raise gr.Error("That scene is another writer's.", print_exception=False)
        return user

    def after(self, user: User, result: Any) -> Any:
        if user.role != "writer" or self.scenes is None:
            return result
        store, mine = self.access.store, user.name
        pairs: list[tuple[Any, Any]]
        if isinstance(result, dict) and all(hasattr(k, "_id") for k in result):
            pairs = list(result.items())
        elif len(self.outputs) == 1:
            pairs = [(self.outputs[0], result)]
        elif isinstance(result, list | tuple) and len(result) == len(self.outputs):
            pairs = list(zip(self.outputs, result, strict=True))
        else:
            return result
        for comp, value in pairs:  # first the scene opened: a new one becomes theirs
            if comp is self.scenes.state and (sid := _scene_id(value)) is not None:
                if not store.claim_scene(sid, mine):
                    raise gr.Error("That scene is another writer's.", print_exception=False)
        fixed = [(comp, _filter_choices(value, lambda sid: store.scene_owner(sid) == mine)
                  if comp is self.scenes.picker else value) for comp, value in pairs]
        if isinstance(result, dict):
            return dict(fixed)
        values = [v for _, v in fixed]
        return values[0] if len(self.outputs) == 1 else type(result)(values)


def guarded(fn: Callable, check: _Check) -> Callable:
    """`fn` behind `check`, of the same kind (sync, async, generator, async generator), with
    a request parameter first so that Gradio hands over the request; the parameters Gradio
    fills in for `fn` itself (request, progress) are filled in as before."""
    if inspect.isasyncgenfunction(fn):
        async def wrapper(request, *args, **kwargs):
            user = check.before(request, args)
            async for item in fn(*args, **kwargs):
                yield check.after(user, item)
    elif inspect.isgeneratorfunction(fn):
        def wrapper(request, *args, **kwargs):
            user = check.before(request, args)
            for item in fn(*args, **kwargs):
                yield check.after(user, item)
    elif inspect.iscoroutinefunction(fn):
        async def wrapper(request, *args, **kwargs):
            user = check.before(request, args)
            return check.after(user, await fn(*args, **kwargs))
    else:
        def wrapper(request, *args, **kwargs):
            user = check.before(request, args)
            return check.after(user, fn(*args, **kwargs))
    first = inspect.Parameter(ASKING, inspect.Parameter.POSITIONAL_ONLY, annotation=gr.Request)
    own = inspect.signature(fn)
    wrapper.__signature__ = own.replace(parameters=[first, *own.parameters.values()])
    wrapper.__annotations__ = {**get_type_hints(fn), ASKING: gr.Request}
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(wrapper, attr, getattr(fn, attr, getattr(wrapper, attr)))
    wrapper.__bookmarks_guarded__ = True
    return wrapper


def _tabs_of(demo: gr.Blocks, fn_id: int, seen: set[int] | None = None) -> set[str | None]:
    """The labels of the tabs holding the function's triggers (None: outside every tab);
    a `.then()` step belongs where the step before it does."""
    seen = seen or set()
    block_fn = demo.fns[fn_id]
    found: set[str | None] = set()
    for block_id, _ in block_fn.targets:
        block = demo.blocks.get(block_id) if block_id is not None else None
        while block is not None and not isinstance(block, gr.Tab):
            block = block.parent
        if block is not None:
            found.add(str(block.label))
        elif block_id is not None or block_fn.trigger_after is None:
            found.add(None)
    if block_fn.trigger_after is not None and block_fn.trigger_after not in seen:
        found |= _tabs_of(demo, block_fn.trigger_after, seen | {fn_id})
    return found or {None}


def protect(demo: gr.Blocks, access: Access, scenes: ScenePolicy | None = None) -> int:
    """Wrap every event function of `demo` with the role check of the tab holding its
    trigger (all of them, if several) → how many were wrapped. Outside every tab, the
    page's own frame (functions of ui/server.py: page load, the first-visit note) is for
    every signed-in user; anything else there is the owner's."""
    count = 0
    for fn_id, block_fn in demo.fns.items():
        fn = block_fn.fn
        if fn is None or getattr(fn, "__bookmarks_guarded__", False):
            continue
        tabs = _tabs_of(demo, fn_id)
        roles: tuple[str, ...] = EVERYONE
        for tab in tabs:
            allowed = TAB_ROLES.get(tab, ("owner",)) if tab is not None else \
                EVERYONE if getattr(fn, "__module__", "") == "ui.server" else ("owner",)
            roles = tuple(r for r in roles if r in allowed)
        if marked := getattr(fn, "__bookmarks_roles__", None):
            roles = tuple(r for r in roles if r in marked)
        check = _Check(access, roles, block_fn, scenes if tabs == {"Play"} else None)
        block_fn.fn = guarded(fn, check)
        count += 1
    return count


# -- downloads -------------------------------------------------------------------------
class ExportsGuard:
    """ASGI middleware: files under the exports folder (votes, runs, scenes) are served to
    owners; writers get story exports and their own scene exports (`scene-ID.*`);
    annotators nothing."""

    def __init__(self, app: Any, access: Access, folder: Path):
        self.app, self.access, self.folder = app, access, folder.resolve()

    def _asked(self, path: str) -> Path | None:
        for marker in ("/file=", "/file/"):
            if marker in path:
                try:
                    return Path(unquote(path.split(marker, 1)[1])).resolve()
                except (OSError, ValueError):
                    return None
        return None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http" and self.access.enabled and \
                (asked := self._asked(scope.get("path", ""))) is not None and \
                (asked == self.folder or self.folder in asked.parents) and \
                not self._allowed(scope, asked):
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body", "body": b"Not allowed for your role."})
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: dict, asked: Path) -> bool:
        app = scope.get("app")
        cookies = {}
        for key, value in scope.get("headers", []):
            if key == b"cookie":
                for part in value.decode("latin-1").split(";"):
                    k, _, v = part.strip().partition("=")
                    cookies[k] = v
        cookie_id = getattr(app, "cookie_id", "")
        token = cookies.get(f"access-token-{cookie_id}") or \
            cookies.get(f"access-token-unsecure-{cookie_id}")
        name = getattr(app, "tokens", {}).get(token) if token else None
        user = self.access.who(_Named(name)) if name else None
        if user is None or user.role == "annotator":
            return False
        if user.role == "owner":
            return True
        if asked.relative_to(self.folder).parts[:1] and \
                asked.relative_to(self.folder).parts[0].startswith("story-"):
            return True  # the Library's story exports: stories are every writer's
        sid = _scene_id(asked.name.removeprefix("scene-").split(".", 1)[0] + ":")
        return asked.name.startswith("scene-") and sid is not None and \
            self.access.store.scene_owner(sid) == user.name


@dataclass
class _Named:
    username: str
