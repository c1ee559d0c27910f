"""Utilities that touch tensors."""
