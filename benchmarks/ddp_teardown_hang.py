"""How often a compiled DDP step on gloo hangs at exit, plainly and under capture, with
the teardown of ``tests/data/scripts/_train_mlp.finish`` (the DDP module freed first,
then a barrier, then ``destroy_process_group()``) and with the old one (the process
group destroyed while the module lives) (README, "A DDP job on gloo that hangs at
exit"; pytorch/pytorch#56297).

    python benchmarks/ddp_teardown_hang.py [--runs 3] [--timeout 90]

Each run starts 2 ranks on the CPU with ``torch.distributed.run --standalone`` (plain)
or ``fusionviz capture --nproc-per-node 2`` (captured), Inductor's caches off in both,
and counts as a hang when it has not ended after ``--timeout`` seconds (then it is
killed). The step is ``tests/data/scripts/ddp_step.py``'s; the old teardown is
written to a temporary folder. The reference is the plain run: the same
script under PyTorch's own launcher, without fusionviz.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
    still lives, so its Reducer drops the group's last reference when it dies}."""
    old = folder / "old"
    old.mkdir()
    shutil.copy(SCRIPTS / "_train_mlp.py", old / "_train_mlp.py")
    (old / "ddp_step.py").write_text(OLD_TEARDOWN)
    return {"old": old / "ddp_step.py", "fixed": SCRIPTS / "ddp_step.py"}


def hangs(argv: list[str], env: dict, timeout: float) -> bool:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=timeout)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return True


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=90.0)
    opts = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for variant, script in scripts(tmp).items():
            for how in ("plain", "captured"):
                if how == "plain":
                    argv = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                            "--nproc-per-node=2", str(script)]
                else:
                    argv = [sys.executable, "-m", "fusionviz", "capture", str(script),
                            "--nproc-per-node", "2", "--device", "cpu", "-o",
                            str(tmp / f"out-{variant}")]
                n = sum(hangs(argv, env, opts.timeout) for _ in range(opts.runs))
                print(f"{variant:6} {how:8} hung {n} of {opts.runs} runs "
                      f"(timeout {opts.timeout:g} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
