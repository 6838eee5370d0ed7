"""A model split across devices: accelerate's device map, memory budgets and disk offload, for a
model larger than one GPU (scoring and probe features; docs/scoring.md, "Models larger than one
GPU").

- Placement: a model's `device_map`, `max_memory` and `offload_folder` as the commands take them
  (`--device-map`, `--max-memory`, `--offload-folder`) and as from_pretrained takes them;
- execution_device: where a loaded model takes its inputs;
- gpus_needed: the GPUs a job asks the scheduler for, from the bytes of the model's weights.

Where the layers sit changes no number: each layer runs the same kernels in the same dtype on
the device class the job runs on (accelerate moves an offloaded layer's weights to the
execution device before it runs), so neither the score cache nor the job keys hold the map,
and a changed map reruns no job.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from spudflow.core.errors import InputError
from spudflow.core.output_paths import shared_dir

# accelerate's named strategies (transformers' from_pretrained device_map=)
STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")
# A memory size as accelerate reads it: bytes, or a number with a unit (70GiB, 500MB).
SIZE = re.compile(r"^[0-9]+(\.[0-9]+)?\s*([KMGT]i?B)?$", re.IGNORECASE)
# A device of a map or a budget: a GPU index, cpu or disk (disk only in a map).
GPU_DEVICE = re.compile(r"^(?:cuda:)?([0-9]+)$")
# What a GPU holds when no `max_memory` says (an 80 GB A100/H100), and the headroom over the
# weights for activations and the CUDA context.
DEFAULT_GPU_BYTES = 80e9
WEIGHT_HEADROOM = 1.2
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}


@dataclass(frozen=True)
class Placement:
    device_map: str | dict | None = None     # a strategy or {module: device}; None: one device
    max_memory: dict | None = None           # {0: "70GiB", "cpu": "200GiB"}
    offload_folder: str | None = None

    @property
    def mapped(self) -> bool:
        return self.device_map is not None

    def loading_options(self) -> dict:
        """from_pretrained's keyword arguments (none for a model on one device), for the GPUs
        this process sees: a job asks the scheduler for the GPUs its weights need (gpus_needed),
        which may be fewer than its budget names, so the budgets of GPUs it was not given are
        dropped. An explicit map naming a GPU it does not see is bad input."""
        if not self.mapped:
            return {}
        import torch

        seen = torch.cuda.device_count()
        if isinstance(self.device_map, dict):
            absent = sorted({d for d in self.device_map.values()
                             if isinstance(d, int) and d >= seen})
            if absent:
                raise InputError("--device-map", None, f"puts modules on GPU {absent[0]}, but "
                                 f"this job sees {seen} GPU(s)")
        options = {"device_map": self.device_map}
        budget = {k: v for k, v in (self.max_memory or {}).items()
                  if not isinstance(k, int) or k < seen}
        if budget:
            options["max_memory"] = budget
        if self.offload_folder is not None:
            options["offload_folder"] = self.offload_folder
        return options


# A model on one device (no map): what the loaders default to.
WHOLE_MODEL = Placement()


def _device(text, where: str):
    """A device of a map or budget: a GPU index as an int, or cpu/disk as given."""
    text = str(text).strip()
    found = GPU_DEVICE.match(text)
    if found:
        return int(found[1])
    if text in ("cpu", "disk"):
        return text
    raise InputError(where, None, f"unknown device {text!r} (a GPU index, cpu or disk)")


def parse_device_map(text: str | None) -> str | dict | None:
    """`--device-map`: a strategy, or a JSON object {module name: device}."""
    if text is None:
        return None
    if text in STRATEGIES:
        return text
    try:
        given = json.loads(text)
    except ValueError:
        given = None
    if not isinstance(given, dict) or not given:
        raise InputError("--device-map", None, f"{text!r} is neither {', '.join(STRATEGIES)} "
                         "nor a JSON object of module name -> device")
    return {str(module): _device(device, "--device-map") for module, device in given.items()}


def parse_max_memory(text: str | None) -> dict | None:
    """`--max-memory DEVICE=SIZE,...` (0=70GiB,1=70GiB,cpu=200GiB)."""
    if text is None:
        return None
    budget = {}
    for part in text.split(","):
        device, _, size = part.partition("=")
        size = size.strip()
        if not size or not SIZE.match(size):
            raise InputError("--max-memory", None, f"{part!r} is not DEVICE=SIZE (0=70GiB, "
                             "cpu=200GiB)")
        where = _device(device, "--max-memory")
        if where == "disk":
            raise InputError("--max-memory", None, "disk has no budget (--offload-folder)")
        budget[where] = int(size) if size.isdigit() else size
    return budget


def placement_from_options(device_map: str | None, max_memory: str | None,
                           offload_folder: Path | None) -> Placement:
    """The placement the three options give; a budget or folder without a map is bad input."""
    mapped = parse_device_map(device_map)
    budget = parse_max_memory(max_memory)
    if mapped is None and (budget is not None or offload_folder is not None):
        raise InputError("--max-memory" if budget is not None else "--offload-folder", None,
                         "is only used with --device-map")
    return Placement(mapped, budget, str(offload_folder) if offload_folder else None)


def add_arguments(parser) -> None:
    """The three options of a command that loads a model (score, probe features)."""
    parser.add_argument("--device-map",
                        help=f"split the model across devices through accelerate: "
                        f"{' | '.join(STRATEGIES)} | a JSON object of module name -> device "
                        "(a GPU index, cpu or disk); the numbers are those of the unsplit "
                        "model (docs/scoring.md)")
    parser.add_argument("--max-memory",
                        help="with --device-map: memory budget per device, DEVICE=SIZE,... "
                        "(0=70GiB,1=70GiB,cpu=200GiB); what does not fit goes to disk")
    # a scratch folder accelerate writes into (and jobs may share): created when missing
    parser.add_argument("--offload-folder", type=shared_dir,
                        help="with --device-map: folder for the weights offloaded to disk")


def execution_device(model, default):
    """Where a model takes its inputs: accelerate's main device of a split model (the first GPU
    of its map, else the CPU: an offloaded layer's weights are brought there to run), else
    `default`."""
    import torch

    mapping = getattr(model, "hf_device_map", None)
    if not mapping:
        return default
    gpus = [d for d in mapping.values() if d not in ("cpu", "disk")]
    if not gpus:
        return torch.device("cpu")
    first = gpus[0]
    return torch.device(f"cuda:{first}" if isinstance(first, int) else first)


def describe_map(model) -> str:
    """How many modules each device of a split model holds (for the job log)."""
    counts: dict[str, int] = {}
    for device in (getattr(model, "hf_device_map", None) or {}).values():
        counts[str(device)] = counts.get(str(device), 0) + 1
    return ", ".join(f"{device}: {n} modules" for device, n in counts.items())


# Planning: the GPUs a job with a device map asks for.

def option_values(spec: dict) -> list[str]:
    """The command's options of a model's config entry (`device_map`, `max_memory`,
    `offload_folder`): none when it has no map."""
    if spec.get("device_map") is None:
        return []
    mapping = spec["device_map"]
    args = ["--device-map", mapping if isinstance(mapping, str) else json.dumps(mapping)]
    if spec.get("max_memory") is not None:
        args += ["--max-memory", ",".join(f"{k}={v}" for k, v in spec["max_memory"].items())]
    if spec.get("offload_folder") is not None:
        args += ["--offload-folder", spec["offload_folder"]]
    return args


def size_bytes(size) -> float:
    """Bytes of a budget (an int, or 70GiB / 500MB as accelerate reads them)."""
    if isinstance(size, int):
        return float(size)
    found = SIZE.match(str(size))
    number = float(str(size)[:found.start(2)] if found[2] else size)
    unit = (found[2] or "B").upper()
    scale = 1024 if "I" in unit else 1000
    return number * scale ** "BKMGT".index(unit[0]) if unit != "B" else number


def gpus_needed(spec: dict, weights_bytes: float | None) -> int:
    """GPUs a job of a model asks for (the `gpu` resource): 1 without a device map; with an
    explicit map, the GPUs it names; with a strategy, enough GPUs of the `max_memory` budget
    (the smallest GPU's; 80 GB when none is given) for the weights with a fifth of headroom,
    at most the GPUs the budget names, at least 1. Weights planning cannot read (a hub model
    not downloaded yet) ask for the GPUs the budget names, else 1."""
    mapping = spec.get("device_map")
    if mapping is None:
        return 1
    if isinstance(mapping, dict):
        return len({d for d in (_device(v, "device_map") for v in mapping.values())
                    if isinstance(d, int)})
    budget = {_device(k, "max_memory"): v for k, v in (spec.get("max_memory") or {}).items()}
    gpu_budgets = [size_bytes(v) for k, v in budget.items() if isinstance(k, int)]
    if weights_bytes is None:
        return max(1, len(gpu_budgets))
    per_gpu = min(gpu_budgets) if gpu_budgets else DEFAULT_GPU_BYTES
    wanted = max(1, math.ceil(weights_bytes * WEIGHT_HEADROOM / per_gpu))
    return min(wanted, len(gpu_budgets)) if gpu_budgets else wanted


def host_budget_mb(spec: dict) -> float:
    """MB of a split model's weights the job may hold in host memory (its `max_memory` budget
    for the CPU, added to the job's `mem_mb`); 0 without a map or a CPU budget."""
    if spec.get("device_map") is None:
        return 0.0
    budget = (spec.get("max_memory") or {}).get("cpu")
    return size_bytes(budget) / 1e6 if budget is not None else 0.0


def loaded_weight_bytes(folder: Path | None, dtype: str) -> float | None:
    """Bytes of a model folder's weights as loaded in `dtype` (`auto`: bfloat16, as on a GPU):
    the weight files' bytes scaled from the dtype config.json says they are stored in (float32
    when it says none); None without a folder or weight files."""
    if folder is None or not folder.is_dir():
        return None
    files = [f for pattern in ("*.safetensors", "*.bin") for f in folder.glob(pattern)]
    if not files:
        return None
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    stored = config.get("dtype") or config.get("torch_dtype") or "float32"
    loaded = "bfloat16" if dtype == "auto" else dtype
    stored_bytes = DTYPE_BYTES.get(str(stored).removeprefix("torch."), 4)
    return sum(f.stat().st_size for f in files) * DTYPE_BYTES.get(loaded, 4) / stored_bytes


def model_folder(source: str, revision: str | None = None) -> Path | None:
    """A local model folder, or a hub id's snapshot in the local cache; None otherwise (a
    `pypi:` package, a GGUF file, a hub model not downloaded)."""
    from spudflow.core.hub_cache import loaded_snapshot
    from spudflow.core.model_source import PACKAGE_PREFIX, is_local_path

    if source.startswith(PACKAGE_PREFIX):
        return None
    if is_local_path(source):
        return Path(source).expanduser()
    try:
        return loaded_snapshot(source, revision)
    except LookupError:
        return None
