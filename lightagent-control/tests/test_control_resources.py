"""Resource scopes cannot be escaped: names that a consumer would normalise to somewhere
else (``..``, percent-encoded dots, backslashes, NUL, fullwidth dots, ``//``) are refused
before any prefix is compared, and a narrowed context never matches a path outside its
prefix, however the path is later read."""

from __future__ import annotations

import asyncio
import posixpath
import unicodedata
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lightagent import BaseCapabilityProvider, CapabilityRegistry, CapabilitySpec
from lightagent.errors import ConfigurationError, PolicyError
from lightagent_control.security import CapabilityGate, SecurityContext

DOCS = "repo/web/docs"

ESCAPES = [
    "repo/web/docs/../../../etc/passwd",
    "repo/web/docs/..",
    "repo/web/docs/./../secret",
    "repo/web/docs/%2e%2e/%2e%2e/etc/passwd",
    "repo/web/docs/%2E%2e/x",
    "repo/web/docs/%252e%252e/x",  # encoded twice
    "repo/web/docs%2f..%2f..%2fsecret",
    "repo/web/docs/..%2f..%2fsecret",
    "repo/web/docs\\..\\..\\secret",
    "repo/web/docs/a\\b",
    "repo/web/docs/%5c..%5csecret",
    "repo/web/docs/a\x00.png",
    "repo/web/docs/a%00.png",
    "repo/web/docs/a\n",
    "repo/web/docs/\uff0e\uff0e/secret",  # fullwidth dots
    "repo/web/docs/a\uff0f..\uff0f..\uff0fsecret",  # fullwidth solidus
    "repo/web/docs/%c0%ae%c0%ae/secret",  # overlong UTF-8 dots
    "repo/web/docs/.. /secret",
    "repo/web/docs/.../secret",
    "repo/web/docs//etc/passwd",
    "repo/web/docs/.",
]


def docs_context() -> SecurityContext:
    return SecurityContext(tenant_id="t").narrow(resources=[f"{DOCS}/*"])


@pytest.mark.parametrize("resource", ESCAPES)
def test_escaping_names_are_refused_even_where_every_resource_is_allowed(resource):
    narrowed = docs_context()
    assert not narrowed.allows_resource(resource)
    assert "is refused" in narrowed.resource_denial(resource)
    assert not SecurityContext().allows_resource(resource)


@pytest.mark.parametrize("resource", ESCAPES[:6])
def test_the_gate_and_the_registry_refuse_them_typed(resource):
    spec = CapabilitySpec("fs.read", read=True)
    gate = CapabilityGate()
    with pytest.raises(PolicyError) as info:
        gate.authorize_sync(spec, "fs", {}, docs_context(), resource=resource)
    assert info.value.code == "LA-POLICY" and info.value.details["check"] == "resource"
    assert "refused" in info.value.message

    ran = []
    registry = CapabilityRegistry()
    registry.register(BaseCapabilityProvider([spec], handlers={"fs.read": lambda: ran.append(1)}))
    with pytest.raises(PolicyError):
        asyncio.run(registry.invoke("fs.read", context=docs_context(), resource=resource))
    assert ran == []


@pytest.mark.parametrize(
    "resource",
    [
        "repo/web/docs/a.md",
        "repo/web/docs/guide/",
        "repo/web/docs/a..b.md",
        "repo/web/docs/.hidden",
        "repo/web/docs/a%20b.md",
        "repo/web/docs/caf\u00e9.md",
    ],
)
def test_ordinary_names_inside_the_prefix_are_allowed(resource):
    assert docs_context().allows_resource(resource)


def test_urls_and_absolute_paths():
    api = SecurityContext(resources=["https://api.example.com/v1/*"])
    assert api.allows_resource("https://api.example.com/v1/users")
    assert not api.allows_resource("https://api.example.com/v1/../admin")
    assert not api.allows_resource("https://api.example.com/v1//admin")
    srv = SecurityContext(resources=["/srv/app/*"])
    assert srv.allows_resource("/srv/app/data.db")
    assert not srv.allows_resource("srv/app/data.db")
    # a relative pattern never matches an absolute name (a drive letter included)
    drive = SecurityContext(resources=["C*"])
    assert drive.allows_resource("Cache/x")
    assert not drive.allows_resource("C:/Windows/system.ini")


@pytest.mark.parametrize("pattern", ["repo/../*", "repo/./x", "a\\b*", "docs//*", "a\x00*"])
def test_escaping_patterns_are_a_typed_error(pattern):
    with pytest.raises(ConfigurationError) as info:
        SecurityContext(resources=[pattern])
    assert info.value.code == "LA-CONFIG" and repr(pattern) in info.value.message
    with pytest.raises(ConfigurationError):
        SecurityContext().narrow(resources=[pattern])


# -- the property ------------------------------------------------------------------------

PREFIXES = ["repo/web/docs", "data", "/srv/app", "https://api.example.com/v1"]
SEGMENTS = [
    "a",
    "b.txt",
    "..",
    ".",
    "",
    "...",
    ".. ",
    " ..",
    "%2e%2e",
    "%2E%2E",
    "%252e%252e",
    ".%2e",
    "..%2f..",
    "%2f..%2f",
    "..\\..",
    "\\",
    "\x00",
    "%00",
    "\uff0e\uff0e",
    "\uff0f..",
    "%c0%ae%c0%ae",
    "~",
    "%",
    "x%2fy",
]
paths = st.tuples(
    st.sampled_from(PREFIXES),
    st.lists(st.one_of(st.sampled_from(SEGMENTS), st.text(max_size=4)), max_size=5),
    st.sampled_from(["/", "", "\\", "%2f"]),
)


def _readings(path: str) -> list[str]:
    """The ways a consumer may read ``path``: decoded, NFKC, backslashes as separators."""
    out = [path]
    text = path
    for _ in range(6):
        text = unquote(text)
        out.append(text)
    out += [unicodedata.normalize("NFKC", t) for t in list(out)]
    out += [t.replace("\\", "/") for t in list(out)]
    return out


def _inside(reading: str, prefix: str) -> bool:
    base = posixpath.normpath(prefix)
    # strip spaces and dots at segment ends the way some platforms do
    trimmed = "/".join(s.rstrip(" .") or s for s in reading.split("/"))
    for candidate in (reading, trimmed):
        norm = posixpath.normpath(candidate.replace("\x00", ""))
        if not (norm == base or norm.startswith(base + "/")):
            return False
    return True


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    paths,
    st.lists(st.sampled_from(["", "/sub", "/sub/deeper"]), min_size=1, max_size=3),
)
def test_a_narrowed_context_never_matches_a_path_outside_its_prefix(parts, chain):
    prefix, segments, separator = parts
    path = prefix + separator + "/".join(segments)
    context = SecurityContext(tenant_id="t")
    scope = prefix
    for extra in chain:  # narrow step by step; each child may only ask for a sub-prefix
        scope = scope + extra if extra and not scope.endswith(extra) else scope
        context = context.narrow(resources=[f"{scope}/*"])
    if context.allows_resource(path):
        for reading in _readings(path):
            assert _inside(reading, scope), (path, reading, scope)
