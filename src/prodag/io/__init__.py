"""Saved models: the file format, its checks on load, and upgrades of older formats."""
