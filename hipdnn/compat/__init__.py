"""Other spellings of the API: cudnn-frontend aliases and the jit decorator."""
