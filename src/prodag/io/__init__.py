"""Saved files: models (the file format, its checks on load, and upgrades of older formats)
and the sampled graphs of ``samples.npz`` (``prodag.io.samples_file``)."""
