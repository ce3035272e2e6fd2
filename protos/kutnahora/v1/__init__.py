"""Generated code of the ``kutnahora.v1`` protocol (see ``scripts/gen_protos.py``); do not edit."""
