"""One R process that runs the reference tests' programs one after another: R with glmnet takes
about 0.9 s to start (its Matrix package), more than most of the programs run.

Each program is sourced into an environment of its own, from the folder R started in, so a
variable or `setwd` of one does not reach the next; what it prints to stdout is its output. An
error in a program is raised here as RError with R's message; R itself goes on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

END = "<<spudflow-r-session-end>>"
# Each program: sourced with its errors caught (its visible values printed, as `Rscript -e`
# prints them), then a line that ends its output.
RUNNER = (
    'local({{ here <- getwd(); status <- tryCatch({{ source("{path}", local = new.env(), '
    'print.eval = TRUE); "ok" }}, error = function(e) gsub("\\n", " ", conditionMessage(e))); '
    'setwd(here); cat("\\n{end}", status, "\\n", sep = ""); flush(stdout()) }})\n'
)


class RError(RuntimeError):
    """A program's error, as R reported it."""


class RUnavailable(RuntimeError):
    """R or one of the packages asked for cannot be started or loaded."""


class RSession:
    def __init__(self, packages: tuple[str, ...], env: dict[str, str] | None = None):
        if shutil.which("R") is None:
            raise RUnavailable("R is not installed (Debian: r-base-core)")
        self._folder = Path(tempfile.mkdtemp(prefix="sf-r-session-"))
        self._errors = (self._folder / "stderr").open("w+", encoding="utf-8")
        self._process = subprocess.Popen(
            ["R", "--vanilla", "--no-echo"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._errors, text=True, cwd=self._folder, env={**os.environ, **(env or {})})
        self._count = 0
        try:
            self.run("".join(f"suppressMessages(library({p}))\n" for p in packages))
        except (RError, BrokenPipeError) as error:
            self.close()
            raise RUnavailable(f"R could not load {', '.join(packages)}: {error}") from None

    def run(self, program: str) -> str:
        """What `program` prints (the output of `Rscript -e PROGRAM`)."""
        self._count += 1
        path = self._folder / f"program{self._count}.R"
        path.write_text(program + "\n", encoding="utf-8")
        self._process.stdin.write(RUNNER.format(path=path, end=END))
        self._process.stdin.flush()
        lines = []
        for line in self._process.stdout:
            if line.startswith(END):
                status = line[len(END):].strip()
                if status != "ok":
                    raise RError(status)
                return "".join(lines).removesuffix("\n")
            lines.append(line)
        self._errors.seek(0)
        raise RError(f"R ended: {self._errors.read()[-2000:]}")

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.stdin.close()
            self._process.wait(timeout=60)
        self._errors.close()
        shutil.rmtree(self._folder, ignore_errors=True)
