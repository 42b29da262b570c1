"""What the rules call: ``plan = Plan(config)`` (rules/common.smk), every method an input or params
function of a job's wildcards, built on fgx.plan's tables, and the figure targets read from the figure
modules' declarations (``targets``). Above fgx.figures, which imports fgx.plan: the one module that
imports figure modules by name (a figure's ``SPEC``) sits over every module a figure imports.
"""

from fgx.dag.rules import Plan

__all__ = ["Plan"]
