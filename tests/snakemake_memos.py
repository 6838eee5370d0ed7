"""Each plan or run through the Snakemake API parses the Snakefile and every included .smk file
into Python again and reads the config file again (together a fifth of a tiny plan's CPU
time), and a test process plans the workflow hundreds of times. Both depend on the files'
bytes and nothing that changes between plans of one process: the parse of a local file on its
path, its bytes, the rule count before it and the shell override (which give the same code,
rule count and line map); a config file on its path and bytes. These memos hand back what the
same inputs gave before (a copy of the config, which Snakemake updates in place). A file whose
bytes changed (a test that edits a rule or a setting) is read anew.

Planning also asks inspect.signature for the parameters of every input, params and resource
function each time it applies one to a job (hundreds of thousands of times in a test run); a
function's parameters never change, so they are kept for as long as the function lives.
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
    loaded: dict[tuple[str, bytes], dict] = {}

    def memoized_load_configfile(configpath):
        try:
            key = (str(configpath), Path(configpath).read_bytes())
        except OSError:
            return load_configfile(configpath)  # its own error
        if key not in loaded:
            loaded[key] = load_configfile(configpath)
        return copy.deepcopy(loaded[key])

    snakemake.workflow.parse = memoized_parse
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
