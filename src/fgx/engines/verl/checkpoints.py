"""verl's checkpoints as the engine reads them: the step its tracker names, a damaged tracker named before
verl crashes on it, SFT's data-loader state at an epoch's end set aside, a trainer's last step checked."""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger("fgx.engines.verl")


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
