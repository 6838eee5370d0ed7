"""An argparse Namespace stays in the command-line modules (*/cli.py). Each builds what its command
does once from the parsed options, checked there (scoring's `ScoreJob`, probe's `FeatureJob` and
`ProbeJob`, or plain values), and passes that down: a function below reads named, typed fields,
not whatever options some command happened to define. Read from the sources with ast.

Outside a cli.py, a function may not take a parameter annotated `Namespace`, nor read options
(`args.x`, `getattr(args, ...)`, `vars(args)`) from a parameter `args`; a module that is its own
entry point (`python -m spudflow.core.artifact_docs`) may parse its options, but hands the
Namespace to no one. Inside a cli.py, `args` goes only to functions of that module (and to the
functions a stage's cli registered on it: `args.handler`, `args.planned_outputs`)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "workflow" / "spudflow"
# builtins that look at a Namespace without taking it anywhere
INSPECT = {"getattr", "hasattr", "isinstance", "vars"}
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _parameters(function) -> list[ast.arg]:
    a = function.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def _reads_options(node, name: str) -> bool:
    """Whether NODE reads an option of the variable NAME: NAME.x, getattr(NAME, …), vars(NAME)."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) \
                and inner.value.id == name:
            return True
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) \
                and inner.func.id in INSPECT - {"isinstance"} and inner.args \
                and isinstance(inner.args[0], ast.Name) and inner.args[0].id == name:
            return True
    return False


def _handed_on(node, name: str) -> list[tuple[int, str]]:
    """(line, callee) of each call in NODE that takes the variable NAME itself as an argument."""
    found = []
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            values = [*call.args, *(k.value for k in call.keywords)]
            if any(isinstance(v, ast.Name) and v.id == name for v in values):
                found.append((call.lineno, ast.unparse(call.func)))
    return found


def _parses_options(function, name: str) -> bool:
    """Whether FUNCTION binds NAME to a parser's result: NAME = ….parse_args(…)."""
    return any(isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
               and isinstance(node.value.func, ast.Attribute)
               and node.value.func.attr in ("parse_args", "parse_known_args")
               and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
               for node in ast.walk(function))


def below_cli(source: str) -> list[tuple[int, str]]:
    """(line, what is wrong) for each Namespace in SOURCE, a module that is not a cli.py."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, FUNCTIONS):
            continue
        name = getattr(function, "name", "lambda")
        for parameter in _parameters(function):
            if parameter.annotation is not None and \
                    ast.unparse(parameter.annotation).split(".")[-1] == "Namespace":
                found.append((function.lineno, f"{name} takes a Namespace ({parameter.arg})"))
            elif parameter.arg == "args" and _reads_options(function, "args"):
                found.append((function.lineno, f"{name} reads options of its parameter args"))
        if _parses_options(function, "args"):
            found += [(line, f"{name} hands its Namespace to {callee}")
                      for line, callee in _handed_on(function, "args")
                      if callee not in INSPECT]
    return sorted(set(found))


def in_cli(source: str) -> list[tuple[int, str]]:
    """(line, what is wrong) for each call in SOURCE, a cli.py, that hands `args` to a function
    the module does not define, nor a cli module registered on `args`."""
    tree = ast.parse(source)
    own = {node.name for node in tree.body if isinstance(node, FUNCTIONS)}
    return sorted((line, f"hands args to {callee}")
                  for line, callee in _handed_on(tree, "args")
                  if callee not in own | INSPECT and not callee.startswith("args."))


def namespaces(root: Path = PACKAGE) -> list[str]:
    """`path:line: what` for each Namespace below a cli module of the package at ROOT."""
    found = []
    for path in sorted(root.rglob("*.py")):
        check = in_cli if path.name == "cli.py" else below_cli
        found += [f"{path.relative_to(root)}:{line}: {what}"
                  for line, what in check(path.read_text(encoding="utf-8"))]
    return found


def test_no_namespace_below_a_cli_module():
    assert namespaces() == []


def test_the_check_finds_each_way_a_namespace_goes_down():
    taken = ("import argparse\nfrom argparse import Namespace\n"
             "def a(args: argparse.Namespace): pass\n"
             "def b(n: Namespace): pass\n"
             "def c(args):\n    return args.out\n"
             "def d(args):\n    return getattr(args, 'out')\n"
             "def e(args):\n    def inner():\n        return vars(args)\n    return inner\n")
    assert [line for line, _ in below_cli(taken)] == [3, 4, 5, 7, 9]
    parsed = ("def main(argv):\n    args = parser.parse_args(argv)\n"
              "    work(args.out)\n    return helper(args)\n")
    assert below_cli(parsed) == [(4, "main hands its Namespace to helper")]
    # not a Namespace: a list named args, a hook's tuple of positional arguments
    fine = ("def f(spec):\n    args = []\n    args.append(spec)\n    return args\n"
            "def hook(module, args, output):\n    return output[0], len(args)\n"
            "def g(*args):\n    return args\n")
    assert below_cli(fine) == []
    cli = ("from x import work\n"
           "def run(args):\n    return work(job(args))\n"
           "def job(args):\n    return args.out\n"
           "def bad(args):\n    return work(args)\n"
           "def main(args):\n    return args.handler(args)\n")
    assert in_cli(cli) == [(7, "hands args to work")]
