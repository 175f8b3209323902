"""The process-wide state module: one typed object per concern, nothing changed by importing it."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from jaxqueens import _process

STATES = [
    value
    for value in vars(_process).values()
    if dataclasses.is_dataclass(value) and not isinstance(value, type)
]


def test_every_concern_is_one_typed_object_of_fixed_shape():
    kinds = [type(state) for state in STATES]
    classes = {
        v
        for v in vars(_process).values()
        if isinstance(v, type) and v.__module__ == _process.__name__
    }
    assert len(kinds) == len(set(kinds)) and set(kinds) == classes  # one object per class
    assert len(kinds) == 8
    for state in STATES:
        with pytest.raises(AttributeError):  # slots: a misspelt field cannot be made
            state.no_such_field = 1  # type: ignore[attr-defined]


def test_importing_the_package_and_the_state_changes_nothing_in_the_process():
    code = (
        "import os, signal, sys\n"
        "before = (dict(os.environ), [signal.getsignal(s) for s in (2, 15)])\n"
        "import jaxqueens, jaxqueens._process\n"
        "after = (dict(os.environ), [signal.getsignal(s) for s in (2, 15)])\n"
        "assert before == after, 'import changed the process'\n"
        "assert 'jax' not in sys.modules and signal.set_wakeup_fd(-1) == -1\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
