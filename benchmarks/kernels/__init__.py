"""Whole-workload kernels of shared/spec/machine-a2a3.md "Published timings", as `.pto` text."""
