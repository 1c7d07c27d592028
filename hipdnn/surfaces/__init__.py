"""The surfaces that are no import path of their own: cudnn-frontend's spellings (aliases, the jit
decorator, reached through ``hipdnn``) and the report of ``python -m hipdnn info``."""
