"""Keeping the host off a GPU's critical path (scoring and probe features):

- paused_gc: no garbage collection while a block is tokenized: its ~10^5 small lists and
  tuples (in no reference cycle) would set off collections that scan every object the job
  holds (a tenth of the host's time on EWT test, and spikes of 3x);
- prefetched: an iterator's items computed ahead on a thread, so the host builds the next batch
  while the device runs the current one (numpy and torch's copies release the GIL);
- square_mask: a padding mask as the (B, 1, L, L) mask SDPA takes, which transformers uses as
  given: from the (B, L) mask it would first ask the device whether the batch has any padding
  (`mask.all()`), a sync per batch that leaves the GPU idle while the host queues the batch's
  layers;
- attention_backends: the SDPA backends a model may use. torch's own choice for bfloat16 on a
  recent GPU is cuDNN's attention, which builds a plan for every new input shape; with the
  flash and memory-efficient kernels a job's first call is not spent planning.
"""

from __future__ import annotations

import contextlib
import gc
import queue
import threading
from collections.abc import Iterable, Iterator

# SDPA backends by name, torch choosing among them in its own order. `flash`: flash attention,
# the memory-efficient kernel where a padding mask (or float32) rules flash out, the math one
# where neither takes the input (a head size they lack): anything but cuDNN. `auto`: torch's
# choice.
ATTENTION_BACKENDS = {
    "auto": (),
    "flash": ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"),
    "efficient": ("EFFICIENT_ATTENTION",),
    "cudnn": ("CUDNN_ATTENTION",),
    "math": ("MATH",),
}

_END = object()


@contextlib.contextmanager
def paused_gc():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def prefetched(items: Iterable, depth: int) -> Iterator:
    """`items`, up to `depth` of them computed ahead on a thread (depth 0: computed in turn).
    An exception raised by `items` is raised here, in its place. Close the iterator when
    leaving early (contextlib.closing): the thread then stops after the item in hand."""
    if depth <= 0:
        yield from items
        return
    ready: queue.Queue = queue.Queue(depth)
    stop = threading.Event()

    def put(entry) -> bool:
        while not stop.is_set():
            try:
                ready.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, raised there
            put((_END, error))
            return
        put((_END, None))

    thread = threading.Thread(target=work, name="prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item, error = ready.get()
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        thread.join()


def attention_backends(name: str, device):
    """A context in which SDPA uses only the backends `name`s (ATTENTION_BACKENDS); nothing
    off CUDA, where the choice would change the CPU's scores."""
    if not ATTENTION_BACKENDS[name] or device.type != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([getattr(SDPBackend, backend) for backend in ATTENTION_BACKENDS[name]])


def square_mask(attention_mask, causal: bool):
    """The (B, L) padding mask as the boolean (B, 1, L, L) mask of a model using SDPA (True:
    attend), causal or not: the mask transformers itself builds from a padded batch's (B, L)
    one, so the kernels and their results are the same, without the host asking the device
    whether there is padding. Only for models whose attention is SDPA: eager attention adds a
    mask to its scores and would misread a boolean one."""
    import torch

    length = attention_mask.shape[-1]
    mask = attention_mask.bool()[:, None, None, :].expand(-1, 1, length, -1)
    if causal:
        mask = mask & torch.ones(length, length, dtype=torch.bool,
                                 device=attention_mask.device).tril()
    return mask.contiguous()
