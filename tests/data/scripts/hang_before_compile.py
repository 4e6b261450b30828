"""Sleeps forever before compiling anything: the capture must time out cleanly."""

import time

import torch  # noqa: F401

time.sleep(3600)
