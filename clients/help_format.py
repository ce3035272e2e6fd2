"""The help layout of the project's commands: every default shown, once.

argparse's :class:`argparse.ArgumentDefaultsHelpFormatter` appends ``(default: X)`` to every option, even
one whose help already names its default or that has none to show (a switch, an option left unset).
:class:`DefaultsHelpFormatter` appends it only where it tells the reader something.
"""

from __future__ import annotations

import argparse


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Append ``(default: X)`` to an option's help unless the help names its default already, or the
    default is unset (``None``) or a switch's ``False``."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default is None or action.default is False:
            return text
        if action.default is argparse.SUPPRESS or not action.option_strings:
            return text
        return super()._get_help_string(action)
