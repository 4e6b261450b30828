"""ViT-S/16 train step: ``timm.create_model("vit_small_patch16_224")``, random weights.

What it is: timm's ViT-Small/16 (12 blocks, width 384, 6 heads, 224 x 224 images: 196
patches + a class token, 1000 classes), random init (``pretrained=False``: no download).
Batch 64 x 3 x 224 x 224 random images and random labels; the module's forward is
``cross_entropy(model(images), labels)`` under bf16 autocast on CUDA (fp32 on the CPU);
then ``loss.backward()`` and AdamW (lr 1e-4).

``--size tiny``: timm's ``vit_tiny_patch16_224`` (width 192, 3 heads) with 2 blocks,
``img_size=64`` (16 patches) and 10 classes, batch 2 x 3 x 64 x 64.

    python benchmarks/eager_models/vit_train.py [--size full|tiny] [--device cpu]
    python benchmarks/eager_models/vit_train.py --eager-profile OUT.json
    python -m fusionviz capture benchmarks/eager_models/vit_train.py -o T.json.gz \\
        -- --size full
"""

from __future__ import annotations

import sys
from pathlib import Path

import timm
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import ClassifierLoss, Workload, main

SIZES = {
    "full": ("vit_small_patch16_224", {}, 1000, 64, 224),
    "tiny": ("vit_tiny_patch16_224", dict(depth=2, img_size=64), 10, 2, 64),
}


def build(device: str, size: str) -> Workload:
    name, extra, classes, batch, res = SIZES[size]
    model = timm.create_model(name, pretrained=False, num_classes=classes, **extra)
    model = model.to(device).train()
    images = torch.randn(batch, 3, res, res, device=device)
    labels = torch.randint(0, classes, (batch,), device=device)
    return Workload(
        module=ClassifierLoss(model),
        args=(images, labels),
        train=True,
        amp=torch.bfloat16 if device.startswith("cuda") else None,
        optimizer_factory=lambda params: torch.optim.AdamW(params, lr=1e-4),
    )


if __name__ == "__main__":
    main(build)
