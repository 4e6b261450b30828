"""ResNet-50 train step: ``timm.create_model("resnet50")``, random weights, SGD.

What it is: timm's ResNet-50 (1000 classes, random init, ``pretrained=False``: no
download), model and input in ``channels_last``. Batch 64 x 3 x 224 x 224 random images
and random labels; the module's forward is ``cross_entropy(model(images), labels)``
under bf16 autocast on CUDA (fp32 on the CPU); then ``loss.backward()`` and SGD
(lr 0.1, momentum 0.9).

``--size tiny``: timm's ``resnet18`` with 10 classes, batch 2 x 3 x 64 x 64.

    python benchmarks/eager_models/resnet50_train.py [--size full|tiny] [--device cpu]
    python benchmarks/eager_models/resnet50_train.py --eager-profile OUT.json
    python -m fusionviz capture benchmarks/eager_models/resnet50_train.py -o T.json.gz \\
        -- --size full
"""

from __future__ import annotations

import sys
from pathlib import Path

import timm
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import ClassifierLoss, Workload, main

SIZES = {"full": ("resnet50", 1000, 64, 224), "tiny": ("resnet18", 10, 2, 64)}


def build(device: str, size: str) -> Workload:
    name, classes, batch, res = SIZES[size]
    model = timm.create_model(name, pretrained=False, num_classes=classes)
    model = model.to(device, memory_format=torch.channels_last).train()
    images = torch.randn(batch, 3, res, res, device=device)
    images = images.contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, classes, (batch,), device=device)
    return Workload(
        module=ClassifierLoss(model),
        args=(images, labels),
        train=True,
        amp=torch.bfloat16 if device.startswith("cuda") else None,
        optimizer_factory=lambda params: torch.optim.SGD(params, lr=0.01, momentum=0.9),
    )


if __name__ == "__main__":
    main(build)
