"""The spatial-opt `-t` printers: the report, the memory map and the placement heat map. They
read the sized IR and decide nothing; `spatial_dialect.passes.get_all_output_targets()` resolves
them lazily by name."""
