"""Accounts: a name, a role and a salted, slow password hash; which writer owns a scene.

Passwords are hashed with scrypt from Python's standard library (`hashlib.scrypt`, a
well-kept, memory-hard key derivation function; RFC 7914): a random 16-byte salt per user,
N = 2**14, r = 8, p = 1 (16 MiB and tens of milliseconds per check). Only the hash is
stored; a check compares in constant time, and an unknown name costs as much as a wrong
password so sign-in does not tell which names exist.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

from bookmarks.errors import BookmarksError, NotFoundError
from bookmarks.store.base import StoreBase, now

ROLES = ("owner", "writer", "annotator")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
_N, _R, _P = 2 ** 14, 8, 1


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def hash_password(password: str, *, n: int = _N, r: int = _R, p: int = _P) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=32)
    return f"scrypt${n}${r}${p}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        want = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n),
                             r=int(r), p=int(p), dklen=len(want))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


_DECOY = hash_password(secrets.token_urlsafe(16))  # checked when the name is unknown


def new_password() -> str:
    """A generated password to hand to a new user (about 96 bits)."""
    return secrets.token_urlsafe(12)


class UsersStore(StoreBase):
    def add_user(self, name: str, role: str, password: str) -> None:
        name = name.strip()
        if not NAME.match(name) or name.startswith("llm:"):
            raise BookmarksError("A user name is 1-64 letters, digits or . _ @ - (starting with a "
                                 "letter or digit).")
        if role not in ROLES:
            raise BookmarksError(f"A role is one of {', '.join(ROLES)}, not {role!r}.")
        if len(password) < 8:
            raise BookmarksError("A password has at least 8 characters.")
        with self.transaction() as db:
            if self.user(name) is not None:
                raise BookmarksError(f"There is already a user named {name!r}.")
            db["users"].insert({"name": name, "role": role, "password_hash": hash_password(password),
                                "created_at": now(), "last_seen_at": None})

    def set_password(self, name: str, password: str) -> None:
        if len(password) < 8:
            raise BookmarksError("A password has at least 8 characters.")
        if self.user(name) is None:
            raise NotFoundError(f"There is no user named {name!r}.")
        with self.transaction() as db:
            db["users"].update(name, {"password_hash": hash_password(password)})

    def user(self, name: str | None) -> dict | None:
        """The user's name, role and dates (never the hash); None if there is none."""
        if not name:
            return None
        return self._one("SELECT name, role, created_at, last_seen_at FROM users WHERE name = ?",
                         [name])

    def users(self, role: str | None = None) -> list[dict]:
        where, params = ("WHERE role = ?", [role]) if role else ("", [])
        return self._rows(f"SELECT name, role, created_at, last_seen_at FROM users {where} "
                          "ORDER BY name", params)

    def has_users(self) -> bool:
        return bool(self._one("SELECT 1 AS x FROM users LIMIT 1"))

    def remove_user(self, name: str) -> None:
        """The account goes (its sessions are refused from the next request); votes it cast
        stay in the record under its name, its open assignments are withdrawn."""
        if self.user(name) is None:
            raise NotFoundError(f"There is no user named {name!r}.")
        with self.transaction() as db:
            db.execute("DELETE FROM campaign_assignments WHERE annotator = ? AND campaign_id IN "
                       "(SELECT id FROM campaigns WHERE status = 'open') AND item_id NOT IN "
                       "(SELECT item_id FROM judgments WHERE annotator = ?)", [name, name])
            db.execute("DELETE FROM users WHERE name = ?", [name])

    def check_password(self, name: str, password: str) -> str | None:
        """The user's role if the password is theirs, else None."""
        row = self._one("SELECT role, password_hash FROM users WHERE name = ?", [name.strip()])
        if row is None:
            verify_password(password, _DECOY)  # the same work as for a known name
            return None
        if not verify_password(password, row["password_hash"]):
            return None
        with self.transaction() as db:
            db["users"].update(name.strip(), {"last_seen_at": now()})
        return row["role"]

    # -- which writer owns a scene ---------------------------------------------------
    def claim_scene(self, scene_id: int, owner: str) -> bool:
        """Record `owner` as the scene's writer unless it has one; True if it is theirs."""
        with self.transaction() as db:
            db["scene_owners"].insert({"scene_id": scene_id, "owner": owner}, ignore=True)
        return self.scene_owner(scene_id) == owner

    def scene_owner(self, scene_id: int) -> str | None:
        row = self._one("SELECT owner FROM scene_owners WHERE scene_id = ?", [scene_id])
        return row["owner"] if row else None

    def owned_scenes(self, owner: str) -> set[int]:
        return {r["scene_id"] for r in self._rows(
            "SELECT scene_id FROM scene_owners WHERE owner = ?", [owner])}
