"""JAX's process-wide options, set without importing JAX.

While JAX is not imported yet an option goes to its environment variable (`JAX_NUM_CPU_DEVICES`
for `jax_num_cpu_devices`, `JAX_COMPILATION_CACHE_DIR`, ...), which JAX reads when it is
imported (and child processes inherit); once it is imported, to `jax.config`. So the command
line sets JAX up before JAX is even imported, and a command that never needs JAX never loads it.
"""

from __future__ import annotations

import os

from jaxqueens import _lazy

jax = _lazy.load("jax")


def set_option(name: str, value) -> bool:
    """Set a JAX option: by `jax.config` once JAX is imported, else by its environment variable.

    Args:
      name: the option, e.g. `"jax_enable_x64"`.
      value: its value (None: JAX's default, the variable removed).

    Returns:
      False if JAX refused (an option fixed when its backend starts, set after it started);
      True otherwise.
    """
    if _lazy.is_loaded("jax"):
        try:
            jax.config.update(name, value)
        except RuntimeError:
            return False
        return True
    var = name.upper()
    if value is None:
        os.environ.pop(var, None)
    else:
        os.environ[var] = str(value).lower() if isinstance(value, bool) else str(value)
    return True
