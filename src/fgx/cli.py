"""Helpers shared by the thin CLIs in scripts/: settings parsing, logging setup, and the shell
prefix through which every rule's script imports the checkout's fgx.

A script defines ``main(argv=None) -> int``, parses its arguments with :func:`parser` (or hands
them to a module's own ``main``) and ends with ``if __name__ == "__main__": sys.exit(main())``."""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from pathlib import Path


def job_shell_prefix(root: str | Path) -> str:
    """The prefix of every rule's shell command (rules/common.smk): Snakemake's strict mode, then
    ``root/src`` first on PYTHONPATH, so each job's scripts import this checkout's fgx in the venv,
    in a conda env (which does not install fgx) and in a SLURM job. It is set in the command, not in
    the environment, because Snakemake removes PYTHONPATH from a conda job's environment.
    Braces are doubled: Snakemake formats the prefix as it formats a rule's command."""
    src = shlex.quote(str(Path(root) / "src"))
    text = f'set -euo pipefail; export PYTHONPATH={src}"${{PYTHONPATH:+:$PYTHONPATH}}"; '
    return text.replace("{", "{{").replace("}", "}}")


def settings_arg(text: str) -> dict:
    """argparse type for ``--settings JSON`` (what Snakemake passes from config)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"--settings is not valid JSON ({err}): {text[:200]!r}")
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--settings must be a JSON object")
    return value


class _JobParser(argparse.ArgumentParser):
    """Puts ``--threads``, ``--gpu-slots`` and ``--gpu-chunk-prompts`` into the settings: machine knobs
    that Snakemake passes as ``{threads}`` and ``{resources.*}`` (config ``compute``; profiles may set
    them), kept out of the params so that changing them reruns nothing."""

    def parse_args(self, args=None, namespace=None):
        ns = super().parse_args(args, namespace)
        if ns.threads is not None:
            ns.settings = {**ns.settings, "threads": ns.threads}
        for key in ("gpu_slots", "gpu_chunk_prompts"):
            if getattr(ns, key) is not None:
                ns.settings = {**ns.settings, key: getattr(ns, key)}
        return ns


def _positive_int(flag: str):
    """argparse type for a machine knob's ``flag``: a positive integer, or an error naming the flag."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive integer, got {text!r}")
        return value

    return parse


def parser(description: str) -> argparse.ArgumentParser:
    p = _JobParser(description=description)
    p.add_argument("--settings", type=settings_arg, default={}, help="job settings as JSON (from config.yaml)")
    p.add_argument("--threads", type=_positive_int("--threads"), default=None,
                   help="torch threads of this job (Snakemake's {threads}); overrides settings.threads")
    p.add_argument("--gpu-slots", type=_positive_int("--gpu-slots"), default=None,
                   help="sequences the torch sampler decodes together on a GPU (config compute.gpu_slots); how the "
                        "job runs, not what it computes")
    p.add_argument("--gpu-chunk-prompts", type=_positive_int("--gpu-chunk-prompts"), default=None,
                   help="prompts per resumable sampling chunk on a GPU (config compute.gpu_chunk_prompts); how the "
                        "job runs, not what it computes")
    return p


def exit_cleanly_on_sigterm() -> None:
    """Make SIGTERM (Snakemake cancelling a job or stopping on Ctrl-C / SIGTERM, SLURM's time limit, a
    plain ``kill``) raise SystemExit in the main thread, as SIGINT raises KeyboardInterrupt: Python's
    default ends the process at once, so no ``finally`` runs and an atomic writer's temporary file
    stays beside its output. The exit status is the usual 128 + 15."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers belong to the main thread (a test calling main() from a worker)

    def _exit(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends it without cleanup
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)


def setup_logging() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def run(call) -> int:
    """Run ``call()``; a bad input (a missing, unreadable or incomplete file, a bad setting, a value
    out of range) ends the job with one line naming it and exit status 1, and no output written
    (every writer is atomic)."""
    setup_logging()
    exit_cleanly_on_sigterm()
    from fgx.io import InputError
    from fgx.settings import SettingsError

    try:
        call()
    except (InputError, SettingsError, FileNotFoundError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


def run_job(call, settings: dict) -> int:
    """Run ``call(engine)`` with the engine the settings name, as :func:`run` does."""
    from fgx.settings import SettingsError

    def go():
        from fgx.engines import get_engine

        if "engine" not in settings:
            raise SettingsError("--settings has no 'engine'; the rules pass it from config.yaml")
        call(get_engine(settings["engine"]))

    return run(go)
