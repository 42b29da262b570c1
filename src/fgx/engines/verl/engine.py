"""The verl engine: vLLM sampling, verl SFT and verl GRPO, as :class:`fgx.engines.Engine`.

Every operation writes exactly what the torch engine writes (architecture.md): rollout / eval
parquet (input rows + responses, scores, correct, response_tokens, level, n_correct), Hugging
Face model directories (merged from verl's FSDP checkpoints inside the job, written atomically)
and the RL metrics parquet (``step, metric, level, value``).

The class reads as the protocol does; each concern lies in a module of its own: the commands
(:mod:`~fgx.engines.verl.commands`, pure, tested against verl's Hydra config), the processes that run
them with their output in the job's log (:mod:`~fgx.engines.verl.processes`), the machine they run on,
their private Ray and the host lock (:mod:`~fgx.engines.verl.environment`), verl's checkpoints
(:mod:`~fgx.engines.verl.checkpoints`), its metrics (:mod:`~fgx.engines.verl.metrics`) and the files
that go in and out (:mod:`~fgx.engines.verl.formats`). Resuming: each job keeps a work directory
(the rule's ``--work-dir``) holding verl checkpoints or finished sampling chunks plus a fingerprint of
the job's inputs and settings; a rerun with the same fingerprint continues from there, a changed one
starts clean.
"""
from __future__ import annotations

import logging
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from fgx.engines import validation
from fgx.engines.verl import commands as C
from fgx.engines.verl.checkpoints import (
    check_checkpoint_tracker,
    check_trained_steps,
    checkpoint_step,
    latest_checkpoint,
    set_aside_epoch_end_loader_state,
    sft_steps_per_epoch,
)
from fgx.engines.verl.environment import (
    SRC_DIR,
    cpu_env,
    gpu_groups,
    host_lock,
    job_env,
    on_cpu,
    private_ray,
    sampler_cpu_env,
    slurm_job_nodes,
    visible_gpus,
)
from fgx.engines.verl.formats import assemble_samples, finish_model_dir, model_view, sft_messages
from fgx.engines.verl.metrics import attempt_logs, metrics_frame, next_attempt_log, read_verl_jsonl, sft_train_log
from fgx.engines.verl.processes import run_logged, run_parallel
from fgx.io import check_replaceable_dir, prepare_work_dir, remove_work_dir, run_fingerprint
from fgx.settings import MACHINE_RUNTIME_KEYS

log = logging.getLogger("fgx.engines.verl")

RAY_SLURM = SRC_DIR.parent / "scripts" / "ray_slurm.sh"
REWARD_PATH = Path(__file__).resolve().parent / "reward.py"
TRAINED_MARKER = "TRAINED"
# settings that do not change what a job computes (left out of the resume fingerprint)
RUNTIME_KEYS = ("engine", "device", *MACHINE_RUNTIME_KEYS)

Runner = Callable[[Sequence[str], Mapping[str, str], Path | None], None]


def fingerprint(settings: Mapping, cpu: bool, **inputs: Any) -> str:
    """A job's resume fingerprint: what changes its result (the settings less the machine knobs,
    :func:`fgx.engines.verl.commands.result_settings`; the inputs; the world size a trainer's
    per-rank checkpoints were written for; the kind of device, as the CPU computes in fp32 and a GPU in
    bf16, so that a job begun without a GPU and resumed with one starts afresh), never how it runs."""
    return run_fingerprint(C.result_settings(settings), RUNTIME_KEYS, device="cpu" if cpu else "gpu", **inputs)


# ----------------------------------------------------------------------------- engine
class VerlEngine:
    """verl + vLLM at paper scale (GPUs, or the CPU in CI); the same operations and outputs as the torch engine."""

    name = "verl"
    env_file = "envs/verl.yaml"
    one_rl_job_per_host = True  # verl's weight sync of two jobs on one host would collide (environment.host_lock)

    @staticmethod
    def gpus_per_job(config: Mapping) -> int:
        """A GPU group per job at least (profiles/slurm gives whole nodes); none visible: the CPU."""
        return 1

    @staticmethod
    def job_settings(config: Mapping) -> dict:
        """vLLM's engines span ``model.tensor_parallel_size`` GPUs."""
        return {"tensor_parallel_size": config["model"]["tensor_parallel_size"]}

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


