"""Files and terminals: board files, atomic writes, checkpoints, CSV/JSON tables, what each
command writes to `--out`, progress lines and JSON logs."""
