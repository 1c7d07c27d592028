"""The lowest layer: errors, enums and conversions, shapes, logging, progress, handles."""
