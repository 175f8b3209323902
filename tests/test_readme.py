"""The README's kernel example runs as written (the block after the ``tested`` marker)."""

from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"
MARKER = "<!-- tested: tests/test_readme.py runs this block -->"


def _tested_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    blocks = []
    for part in text.split(MARKER)[1:]:
        body = part.split("```python\n", 1)[1].split("\n```", 1)[0]
        blocks.append(body)
    return blocks


def test_the_readme_kernel_example_runs():
    blocks = _tested_blocks()
    assert blocks, "the README lost its tested kernel example"
    scope: dict = {}
    exec(compile(blocks[0], str(README), "exec"), scope)  # the README's own code
    one, out = scope["one"], scope["out"]
    assert one.rows.shape == (16,) and bool(one.solved)
    assert out.solved.shape == (8, 1000) and np.asarray(out.solved).all()
    mc, chains, jax = scope["mc"], scope["chains"], scope["jax"]
    params = scope["params"]._replace(max_steps=48)
    again = chains.run(mc, scope["config"], jax.random.key(1), 1000, params)
    np.testing.assert_array_equal(np.asarray(out.rows[1]), np.asarray(again.rows))
