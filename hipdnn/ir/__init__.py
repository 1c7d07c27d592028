"""The graph's data: tensors, nodes, validation, serialization, the frozen view, pictures."""
