"""Helpers of tools/plot-curves: reading csan's logs and drawing them with matplotlib."""


class PlotError(Exception):
    """A bad input or output; plot-curves prints it as one line and exits 1."""
