"""How often a compiled DDP step on gloo hangs at exit, plainly and under capture, with
the teardown of ``tests/data/scripts/_train_mlp.finish`` (the DDP module freed first,
then a barrier, then ``destroy_process_group()``), with the old one (the process
group destroyed while the module lives), and with the tutorials' one
(``tests/data/scripts/ddp_plain_teardown.py``: the same, at module level) (README, "A
DDP job on gloo that hangs at exit"; pytorch/pytorch#56297).

    python benchmarks/ddp_teardown_hang.py [--runs 3] [--timeout 90]
        [--variants old,tutorial,fixed] [--how plain,captured]

Each run starts 2 ranks on the CPU with ``torch.distributed.run --standalone`` (plain)
or ``fusionviz capture --nproc-per-node 2`` (captured), Inductor's caches off in both,
and counts as a hang when it has not ended after ``--timeout`` seconds (then it is
killed), or when fusionviz had to end a rank that did not exit after its final trace
(its safety net, ``runner.EXIT_AFTER_DONE_S``). The step is
``tests/data/scripts/ddp_step.py``'s; the old teardown is written to a temporary
folder. The reference is the plain run: the same script under PyTorch's own
launcher, without fusionviz.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fusionviz.model.errors import TraceError  # noqa: E402
from fusionviz.model.run.process_tree import kill_tree  # noqa: E402
from fusionviz.model.run.runner import rank_paths  # noqa: E402
from fusionviz.model.run.settle import LINGERED  # noqa: E402
from fusionviz.model.tracefile.io import read_script  # noqa: E402

SCRIPTS = ROOT / "tests" / "data" / "scripts"
OLD_TEARDOWN = """
import torch.distributed as dist
from _train_mlp import MLP, start, train
from torch.nn.parallel import DistributedDataParallel

def run(model):
    train(model, device, rank)
    dist.destroy_process_group()  # while the DDP module lives: it dies after

if __name__ == "__main__":
    rank, device, cuda = start()
    run(DistributedDataParallel(MLP().to(device)))
"""


def scripts(folder: Path) -> dict[str, Path]:
    """{"fixed": ddp_step.py as committed (``_train_mlp.finish``), "old": the same step
    with the teardown it had before: the process group destroyed while the DDP module
    still lives, so its Reducer drops the group's last reference when it dies,
    "tutorial": that teardown at module level, where the module lives to the end}."""
    old = folder / "old"
    old.mkdir()
    shutil.copy(SCRIPTS / "_train_mlp.py", old / "_train_mlp.py")
    (old / "ddp_step.py").write_text(OLD_TEARDOWN)
    return {"old": old / "ddp_step.py", "tutorial": SCRIPTS / "ddp_plain_teardown.py",
            "fixed": SCRIPTS / "ddp_step.py"}


def hangs(argv: list[str], env: dict, timeout: float) -> bool:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=timeout)
        return False
    except subprocess.TimeoutExpired:
        kill_tree(proc.pid)  # the ranks too: the launcher starts them in sessions of their own
        proc.wait()
        return True


def ended_by_capture(folder: Path) -> bool:
    """A rank hung after its final trace and fusionviz ended it (``EXIT_AFTER_DONE_S``):
    a hang the capture's safety net hid, counted as one."""
    for path in rank_paths(folder, 2):
        try:
            if LINGERED in read_script(path).message:
                return True
        except (TraceError, OSError):
            continue
    return False


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--variants", default="old,tutorial,fixed")
    ap.add_argument("--how", default="plain,captured")
    opts = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for variant, script in scripts(tmp).items():
            if variant not in opts.variants.split(","):
                continue
            for how in opts.how.split(","):
                if how == "plain":
                    argv = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                            "--nproc-per-node=2", str(script)]
                else:
                    argv = [sys.executable, "-m", "fusionviz", "capture", str(script),
                            "--nproc-per-node", "2", "--device", "cpu", "-o",
                            str(tmp / f"out-{variant}")]
                n = 0
                for _ in range(opts.runs):
                    shutil.rmtree(tmp / f"out-{variant}", ignore_errors=True)
                    n += hangs(argv, env, opts.timeout) or (
                        how == "captured" and ended_by_capture(tmp / f"out-{variant}"))
                print(f"{variant:8} {how:8} hung {n} of {opts.runs} runs "
                      f"(timeout {opts.timeout:g} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
