"""The Kutná Hora wire contract: generated Python code for the ``kutnahora.v1`` protobuf package."""
