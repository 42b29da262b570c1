"""A CPU platform for verl, so that verl's trainers run where no GPU is visible (CI, a laptop).

verl 0.9.1 knows NVIDIA, Ascend and ROCm platforms only and falls back to NVIDIA (NCCL, CUDA
calls) when none is present. It imports the modules named in ``VERL_USE_EXTERNAL_MODULES`` when
verl is imported, in the driver and in every Ray worker, and picks the platform that
``VERL_PLATFORM`` names: the verl engine sets both to this module and ``cpu`` when the job sees
no GPU (:func:`fgx.engines.verl.environment.cpu_env`), never otherwise. Importing this module
registers the platform and changes nothing else.

What each piece works around:

* ``device_module``: verl calls ``get_torch_device().<fn>`` for CUDA-style memory, stream and RNG
  functions (``empty_cache``, ``mem_get_info``, ``max_memory_allocated``, ``manual_seed``,
  ``get_rng_state`` ...) that ``torch.cpu`` lacks: :data:`cpu_device` is ``torch.cpu`` plus those
  functions, as no-ops or as the CPU's own generator.
* ``communication_backend_name`` = ``gloo``: verl builds its process-group backend as
  ``cpu:gloo,{device}:{backend}``, which torch rejects as "Duplicate device type cpu" when the
  device is the CPU; :func:`_collapse_duplicate_backend` wraps ``init_process_group`` to drop the
  repeated entry (the only change to torch, and only in processes that import this module).
* ``ray_resource_name`` = ``GPU``: verl's resource pools always ask Ray for GPUs; the engine
  starts Ray with ``num_gpus`` = the job's CPU ranks so that each rank gets one "GPU".
* ``is_ipc_supported`` = False: CUDA IPC handles do not exist on a CPU, so verl hands weights
  to vLLM through POSIX shared memory instead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import types
from typing import Any

import torch
import torch.distributed

from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry

PLATFORM = "cpu"


def _noop(*args, **kwargs) -> None:
    return None


def _zero(*args, **kwargs) -> int:
    return 0


def _mem_get_info(*args, **kwargs) -> tuple[int, int]:
    """(free, total) bytes of the machine's memory, as ``torch.cuda.mem_get_info`` reports a GPU's."""
    page = os.sysconf("SC_PAGE_SIZE")
    return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page


def _device_module() -> types.ModuleType:
    mod = types.ModuleType("fgx_cpu_device", "torch.cpu plus the CUDA-style calls verl makes")
    for name in dir(torch.cpu):
        if not name.startswith("__"):
            setattr(mod, name, getattr(torch.cpu, name))
    mod.is_available = lambda: True
    mod.device_count = lambda: 1
    mod.current_device = lambda: "cpu"
    mod.set_device = _noop
    mod.synchronize = _noop
    mod.get_device_name = lambda *a, **k: "cpu"
    for name in ("empty_cache", "ipc_collect", "reset_peak_memory_stats", "reset_max_memory_allocated",
                 "set_per_process_memory_fraction"):
        setattr(mod, name, _noop)
    for name in ("memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved"):
        setattr(mod, name, _zero)
    mod.mem_get_info = _mem_get_info
    mod.manual_seed = torch.manual_seed
    mod.manual_seed_all = torch.manual_seed
    mod.get_rng_state = lambda *a, **k: torch.get_rng_state()
    mod.set_rng_state = lambda state, *a, **k: torch.set_rng_state(state)
    return mod


cpu_device = _device_module()


def _collapse_duplicate_backend(init):
    @functools.wraps(init)
    def wrapper(*args, **kwargs):
        backend = kwargs.get("backend")
        if isinstance(backend, str) and "," in backend:
            kept = list(dict.fromkeys(part.strip() for part in backend.split(",")))
            kwargs["backend"] = ",".join(kept)
        return init(*args, **kwargs)

    wrapper.fgx_collapses_backend = True
    return wrapper


if not getattr(torch.distributed.init_process_group, "fgx_collapses_backend", False):
    torch.distributed.init_process_group = _collapse_duplicate_backend(torch.distributed.init_process_group)


@PlatformRegistry.register(platform=PLATFORM)
class PlatformCPU(PlatformBase):
    """verl on the CPU: one rank per process, gloo collectives, weights to vLLM by shared memory."""

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> types.ModuleType:
        return cpu_device

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check=False) -> bool:
        return not torch.cuda.is_available()

    def current_device(self) -> str:
        # torch.cpu's answer: verl moves modules to ``get_device_id()``, and an integer there means
        # an accelerator's index
        return "cpu"

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"

    @contextlib.contextmanager
    def nvtx_range(self, msg: str):
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "GPU"

    def ray_noset_envvars(self) -> list[str]:
        return ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None
