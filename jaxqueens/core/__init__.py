"""Board maths, the independent checker, symmetry, counter-based RNG, line layout, bitmask
prefixes and published counts: pure functions, no devices, no files."""
