"""The scan refuses every route to a dunder attribute, and attribute access by a string."""

from __future__ import annotations

import pytest
from lightagent import LightAgent, ScriptedModel
from lightagent.errors import PolicyError
from lightagent_skills.toolgen import scan_source

# Both pass an allow-list of imports: they import only json and operator / string.
ATTRGETTER_ESCAPE = '''
import json
import operator


def probe(name: str) -> str:
    """Reach the interpreter's builtins through a function's globals."""
    builtins = operator.attrgetter("__globals__")(json.loads)["__builtins__"]
    return str(builtins["__import__"](name))
'''

FORMATTER_ESCAPE = '''
import json
import string


def probe(name: str) -> str:
    """Reach the interpreter's builtins through a format field."""
    found = string.Formatter().get_field("0.__globals__", [json.loads], {})[0]
    return str(found["__builtins__"]["__import__"](name))
'''


def body(code: str, imports: str = "import json\nimport operator\nimport string\n") -> str:
    """A one-function module around ``code`` (the body of ``probe``)."""
    lines = "\n".join("    " + line for line in code.strip().splitlines())
    return f'{imports}\n\ndef probe(x: str) -> str:\n    """Probe."""\n{lines}\n'


#: route -> (source, the rule that must be among the findings)
ROUTES: dict[str, tuple[str, str]] = {
    "attrgetter of __globals__": (ATTRGETTER_ESCAPE, "dynamic-attribute"),
    "Formatter.get_field": (FORMATTER_ESCAPE, "dynamic-attribute"),
    "a dunder string constant": (body('return len("__globals__")'), "dunder-string"),
    "a dunder bytes constant": (body('return str(b"__class__")'), "dunder-string"),
    "getattr with a concatenated name": (
        body('return getattr(x, "__" + "class__")'),
        "refused-name",
    ),
    "getattr with a computed name": (
        body('n = "_" * 2 + "class" + "_" * 2\nreturn getattr(x, n)'),
        "refused-name",
    ),
    "hasattr with a computed name": (
        body('return str(hasattr(x, "_" * 2 + "class" + "_" * 2))'),
        "dynamic-attribute",
    ),
    "attrgetter with a dotted name": (
        body('return str(operator.attrgetter("real.imag")(1))'),
        "dynamic-attribute",
    ),
    "attrgetter with a computed name": (
        body('return str(operator.attrgetter("_" * 2 + "class" + "_" * 2)(x))'),
        "dynamic-attribute",
    ),
    "attrgetter imported by name": (
        body("return str(attrgetter('upper')(x))", "from operator import attrgetter\n"),
        "dynamic-attribute",
    ),
    "methodcaller": (body('return operator.methodcaller("upper")(x)'), "dynamic-attribute"),
    "str.format with an attribute field": (
        body('return "{0.__globals__}".format(json.loads)'),
        "dynamic-attribute",
    ),
    "str.format with a computed template": (
        body('t = "{0." + "_" * 2 + "globals" + "_" * 2 + "}"\nreturn t.format(json.loads)'),
        "dynamic-attribute",
    ),
    "str.format reached on the type": (
        body('return str.format("{0.real}", 1)'),
        "dynamic-attribute",
    ),
    "format_map with an attribute field": (
        body('return "{f.real}".format_map({"f": 1})'),
        "dynamic-attribute",
    ),
    "a nested replacement field in a format spec": (
        body('return "{0:{1.real}}".format(1, 2)'),
        "dynamic-attribute",
    ),
    "string.Formatter imported by name": (
        body("return Formatter().format('{0}', x)", "from string import Formatter\n"),
        "dynamic-attribute",
    ),
    "typing.get_type_hints evaluates strings": (
        body("return str(typing.get_type_hints(probe))", "import typing\n"),
        "dynamic-attribute",
    ),
    "a string annotation is code for get_type_hints": (
        "def probe(x: \"open('/etc/passwd').read()\") -> str:\n    '''Probe.'''\n    return x\n",
        "definition-time",
    ),
    "vars()": (body("return str(vars())"), "refused-name"),
    "globals()": (body("return str(globals())"), "refused-name"),
    "locals()": (body("return str(locals())"), "refused-name"),
    "type(...)": (body("return str(type(x).mro())"), "refused-name"),
    "__builtins__ subscripted": (body('return __builtins__["open"](x).read()'), "dunder-name"),
    "a lambda reaching __code__": (body("return str((lambda: 0).__code__)"), "dunder-attribute"),
    "a lambda at the top level": (
        "probe = lambda x: x\n\ndef tool(x: str) -> str:\n    '''T.'''\n    return x\n",
        "import-time",
    ),
    "a decorator on a nested function": (
        body("@operator.itemgetter(0)\ndef inner():\n    return 1\nreturn x"),
        "definition-time",
    ),
    "breakpoint()": (body("breakpoint()\nreturn x"), "refused-name"),
    "open()": (body("return open(x).read()"), "refused-name"),
    "eval()": (body("return str(eval(x))"), "refused-name"),
    "a match class pattern reads __class__": (
        body("match x:\n    case str(__class__=c):\n        return str(c)\nreturn x"),
        "dunder-attribute",
    ),
    "a dunder function name": (
        body("return x") + "\n\ndef __getattr__(name: str) -> str:\n    return name\n",
        "dunder-name",
    ),
    "a dunder keyword argument": (body("return str(dict(__class__=1))"), "dunder-name"),
    "a private module attribute": (body("return str(json._default_decoder)"), "dunder-attribute"),
    # update_wrapper reads and writes attributes named by its arguments: here it merges
    # json's globals into the tool's own, so the global name codecs reaches a module
    "functools.update_wrapper with computed names": (
        "import functools\nimport json\n\n\ndef _w() -> None:\n    pass\n\n\n"
        + body(
            'n = "_" * 2 + "globals" + "_" * 2\n'
            "functools.update_wrapper(_w, json.loads, assigned=(), updated=(n,))\n"
            "return str(codecs)",
            "",
        ),
        "dynamic-attribute",
    ),
    "functools.wraps": (
        body("return str(functools.wraps(len)(len))", "import functools\n"),
        "dynamic-attribute",
    ),
    "a metaclass makes a class": (
        body('return str(numbers.ABCMeta("T", (), {}))', "import numbers\n"),
        "refused-name",
    ),
    "a module attribute replaced": (body("json.dumps = str\nreturn x"), "module-value"),
    "a module attribute deleted": (body("del json.dumps\nreturn x"), "module-value"),
    "import __future__ as a module": (
        body("return str(__future__.annotations)", "import __future__\n"),
        "dunder-name",
    ),
    "license() reads files": (body("license()\nreturn x"), "refused-name"),
    # a NamedTuple field's type is a forward reference; registering an instance of it makes
    # singledispatch call get_type_hints, which evaluates the string with the real builtins
    "functools.singledispatch evaluates a forward reference": (
        body(
            'row = typing.NamedTuple("Row", [("a", "open(" + repr(x) + ").read()")])\n'
            "functools.singledispatch(len).register(row(1))\nreturn x",
            "import functools\nimport typing\n",
        ),
        "dynamic-attribute",
    ),
    "singledispatch imported by name": (
        body("return str(singledispatch(len))", "from functools import singledispatch\n"),
        "dynamic-attribute",
    ),
    "functools.singledispatchmethod": (
        body("return str(functools.singledispatchmethod(len))", "import functools\n"),
        "dynamic-attribute",
    ),
    # a name bound to a module has its attributes checked as the module's: bound to a
    # template instead, its .format() read random's globals (the environment) unchecked
    "a local named like a module holds a format template": (
        body(
            'u = chr(95) * 2\nstring = "{0." + u + "globals" + u + "[_os].environ[HOME]}"\n'
            "return string.format(random.seed)",
            "import random\nimport string\n",
        ),
        "module-value",
    ),
    "a parameter named like a module": (
        "import string\n\n\ndef probe(string: str) -> str:\n"
        '    """Probe."""\n    return string.format(1)\n',
        "module-value",
    ),
    "an import that never runs makes a local look like a module": (
        body(
            'string = "{0.real}" + x\nif not x:\n    import string\nreturn string.format(1)',
            "",
        ),
        "module-value",
    ),
    "one name for two modules": (
        body("return json.dumps(x)", "import json\nimport string as json\n"),
        "module-value",
    ),
    # a class pattern's keywords read the subject's attributes: a generator's frame, its
    # callers' frames and their globals (the runner's sys, so os) were one match away
    "a match pattern reads gi_frame and f_globals": (
        body(
            "g = (i for i in [x])\nmatch g:\n    case object(gi_frame=f):\n"
            "        match f:\n            case object(f_globals=n):\n"
            "                return str(n)\nreturn x"
        ),
        "frame-attribute",
    ),
    "a match pattern takes format from a computed template": (
        body(
            'match "{0." + x + "}":\n    case str(format=fill):\n'
            "        return fill(json.loads)\nreturn x"
        ),
        "dynamic-attribute",
    ),
    # Python 3.14's ForwardRef.evaluate() runs the string as code, like get_type_hints
    "a forward reference evaluated": (
        body('return str(typing.get_args(typing.List["int"])[0].evaluate())', "import typing\n"),
        "frame-attribute",
    ),
    # copy's reconstruction sets each name of a reducer's state: setattr by a computed name
    "copy.dispatch_table sets attributes named at runtime": (
        body(
            'row = collections.namedtuple("Row", "a")\n'
            "copy.dispatch_table[row] = lambda v: (len, (), (None, {chr(95) * 2: x}))\n"
            "return str(copy.copy(row(1)))",
            "import collections\nimport copy\n",
        ),
        "dynamic-attribute",
    ),
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_scan_refuses_every_route_to_a_dunder(route: str) -> None:
    source, rule = ROUTES[route]
    report = scan_source(source)
    assert not report.ok, route
    assert rule in {finding.rule for finding in report.findings}, report.findings


def test_every_finding_names_a_stable_rule() -> None:
    report = scan_source(ATTRGETTER_ESCAPE)
    assert report.unsafe and all(finding.rule for finding in report.findings)
    assert report.findings[0].to_dict()["rule"] == report.findings[0].rule


def test_ordinary_string_formatting_and_lambdas_still_pass() -> None:
    source = '''
import json
from typing import Literal, Optional


def describe(items: list[str], unit: Literal["m", "km"] = "m", digits: Optional[int] = None) -> str:
    """Describe a list of items.

    Args:
        items: The items.
        unit: The unit.
        digits: How many digits.
    """
    ordered = sorted(items, key=lambda item: (len(item), item))
    head = "{0} items in {unit}, first {1!r:>10}".format(len(ordered), ordered[0], unit=unit)
    tail = "%s; %d" % (json.dumps(ordered), digits or 0)
    return f"{head} [{tail}] {hasattr(items, 'count')} {'{0[1]}'.format(ordered)}"
'''
    report = scan_source(source)
    assert report.ok, report.findings


@pytest.mark.parametrize("source", [ATTRGETTER_ESCAPE, FORMATTER_ESCAPE])
def test_an_imports_checking_reviewer_never_sees_the_escapes(
    source: str, tmp_path, sandbox
) -> None:
    agent = LightAgent(model=ScriptedModel([f"```python\n{source}```"]), sandbox=sandbox)
    reviewed = []

    def reviewer(review: object) -> bool:
        reviewed.append(review)
        return set(review.signature["imports"]) <= {"json", "operator", "string"}  # type: ignore[attr-defined]

    with pytest.raises(PolicyError) as err:
        agent.create_tool("a probe", tools_directory=tmp_path, reviewer=reviewer)
    assert err.value.code == "LA-TOOLGEN-UNSAFE"
    assert {f["rule"] for f in err.value.details["findings"]} >= {"dynamic-attribute"}
    assert reviewed == [] and sandbox.runs == [] and agent.tools.get("probe") is None
