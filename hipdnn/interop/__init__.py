"""Buffers from host arrays, DLPack producers and framework tensors; dtype mapping."""
