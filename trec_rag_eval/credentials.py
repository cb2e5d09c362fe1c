"""Credentials this process sends (an API key, a URL's ``user:password``), kept out of everything it says.

A credential may come back in another form than the one given: a server that echoes the Authorization
header it got shows HTTP Basic auth's ``base64("user:password")``, a URL shows its user information
percent-encoded, an HTTP library may decode it first. ``remember_secret`` and ``remember_url`` note every such
form of what is sent; ``redact`` replaces each in a text, longest first, and also masks the user information
of any URL in the text (``scheme://user:password@host`` -> ``scheme://user:[credentials redacted]@host``),
remembered or not. The library words its errors, warnings and notes through it (``errors``, ``notes``); the
command line's last line of defence is the same function. Every result printed and every file written
(``io.atomic``) goes through ``redact_sent``: the forms remembered, nothing else changed.

A secret shorter than ``MIN_LENGTH`` characters is not looked for alone (every short word of every message
would be cut): its forms within ``user:password``, and the URL's user information, are.
"""

from __future__ import annotations

import base64
import re
import threading
import urllib.parse

KEY_REDACTED = "[API key redacted]"
REDACTED = "[credentials redacted]"
MIN_LENGTH = 4

_forms: dict[str, str] = {}   # a form of a credential -> the placeholder said instead
SENT_FORMS: list[tuple[str, str]] = []
"""Every form remembered and its placeholder, longest first (a form may hold a shorter one): empty while the
process has sent no credential, so a writer may skip ``redact_sent`` without a call."""
_lock = threading.Lock()
# up to the authority's last '@' (a password may hold an '@' or a quote, as URL parsers read it)
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/?#\"<>\\]+)@")


def _encodings(text: str) -> set[str]:
    """``text`` as given, URL-decoded and URL-encoded, and each of those in base64 (standard and URL-safe,
    padded or not)."""
    plain = {text, urllib.parse.unquote(text), urllib.parse.quote(text, safe=""),
             urllib.parse.quote_plus(text, safe="")}
    encoded = set()
    for form in plain:
        data = form.encode("utf-8", "surrogatepass")
        for coded in (base64.b64encode(data), base64.urlsafe_b64encode(data)):
            encoded |= {coded.decode("ascii"), coded.decode("ascii").rstrip("=")}
    return plain | encoded


def _add(forms: set[str], placeholder: str) -> None:
    global SENT_FORMS
    with _lock:
        for form in forms:
            if len(form) >= MIN_LENGTH and form not in _forms:
                _forms[form] = placeholder
        SENT_FORMS = sorted(_forms.items(), key=lambda item: len(item[0]), reverse=True)


def remember_secret(secret: str | None, placeholder: str = KEY_REDACTED) -> None:
    """Note a secret this process sends (an API key): ``redact`` then keeps every form of it out."""
    if secret and len(secret) >= MIN_LENGTH:
        _add(_encodings(secret), placeholder)


def _userinfo(url: str) -> tuple[str, str | None] | None:
    """(user, password or None) as written in ``url``, or None when it has no user information: whatever lies
    between ``scheme://`` and the authority's last ``@`` (as URL parsers split it), any character a password
    may hold (a quote, a backslash, an ``@``), so that what is sent is remembered."""
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.\-]*://", url.strip())
    if not scheme:
        return None
    authority = re.split(r"[/?#]", url.strip()[scheme.end():], maxsplit=1)[0]
    userinfo, at, _ = authority.rpartition("@")
    if not at or not userinfo:
        return None
    user, colon, password = userinfo.partition(":")
    return user, (password if colon else None)


def remember_url(url: str | None) -> None:
    """Note the credentials in ``url``'s user information (``http://user:password@host/...``), in every
    form they may be sent or echoed in (HTTP Basic auth's base64 of ``user:password``, decoded or not)."""
    if not url or "@" not in url:
        return
    info = _userinfo(url)
    if info is None:
        return
    user, password = info
    if password is None:  # a lone token in the user's place is the secret itself (sent as "token:")
        _add(_encodings(user) | _encodings(f"{user}:") | _encodings(f"{urllib.parse.unquote(user)}:"), REDACTED)
        return
    pairs = {f"{user}:{password}", f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"}
    forms = set().union(*(_encodings(pair) for pair in pairs))
    if len(password) >= MIN_LENGTH or len(urllib.parse.unquote(password)) >= MIN_LENGTH:
        forms |= _encodings(password)
    _add(forms, REDACTED)


def without_credentials(url: str) -> str:
    """``url`` with its password (or a lone user token) replaced by a placeholder: what may be shown."""
    return _USERINFO.sub(_masked, url)


def _masked(found: re.Match[str]) -> str:
    user, colon, _ = found.group("userinfo").partition(":")
    return f"{found.group('scheme')}{user + ':' if colon else ''}{REDACTED}@"


def redact(text: str) -> str:
    """``text`` without any form of a credential this process noted (``remember_secret``,
    ``remember_url``), and without the user information of any URL in it."""
    if "@" in text and "://" in text:  # first, so that a URL keeps its user's name
        text = without_credentials(text)
    return redact_sent(text)


def redact_sent(text: str) -> str:
    """``text`` without any form of a credential this process noted (``remember_secret``, ``remember_url``):
    what the package writes or prints as results (a label, a source, a report's inputs) goes through it, so that
    nothing it sent is ever written, while other text (a document id that is a URL) is kept as it is."""
    for form, placeholder in SENT_FORMS:
        if form in text:
            text = text.replace(form, placeholder)
    return text
