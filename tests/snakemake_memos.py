"""Each plan or run through the Snakemake API parses the Snakefile and every included .smk file
into Python again, compiles it and reads the config file again (together a fifth of a tiny
plan's CPU time), and a test process plans the workflow hundreds of times. All of it depends on
the files' bytes and nothing that changes between plans of one process: the parse of a local
file on its path, its bytes, the rule count before it and the shell override (which give the
same code, rule count and line map); the code object on the code and its file name; a config
file on its bytes alone (the same in every copy of a workflow). These memos hand back what the
same inputs gave before (a copy of the config, which Snakemake updates in place). A file whose
bytes changed (a test that edits a rule or a setting) is read anew.

Planning also asks inspect.signature for the parameters of every input, params and resource
function each time it applies one to a job (hundreds of thousands of times in a test run); a
function's parameters never change, so they are kept for as long as the function lives.

The training-overlap check keeps the sentence texts of the last 64 sources it read
(spudflow.core.overlap, TEXTS_KEPT): the default config names 79 (each BLiMP paradigm is one),
so a process that plans it again and again, the oldest evicted first, read every treebank anew
at each plan. Here it keeps 1,024.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import weakref
from pathlib import Path


@functools.cache
def memoize_workflow_reading() -> None:
    """Put the memos in front of the parser and the config loader that Snakemake's `include`
    and `configfile` call (once per process)."""
    import snakemake.api  # first: importing the parser alone is a circular import
    import snakemake.common.configfile
    import snakemake.parser
    import snakemake.rules
    import snakemake.workflow
    from snakemake.sourcecache import LocalSourceFile

    parse = snakemake.workflow.parse
    parsed: dict[tuple, tuple[str, int, dict[int, int]]] = {}

    def memoized_parse(path, workflow, linemap, overwrite_shellcmd=None, rulecount=0):
        if not isinstance(path, LocalSourceFile):
            return parse(path, workflow, linemap, overwrite_shellcmd, rulecount)
        name = path.get_path_or_uri(secret_free=False)
        key = (name, Path(name).read_bytes(), overwrite_shellcmd, rulecount)
        if key not in parsed:
            lines: dict[int, int] = {}
            code, count = parse(path, workflow, lines, overwrite_shellcmd, rulecount)
            parsed[key] = (code, count, lines)
        code, count, lines = parsed[key]
        snakemake.parser.Shell.overwrite_cmd = overwrite_shellcmd  # as parse() sets it
        linemap.update(lines)
        return code, count

    load_configfile = snakemake.common.configfile.load_configfile
    loaded: dict[bytes, dict] = {}

    def memoized_load_configfile(configpath):
        try:  # what it parses is the bytes alone: a copy of the same file is the same config
            key = Path(configpath).read_bytes()
        except OSError:
            return load_configfile(configpath)  # its own error
        if key not in loaded:
            loaded[key] = load_configfile(configpath)
        return copy.deepcopy(loaded[key])

    compiled: dict[tuple[str, str, str], object] = {}

    def memoized_compile(source, filename, mode, *args, **kwargs):
        if args or kwargs or not isinstance(source, str):
            return compile(source, filename, mode, *args, **kwargs)
        key = (source, filename, mode)
        if key not in compiled:
            compiled[key] = compile(source, filename, mode)
        return compiled[key]

    snakemake.workflow.parse = memoized_parse
    snakemake.workflow.compile = memoized_compile  # the module's name shadows the builtin
    snakemake.common.configfile.load_configfile = memoized_load_configfile

    function_params = snakemake.rules.get_function_params
    params_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def memoized_function_params(func):
        try:
            return params_of[func]
        except (KeyError, TypeError):  # TypeError: no weak reference to it
            pass
        params = function_params(func)
        with contextlib.suppress(TypeError):
            params_of[func] = params
        return params

    # rules.py imported it by name; common's own input-function helper looks it up there.
    snakemake.rules.get_function_params = memoized_function_params
    snakemake.common.get_function_params = memoized_function_params

    from spudflow.core import overlap

    overlap.TEXTS_KEPT = max(overlap.TEXTS_KEPT, 1024)
