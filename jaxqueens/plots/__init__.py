"""Figures with matplotlib (imported lazily): arrays in, PNG files out."""
