"""The DAG's plan: what each job reads, writes and receives, as pure functions of the config.

One table per concept, each in its own module: ``paths`` (every artifact path pattern, written once),
``splits`` (the problem sets), ``models`` (which model starts from which and trains on what),
``params`` (each job's settings JSON), ``comparisons`` (which models each comparison puts side by
side), ``figures`` (the figures' names and the form of the declaration each fgx.figures module
makes of its inputs and settings), ``targets`` (the figures the config asks for, read from those
declarations) and ``rules`` (``Plan``: the config bound once, what the .smk files call with a job's wildcards).
Kept free of heavy imports except where a figure's declaration is read.
"""

from fgx.plan.rules import Plan

__all__ = ["Plan"]
