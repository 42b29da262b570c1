#!/usr/bin/env python
"""Draw one paper figure: a PDF, a PNG and the CSV of exactly the plotted numbers."""

import sys

from fgx.cli import parser, run


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("figure", help="figure name, e.g. passk_level_curve")
    p.add_argument("--inputs", nargs="+", required=True, help="artifacts the figure reads")
    p.add_argument("--pdf", required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--png", default=None, help="a PNG of the same figure as well (the README shows these)")
    args = p.parse_args(argv)

    def go():
        from fgx.figures.render import render

        table = render(args.figure, args.inputs, args.settings, args.pdf, args.csv, args.png)
        print(f"{args.figure}: {len(table)} rows -> {args.pdf}, {args.csv}")

    return run(go)


if __name__ == "__main__":
    sys.exit(main())
