"""The error a bad input raises: fgx's scripts print it as one line and exit 1 (:func:`fgx.cli.run`)."""


class InputError(ValueError):
    """An input file is missing, unreadable or lacks a column; the message names file, field and fix."""
