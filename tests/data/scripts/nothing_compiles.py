"""Compiled code in which Dynamo finds nothing to give Inductor: a generator (which
Dynamo cannot compile: it skips the frame) and six functions that only print (each
breaks the graph at its print, with no tensor work before or after it)."""

import torch


def batches(x):
    for chunk in x.split(4):
        yield torch.relu(chunk * 2.0)  # the generator's frame is skipped: runs eagerly


def say0(step):
    print("step", step)


def say1(step):
    print("step", step + 1)


def say2(step):
    print("step", step + 2)


def say3(step):
    print("step", step + 3)


def say4(step):
    print("step", step + 4)


def say5(step):
    print("step", step + 5)


if __name__ == "__main__":
    print(sum(float(b.sum()) for b in torch.compile(batches)(torch.randn(16, 8))))
    for say in (say0, say1, say2, say3, say4, say5):
        torch.compile(say)(0)
