"""Error types shared by the whole package.

`QueensError` is the one type the CLI turns into a one-line message and exit
code 2: raise it (or a subclass) for anything the *user* got wrong, with a
message that names the problem and says how to fix it. Anything else that
escapes is a bug and keeps its traceback.
"""


def clip(text: str, limit: int = 40) -> str:
    """The start of `text` for a one-line message (a huge value is never echoed whole).

    Args:
      text: the text to clip.
      limit: the most characters kept before "...".

    Returns:
      `text` itself if it fits, else its first `limit` characters and "...".
    """
    return text if len(text) <= limit else text[:limit] + "..."


class QueensError(ValueError):
    """Bad input from the user: a one-line message naming the problem and the fix.

    Args:
      *args: the message.
      param: the parameter the message starts with, when it names one (`seed`, `max_steps`):
        the command line says its flag instead (`--seed`, `--maxsteps`).
    """

    def __init__(self, *args, param: str | None = None):
        super().__init__(*args)
        self.param = param


class BoardFileError(QueensError):
    """A board file cannot be read: the message names the file and, where it applies, the line."""


class SolutionCheckError(RuntimeError):
    """A solver reported a board that the independent checker rejects (a bug, never user error)."""


class PeerLostError(QueensError):
    """Another process of a multi-process run stopped answering mid-run (a gather failed): the run
    cannot go on; the last checkpoint is kept, and every process must be started again."""


class InstanceUnsat(QueensError):
    """A constrained instance given to local search (`solve`, `anneal`, `evolve`) is plainly
    unsatisfiable (fixed queens attacking each other, a column or row without an allowed square),
    so no search is run: the one case where local search reports UNSAT. The command line prints
    it as a result (exit 1).

    Args:
        reason: why the instance is unsatisfiable (kept as `self.reason`).
    """

    def __init__(self, reason: str):
        super().__init__(f"UNSAT ({reason})")
        self.reason = reason
