"""`jaxqueens render FILE -o IMAGE`: a poster of one board (n <= 1000), in the format the
output's suffix names (`.png`, `.pdf`, `.svg`, ...:
`jaxqueens.plots.render.IMAGE_FORMATS`)."""

from __future__ import annotations

from jaxqueens.cli.boards import add_file, boards_of, pick
from jaxqueens.io import writing
from jaxqueens.plots import render


def add_command(sub) -> None:
    """Register `jaxqueens render` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "render",
        help="draw a board as an image: .png, .pdf, .svg, .eps, ... (n <= 1000)",
        description="Draw one board of FILE as an image whose format the suffix of -o names "
        "(.png, .pdf, .svg, .eps, .jpg, ...): one block per square, queens highlighted, "
        "attacked queens in a third colour.",
    )
    add_file(p)
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="IMAGE",
        help="output file; its suffix names the format: .png, .pdf, .svg, .eps, .jpg, ...",
    )
    p.add_argument(
        "--index", type=int, default=0, help="which board of a multi-board file (default 0)"
    )
    p.add_argument(
        "--title",
        default=None,
        help="figure title (default: n and conflict count); $...$ is matplotlib "
        "mathtext, checked before drawing; write \\$ for a dollar sign",
    )
    p.set_defaults(func=cmd_render, uses_jax=False)  # never imports JAX (tests/test_startup.py)


def cmd_render(args) -> int:
    """Write a poster of one board of FILE, in the format the suffix of `-o` names; exit code 0."""
    writing.prepare_out(args.output, kind="file", option="-o", inputs=[args.file])
    render.image_format(args.output, option="-o")  # before any work: a format we can write
    rows = pick(boards_of(args), args.index, args.file)
    render.render_png(rows, args.output, title=args.title)
    print(f"wrote {args.output}")
    return 0
