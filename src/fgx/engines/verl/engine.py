"""The verl engine: vLLM sampling, verl SFT and verl GRPO behind the torch engine's interface.

Every method writes exactly what the torch engine writes (architecture.md): rollout / eval
parquet (input rows + responses, scores, correct, response_tokens, level, n_correct), Hugging
Face model directories (merged from verl's FSDP checkpoints inside the job, written atomically)
and the RL metrics parquet (``step, metric, level, value``).

Commands come from :mod:`fgx.engines.verl.commands` (pure, tested against verl's Hydra config)
and run as subprocesses whose output goes to the job's log. Resuming: each job keeps a work
directory (RL: the rule's ``--work-dir``; SFT / sampling: a hidden sibling of the output) holding
verl checkpoints or finished sampling chunks plus a fingerprint of the job's inputs and settings;
a rerun with the same fingerprint continues from there, a changed one starts clean.

GPUs: the job uses the GPUs it can see (``CUDA_VISIBLE_DEVICES``, as SLURM sets it) and, when
its SLURM allocation has several nodes, starts a Ray cluster over the allocation with
``scripts/ray_slurm.sh`` before ``verl.trainer.main_ppo`` (which then joins it). A job that sees no
GPU runs the same commands on the CPU, one rank: verl with fgx's CPU platform
(:mod:`fgx.engines.verl.cpu_platform`, :func:`cpu_env`), vLLM's CPU build with fgx's plugin
(:mod:`fgx.engines.verl.vllm_cpu`), both in fp32.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from fgx.engines import validation
from fgx.engines.metric_names import FGX_NAMES, VERL_SFT_TAGS, VERL_TAGS
from fgx.engines.verl import commands as C
from fgx.engines.verl.environment import host_lock, private_ray
from fgx.engines.verl.processes import run_logged, run_parallel
from fgx.io import check_replaceable_dir, prepare_work_dir, remove_work_dir, run_fingerprint
from fgx.settings import MACHINE_RUNTIME_KEYS

log = logging.getLogger("fgx.engines.verl")

SRC_DIR = Path(__file__).resolve().parents[3]          # .../src (fgx importable from here)
REPO_DIR = SRC_DIR.parent
RAY_SLURM = REPO_DIR / "scripts" / "ray_slurm.sh"
REWARD_PATH = Path(__file__).resolve().parent / "reward.py"
TRAINED_MARKER = "TRAINED"
TOKENIZER_FILES = ("generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   "chat_template.jinja")
# settings that do not change what a job computes (left out of the resume fingerprint)
RUNTIME_KEYS = ("engine", "device", *MACHINE_RUNTIME_KEYS)

Runner = Callable[[Sequence[str], Mapping[str, str], Path | None], None]


# ----------------------------------------------------------------------------- helpers
def on_cpu() -> bool:
    """True when this job sees no GPU: ``CUDA_VISIBLE_DEVICES`` empty, or unset and CUDA counts none."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None:
        return not cvd.strip() or cvd.strip() == "NoDevFiles"
    try:
        import torch

        return torch.cuda.device_count() == 0
    except Exception:  # no torch / no driver
        return True


def cpu_env(v: Mapping) -> dict[str, str | None]:
    """Environment of a verl or vLLM command on the CPU: verl imports fgx's CPU platform and uses it
    (``VERL_USE_EXTERNAL_MODULES``, ``VERL_PLATFORM``) and picks its FSDP engine, registered for
    "cuda" only (``VERL_ENGINE_DEVICE``); vLLM takes its CPU platform and a KV cache of
    ``verl.cpu_kv_cache_gb`` GB (else it sizes the cache as a share of the machine's memory)."""
    return {"VERL_USE_EXTERNAL_MODULES": "fgx.engines.verl.cpu_platform", "VERL_PLATFORM": "cpu",
            "VERL_ENGINE_DEVICE": "cuda", "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_CPU_KVCACHE_SPACE": str(int(v["cpu_kv_cache_gb"])),
            # unset: Ray refuses its "GPU" (one per CPU rank, cpu_platform) when the variable lists none
            "CUDA_VISIBLE_DEVICES": None}


def sampler_cpu_env(v: Mapping) -> dict[str, str | None]:
    """:func:`cpu_env` for fgx's own vLLM sampler (not verl's rollout server, whose async engine needs a
    process of its own): vLLM's engine core and its worker run inside the sampling process, two
    processes fewer to start, each of which imports torch and vLLM again (about half of a small sampling
    job's time on a CPU). Requests are seeded one by one, so the samples are the same."""
    return {**cpu_env(v), "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}


def model_view(model_dir: str | Path, work: Path) -> Path:
    """``model_dir`` as verl and vLLM read it. verl's datasets always apply a chat template; a model
    whose tokenizer has none (the tiny model) is shown through ``work/model`` (links to its files,
    plus :data:`fgx.engines.prompts.PLAIN_CHAT_TEMPLATE`), which renders prompts and SFT examples to
    the torch engine's token ids. Other models (and directories without a tokenizer) are used as they are."""
    from fgx.engines.prompts import PLAIN_CHAT_TEMPLATE

    model_dir = Path(model_dir).resolve()
    config = model_dir / "tokenizer_config.json"
    if (not config.is_file() or (model_dir / "chat_template.jinja").exists()
            or json.loads(config.read_text()).get("chat_template")):
        return model_dir
    view = work / "model"
    if not (view / "chat_template.jinja").exists():
        view.mkdir(parents=True, exist_ok=True)
        for f in model_dir.iterdir():
            if f.is_file() and not (view / f.name).exists():
                (view / f.name).symlink_to(f)
        (view / "chat_template.jinja").write_text(PLAIN_CHAT_TEMPLATE)
    return view


def visible_gpus(default: int) -> list[str]:
    """Device ids this job may use: CUDA_VISIBLE_DEVICES, else CUDA's count, else ``default``."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None and cvd.strip() and cvd.strip() != "NoDevFiles":
        return [d.strip() for d in cvd.split(",") if d.strip()]
    try:
        import torch

        n = torch.cuda.device_count()
    except Exception:  # no torch / no driver: fall back to the configured count
        n = 0
    return [str(i) for i in range(n or int(default))]


def slurm_job_nodes() -> int:
    """Nodes of this job's SLURM allocation (1 outside SLURM).

    Asked of SLURM (``squeue -j $SLURM_JOB_ID``): inside a job step, as Snakemake's SLURM jobstep
    runs every job, SLURM_JOB_NUM_NODES / SLURM_JOB_NODELIST describe the one-node step instead.
    """
    job = os.environ.get("SLURM_JOB_ID")
    if job and shutil.which("squeue"):
        try:
            out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%D"], capture_output=True, text=True,
                                 timeout=60).stdout.strip()
            if out.isdigit():
                return max(1, int(out))
        except (OSError, subprocess.TimeoutExpired):
            pass
    return max(1, int(os.environ.get("SLURM_JOB_NUM_NODES") or 1))


def gpu_groups(devices: Sequence[str], tensor_parallel_size: int) -> list[list[str]]:
    """Split devices into data-parallel groups of ``tensor_parallel_size`` GPUs."""
    tp = max(1, int(tensor_parallel_size))
    if len(devices) < tp:
        raise RuntimeError(f"model.tensor_parallel_size={tp} but this job sees {len(devices)} GPU(s) "
                           f"({','.join(devices) or 'none'}); request more GPUs in the profile or lower it")
    return [list(devices[i * tp:(i + 1) * tp]) for i in range(len(devices) // tp)]


def job_env(extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """This process's environment for a command, fgx importable, with ``extra`` (None: unset)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC_DIR), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("TOKENIZERS_PARALLELISM", "true")
    env.setdefault("WANDB_MODE", "disabled")
    env.update(extra or {})
    return {k: v for k, v in env.items() if v is not None}


def fingerprint(settings: Mapping, cpu: bool, **inputs: Any) -> str:
    """A job's resume fingerprint: what changes its result (the settings less the machine knobs,
    :func:`fgx.engines.verl.commands.result_settings`; the inputs; the world size a trainer's
    per-rank checkpoints were written for; the kind of device, as the CPU computes in fp32 and a GPU in
    bf16, so that a job begun without a GPU and resumed with one starts afresh), never how it runs."""
    return run_fingerprint(C.result_settings(settings), RUNTIME_KEYS, device="cpu" if cpu else "gpu", **inputs)


def latest_checkpoint(checkpoint_dir: Path) -> Path:
    """``global_step_N`` named by verl's ``latest_checkpointed_iteration.txt``."""
    tracker = checkpoint_dir / "latest_checkpointed_iteration.txt"
    if not tracker.exists():
        raise RuntimeError(f"verl wrote no checkpoint under {checkpoint_dir} (no {tracker.name}); "
                           "see the trainer output above in this job's log")
    step = tracker.read_text().strip()
    return checkpoint_dir / f"global_step_{step}"


def check_checkpoint_tracker(checkpoint_dir: Path) -> None:
    """Stop with one message when verl's ``latest_checkpointed_iteration.txt`` is damaged (not a step
    number, or naming a ``global_step_N`` that is not there). verl would crash on it at every retry;
    starting clean would throw away checkpoints that may be good (days of GPU time at paper scale), and
    which one is complete only a person can tell, so the message names the file, the checkpoints
    found and both fixes."""
    from fgx.io import InputError

    tracker = checkpoint_dir / "latest_checkpointed_iteration.txt"
    if not tracker.exists():
        return
    text = tracker.read_text(errors="replace").strip()
    if text.isdigit() and (checkpoint_dir / f"global_step_{text}").is_dir():
        return
    found = sorted((p.name for p in checkpoint_dir.glob("global_step_*") if p.is_dir()),
                   key=lambda name: int(name.rsplit("_", 1)[1]) if name.rsplit("_", 1)[1].isdigit() else -1)
    raise InputError(f"{tracker}: verl's checkpoint tracker reads {text[:40]!r}, which names no checkpoint here "
                     f"(found: {', '.join(found) or 'none'}); write the step of the newest complete one into it "
                     f"(e.g. {found[-1].rsplit('_', 1)[1] if found else 'N'}) to resume there, or delete "
                     f"{checkpoint_dir} to start this job afresh")


def checkpoint_step(checkpoint_dir: Path) -> int:
    """The step of the newest checkpoint verl's tracker names (0: none yet)."""
    tracker = checkpoint_dir / "latest_checkpointed_iteration.txt"
    return int(tracker.read_text().strip()) if tracker.exists() else 0


def sft_steps_per_epoch(examples: int, batch_size: int, world_size: int) -> int:
    """Optimizer steps per epoch of verl 0.9.1's SFT trainer: each rank's ``DistributedSampler``
    (``drop_last=True``) takes ``examples // world_size`` examples, its ``StatefulDataLoader``
    (``drop_last=True``) batches of ``batch_size // world_size``; an incomplete batch is dropped."""
    per_rank = batch_size // world_size
    if per_rank < 1:
        raise ValueError(f"SFT batch size {batch_size} is smaller than the world size {world_size}")
    return (examples // world_size) // per_rank


def set_aside_epoch_end_loader_state(checkpoint_dir: Path, steps_per_epoch: int) -> list[Path]:
    """Resume SFT from a checkpoint saved at the end of an epoch without skipping the next epoch.

    verl 0.9.1's SFT trainer restores the data loader's state with every checkpoint (verl issue
    #7401). Saved at an epoch boundary, that state is an exhausted epoch; the resumed trainer moves on
    to the next epoch, whose first pass then yields no batch, so one epoch is silently never trained.
    fgx checkpoints SFT after each epoch, so every SFT resume is that case. The state carries nothing
    at a boundary (the next epoch's order comes from ``set_epoch``), so it is renamed out of verl's
    sight (``data_<rank>.pt.epoch-end``, kept, not deleted) and verl starts the next epoch afresh, in
    the order an uninterrupted run takes. Returns the files renamed."""
    step = checkpoint_step(checkpoint_dir)
    if step == 0 or steps_per_epoch < 1 or step % steps_per_epoch:
        return []
    moved = []
    for state in sorted((checkpoint_dir / f"global_step_{step}").glob("data_*.pt")):
        target = state.with_name(state.name + ".epoch-end")
        state.replace(target)
        moved.append(target)
    if moved:
        log.info("resuming SFT at step %d, the end of epoch %d: its data loader state set aside (%s), so "
                 "that verl trains the next epoch (verl issue #7401)", step, step // steps_per_epoch,
                 ", ".join(p.name for p in moved))
    return moved


def check_trained_steps(checkpoint_dir: Path, expected: int, trainer: str) -> None:
    """Raise unless verl's newest checkpoint is its run's last step: a trainer that exits cleanly
    short of its steps (as verl's SFT did at an epoch boundary) must not pass for a finished one."""
    step = checkpoint_step(checkpoint_dir)
    if step != expected:
        raise RuntimeError(f"verl's {trainer} exited without error after step {step} of {expected} (the newest "
                           f"checkpoint in {checkpoint_dir}); the job is not marked finished, and a rerun "
                           "continues from that checkpoint. See the trainer output above in this job's log")


def _messages(value) -> list[dict]:
    return [{"role": str(m["role"]), "content": str(m["content"])} for m in list(value)]


def sft_messages(df):
    """fgx SFT rows (prompt + ``response`` or ``responses``) -> verl's ``messages`` column."""
    import pandas as pd

    if "messages" in df.columns:
        return pd.DataFrame({"messages": [_messages(m) for m in df["messages"]]})
    if "response" in df.columns:
        pairs = zip(df["prompt"], df["response"], strict=True)
    elif "responses" in df.columns:
        pairs = ((p, r) for p, rs in zip(df["prompt"], df["responses"], strict=True) for r in list(rs))
    else:
        raise ValueError("SFT data needs a 'response' (or 'responses' / 'messages') column next to 'prompt'; "
                         f"got columns {list(df.columns)} (write it with scripts/filter_rollouts.py)")
    rows = [[*_messages(p), {"role": "assistant", "content": str(r)}] for p, r in pairs]
    if not rows:
        raise ValueError("SFT data has no rows: every rollout was filtered out (no correct responses?)")
    return pd.DataFrame({"messages": rows})


def finish_model_dir(target: Path, init_model: str | Path, settings: Mapping, argv: Sequence[str]) -> None:
    """Make a merged directory match the torch engine's: generation config, tokenizer (the starting
    model's files, not the merger's copy of what verl was shown: :func:`model_view`), provenance."""
    init_model = Path(init_model)
    for name in TOKENIZER_FILES:
        if (init_model / name).exists():
            shutil.copy2(init_model / name, target / name)
        elif (target / name).exists() and name != "generation_config.json":
            (target / name).unlink()  # in the merger's fresh output directory, e.g. the view's chat template
    if not any(target.glob("*.safetensors")):
        raise RuntimeError(f"verl's model merger wrote no *.safetensors into {target}")
    (target / "resolved_config.json").write_text(json.dumps(
        {"engine": "verl", "init_model": str(init_model), "settings": dict(settings),
         "command": list(map(str, argv))}, indent=2, sort_keys=True, default=str) + "\n")


# ----------------------------------------------------------------------------- metrics
VAL_ACC = re.compile(r"^val-core/(?P<source>.+)/acc/mean@\d+$")
TRAINED = VERL_TAGS["num_groups_trained"]
GEN_BATCHES = VERL_TAGS["num_gen_batches"]


ATTEMPT_LOG = re.compile(r"attempt-(?P<count>\d+)\.jsonl")


def next_attempt_log(work: Path) -> Path:
    """A new metrics file for this attempt (verl's file logger truncates the file it opens), numbered one
    past the highest there: attempts sort in the order they ran, whatever the clock of the node said
    (a DST fall-back, a requeue onto a node in another zone). Created empty here, so that two attempts
    never share a number."""
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    while True:
        count = 1 + max((n for _, n in _numbered(logs.glob("attempt-*.jsonl"))), default=0)
        path = logs / f"attempt-{count:06d}.jsonl"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            return path
        except FileExistsError:
            continue


def attempt_logs(work: Path) -> list[Path]:
    """The attempts' metrics files in ``work``, first attempt first (:func:`next_attempt_log`)."""
    return [p for p, _ in sorted(_numbered((work / "logs").glob("*.jsonl")), key=lambda pn: pn[1])]


def _numbered(paths) -> list[tuple[Path, int]]:
    out = []
    for p in paths:
        m = ATTEMPT_LOG.fullmatch(Path(p).name)
        if m:
            out.append((Path(p), int(m["count"])))
        else:
            log.warning("%s: not an attempt log fgx names (attempt-<count>.jsonl); its metrics are left out", p)
    return out


def read_verl_jsonl(paths: Sequence[Path]) -> dict[int, dict]:
    """{step: metrics} from verl file-logger files, in the order of their attempts (:func:`attempt_logs`'s
    count): a step a later, resumed attempt logged again has that attempt's values."""
    steps: dict[int, dict] = {}
    for path, _ in sorted(_numbered(paths), key=lambda pn: pn[1]):
        for line in Path(path).read_text().splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                log.warning("skipping a torn line in %s", path)  # a killed attempt's last write
                continue
            steps.setdefault(int(rec["step"]), {}).update(rec.get("data") or {})
    return steps


def sft_train_log(steps: Mapping[int, Mapping]):
    """verl's SFT log as the torch engine's ``train_log.parquet``: one row per step, ``step`` and the
    columns of :data:`fgx.engines.metric_names.VERL_SFT_TAGS` (a step verl logged twice, before and after
    a resume, once: the later attempt's)."""
    import pandas as pd

    rows = [{"step": int(step), **{name: float(metrics[tag]) for name, tag in VERL_SFT_TAGS.items()}}
            for step, metrics in sorted(steps.items()) if all(tag in metrics for tag in VERL_SFT_TAGS.values())]
    return pd.DataFrame(rows, columns=["step", *VERL_SFT_TAGS]).astype({"step": "int64"})


def metrics_frame(steps: Mapping[int, Mapping], batch_size: int, dynamic_sampling: bool,
                  val_prompts: Mapping[int, int] | None = None):
    """verl's per-step metrics in fgx's long format ``step, metric, level, value``.

    ``val_accuracy`` per level comes from ``val-core/<data_source>/acc/mean@N`` (level = the
    data source's depth), and over every validation prompt (level -1, as the torch engine logs it) from
    those, weighted by ``val_prompts`` (prompts per level; None: equally); ``filtered_group_share`` = groups
    dropped by dynamic sampling over groups generated; fgx names for the common training metrics
    (``fgx.engines.metric_names.FGX_NAMES``); every other numeric verl metric is kept as ``verl:<name>``.
    """
    import pandas as pd

    from fgx.tasks.contract import data_source_level

    rows = []
    for step in sorted(steps):
        data = steps[step]
        per_level = {}
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            m = VAL_ACC.match(key)
            if m:
                level = data_source_level(m["source"])
                rows.append((step, "val_accuracy", -1 if level is None else level, float(value)))
                per_level[level] = float(value)
            elif key in FGX_NAMES:
                rows.append((step, FGX_NAMES[key], -1, float(value)))
            else:
                rows.append((step, f"verl:{key}", -1, float(value)))
        if per_level and None not in per_level:  # a source of no level is already the row of level -1
            weights = {lv: val_prompts.get(lv, 1) if val_prompts else 1 for lv in per_level}
            overall = sum(per_level[lv] * weights[lv] for lv in per_level) / sum(weights.values())
            rows.append((step, "val_accuracy", -1, overall))
        if dynamic_sampling and GEN_BATCHES in data:
            # fgx's replay buffer's counts: 1 - groups trained / groups sampled, as the torch engine's
            sampled = float(data[GEN_BATCHES]) * batch_size
            rows.append((step, "filtered_group_share", -1, 1.0 - float(data[TRAINED]) / sampled))
    frame = pd.DataFrame(rows, columns=["step", "metric", "level", "value"])
    return frame.astype({"step": "int64", "metric": "str", "level": "int64", "value": "float64"})


# ----------------------------------------------------------------------------- engine
class VerlEngine:
    """verl + vLLM at paper scale (GPU); same methods and outputs as the torch engine."""

    name = "verl"

    def __init__(self, python: str | None = None, runner: Runner | None = None,
                 parallel_runner: Callable | None = None):
        self.python = python or sys.executable
        self._run = runner or run_logged
        self._run_parallel = parallel_runner or run_parallel

    # --------------------------------------------------------------------- pretraining
    def pretrain(self, data_paths, out_dir, work_dir, settings: Mapping) -> None:
        """The tiny base from scratch (``model.source: scratch``) with the torch engine: verl has no
        pretraining. The base is a Hugging Face directory like any other, which verl starts from."""
        from fgx.engines.torch import TorchEngine

        TorchEngine().pretrain(data_paths, out_dir, work_dir, settings)

    # --------------------------------------------------------------------- sampling
    def sample(self, model_dir, rows, out_path, work_dir, settings: Mapping) -> None:
        """n samples per prompt with vLLM (data parallel over the job's GPUs), scored; finished
        chunks in ``work_dir`` survive an interruption."""
        import pandas as pd

        from fgx.io import read_rows, write_parquet
        from fgx.tasks.contract import row_levels

        out_path = Path(out_path)
        data_path = None if isinstance(rows, pd.DataFrame) else Path(rows)
        df = rows if data_path is None else read_rows(data_path, "prompts", ("prompt", "reward_model", "extra_info"))
        levels = row_levels(df, data_path)  # before any sampling: a row without a level stops the job here
        v = C.verl_settings(settings)
        cpu = on_cpu()
        groups = [["cpu"]] if cpu else gpu_groups(visible_gpus(v["n_gpus_per_node"]),
                                                  int(settings["tensor_parallel_size"]))
        fp = fingerprint(settings, cpu, model=model_dir, data=data_path or "dataframe", rows=len(df),
                         shards=len(groups))
        work = prepare_work_dir(work_dir, fp, [model_dir, data_path, out_path])
        if data_path is None:
            data_path = work / "input.parquet"
            if not data_path.exists():
                write_parquet(df, data_path)
        chunk_dir = work / "chunks"
        chunk_dir.mkdir(exist_ok=True)
        model = model_view(model_dir, work)
        argvs = [C.rollout_command(settings, model_dir=str(model),
                                   data_path=str(Path(data_path).resolve()), out_dir=str(chunk_dir.resolve()),
                                   shard=i, num_shards=len(groups), python=self.python, cpu=cpu)
                 for i in range(len(groups))]
        with private_ray(work) as ray_env:  # vLLM starts Ray for an engine larger than one node's GPUs
            envs = [job_env({**ray_env, **(sampler_cpu_env(v) if cpu else {"CUDA_VISIBLE_DEVICES": ",".join(g)})})
                    for g in groups]
            self._run_parallel(argvs, envs)
        out = assemble_samples(df, sorted(chunk_dir.glob("shard*-chunk*.parquet")), levels)
        write_parquet(out, out_path, settings=dict(settings))
        remove_work_dir(work)

    # --------------------------------------------------------------------- SFT
    def sft(self, model_dir, data_path, out_dir, work_dir, settings: Mapping) -> None:
        """Rejection fine-tuning with verl's SFT trainer, merged into ``out_dir``."""
        import pyarrow.parquet as pq

        from fgx.io import InputError, atomic_dir, read_rows, write_parquet
        from fgx.settings import SFT

        out_dir = Path(out_dir)
        check_replaceable_dir(out_dir)  # before the training, not after it
        v = C.verl_settings(settings)
        cpu = on_cpu()
        n_gpus = 1 if cpu else len(visible_gpus(v["n_gpus_per_node"]))
        work = prepare_work_dir(work_dir, fingerprint(settings, cpu, model=model_dir, data=data_path,
                                                      world_size=n_gpus), [model_dir, data_path, out_dir])
        train = work / "sft.parquet"
        if not train.exists():
            rows = read_rows(data_path, "SFT data", ("prompt", "response"))
            if len(rows) == 0:  # as the torch engine: no step, the starting model is the result
                log.warning("%s holds no SFT example (no correct response kept): %s is the starting model",
                            data_path, out_dir)
                with atomic_dir(out_dir) as tmp:
                    for f in Path(model_dir).iterdir():
                        if f.is_file():
                            shutil.copy2(f, Path(tmp) / f.name)
                    finish_model_dir(Path(tmp), model_dir, settings, [])
                return
            write_parquet(sft_messages(rows), train)
        ckpt = work / "checkpoints"
        job = SFT.from_settings(settings)
        examples = pq.ParquetFile(train).metadata.num_rows
        per_epoch = sft_steps_per_epoch(examples, int(job.batch_size), n_gpus)
        if per_epoch == 0:
            raise InputError(f"{data_path}: {examples} SFT example(s), fewer than one batch of {job.batch_size} "
                             f"on {n_gpus} rank(s); verl's SFT trainer drops an incomplete batch and would train "
                             "no step. Lower the SFT batch_size of this stage in config.yaml, or give it more data")
        argv = C.sft_command(settings, python=self.python, model_dir=str(model_view(model_dir, work)),
                             train_file=str(train.resolve()), checkpoint_dir=str(ckpt.resolve()),
                             experiment_name=out_dir.name, n_gpus_per_node=n_gpus, cpu=cpu)
        if not (work / TRAINED_MARKER).exists():
            set_aside_epoch_end_loader_state(ckpt, per_epoch)
        self._train(work, argv, job_env({"VERL_FILE_LOGGER_PATH": str(next_attempt_log(work)),
                                         **(cpu_env(v) if cpu else {})}),
                    steps=per_epoch * int(job.epochs), trainer="SFT trainer")
        step_dir = latest_checkpoint(ckpt)
        train_log = sft_train_log(read_verl_jsonl(attempt_logs(work)))
        with atomic_dir(out_dir) as tmp:
            self._run(C.merge_command(checkpoint_dir=str(step_dir), target_dir=str(Path(tmp).resolve()),
                                      python=self.python),
                      job_env(), None)
            finish_model_dir(tmp, model_dir, settings, argv)
            train_log.to_parquet(Path(tmp) / "train_log.parquet", index=False)  # as the torch engine writes it

    # --------------------------------------------------------------------- RL
    def rl(self, model_dir, train_path, val_path, out_dir, metrics_path, work_dir, settings: Mapping, *,
           validation_path=None) -> None:
        """GRPO with verl.trainer.main_ppo; metrics parquet, (given ``validation_path``) the validation
        table from verl's validation dumps (:mod:`fgx.engines.validation`) and the merged final actor."""
        import pandas as pd

        from fgx.io import atomic_dir, read_rows, write_parquet
        from fgx.tasks.contract import row_levels

        out_dir = Path(out_dir)
        check_replaceable_dir(out_dir)  # before the training, not after it
        v = C.verl_settings(settings)
        val = read_rows(val_path, "validation prompts", ("prompt", "reward_model"))
        truths = validation.ground_truths(val, val_path)  # before the training: verl's dumps are read by them
        cpu = on_cpu()
        nnodes = 1 if cpu else slurm_job_nodes()
        n_gpus = 1 if cpu else len(visible_gpus(v["n_gpus_per_node"]))
        work = prepare_work_dir(work_dir, fingerprint(settings, cpu, model=model_dir, train=train_path, val=val_path,
                                                      world_size=nnodes * n_gpus),
                                [model_dir, train_path, val_path, out_dir, metrics_path, validation_path])
        cpus = os.environ.get("SLURM_CPUS_ON_NODE")
        ckpt = work / "checkpoints"
        argv = C.ppo_command(
            settings, python=self.python, model_dir=str(model_view(model_dir, work)), cpu=cpu,
            train_files=[str(Path(train_path).resolve())], val_files=[str(Path(val_path).resolve())],
            checkpoint_dir=str(ckpt.resolve()), experiment_name=out_dir.name, reward_path=str(REWARD_PATH),
            n_gpus_per_node=n_gpus, nnodes=nnodes, ray_num_cpus=int(cpus) if cpus and nnodes == 1 else None,
            validation_dir=str((work / "validation").resolve()))
        if nnodes > 1:
            argv = ["bash", str(RAY_SLURM), "--", *argv]
        with host_lock(), private_ray(work, one_node=nnodes == 1) as ray_env:
            env = job_env({"VERL_FILE_LOGGER_PATH": str(next_attempt_log(work)),
                           "TENSORBOARD_DIR": str(work / "tensorboard"),  # as the torch engine's
                           "FGX_GPUS_PER_NODE": str(n_gpus), **ray_env, **(cpu_env(v) if cpu else {})})
            self._train(work, argv, env, steps=int(settings["steps"]), trainer="GRPO trainer")
        steps = read_verl_jsonl(attempt_logs(work))
        val_levels = pd.Series(row_levels(val, val_path))
        frame = metrics_frame(steps, int(settings["batch_size"]), bool(settings["dynamic_sampling"]),
                              val_prompts=val_levels.value_counts().to_dict())
        if frame.empty:
            raise RuntimeError(f"verl logged no metrics under {work / 'logs'}")
        write_parquet(frame, metrics_path, settings=dict(settings))
        if validation_path is not None:
            write_parquet(validation.from_verl_dumps(work / "validation", truths, val_levels.tolist()),
                          validation_path, settings=dict(settings))
        with atomic_dir(out_dir) as tmp:
            self._run(C.merge_command(checkpoint_dir=str(latest_checkpoint(ckpt) / "actor"),
                                      target_dir=str(Path(tmp).resolve()), python=self.python), job_env(), None)
            finish_model_dir(tmp, model_dir, settings, argv)

    # --------------------------------------------------------------------- internals
    def _train(self, work: Path, argv: Sequence[str], env: Mapping[str, str], *, steps: int | None = None,
               trainer: str = "trainer") -> None:
        """Run a trainer in ``work`` unless an earlier attempt already finished it; with ``steps``,
        finished means verl's newest checkpoint is that step."""
        if (work / TRAINED_MARKER).exists():
            log.info("training already finished in %s (an earlier attempt): merging only", work)
            return
        check_checkpoint_tracker(work / "checkpoints")
        resumed = checkpoint_step(work / "checkpoints")
        if resumed:
            log.info("resuming %s from its checkpoint at step %d", trainer, resumed)
        self._run(argv, env, work)
        if steps is not None:
            check_trained_steps(work / "checkpoints", steps, trainer)
        (work / TRAINED_MARKER).write_text(shlex.join(map(str, argv)) + "\n")


def assemble_samples(rows, chunk_files: Sequence[Path], levels: Sequence[int] | None = None):
    """Input rows + the contract's sample columns, from the shards' chunk files (``levels``: the
    rows' levels, read before sampling)."""
    import pandas as pd

    from fgx.tasks.contract import row_levels

    if not chunk_files:
        raise RuntimeError("vLLM sampling wrote no chunk files")
    got = pd.concat([pd.read_parquet(f) for f in chunk_files], ignore_index=True)
    got = got.drop_duplicates("row_index").set_index("row_index").sort_index()
    missing = sorted(set(range(len(rows))) - set(got.index))
    if missing:
        raise RuntimeError(f"vLLM sampling is missing {len(missing)} prompt(s) (rows {missing[:10]} ...)")
    out = rows.reset_index(drop=True).copy()
    for col in ("responses", "scores", "correct", "response_tokens"):
        out[col] = [list(x) for x in got.loc[range(len(rows)), col]]
    out["scores"] = out["scores"].map(lambda xs: [float(x) for x in xs])
    out["correct"] = out["correct"].map(lambda xs: [bool(x) for x in xs])
    out["response_tokens"] = out["response_tokens"].map(lambda xs: [int(x) for x in xs])
    out["level"] = list(levels) if levels is not None else row_levels(rows)
    out["n_correct"] = out["correct"].map(sum).astype("int64")
    return out
