"""One declaration of the server's settings, from which its flags, variables and their documentation come.

A field of :class:`kutnahora.server.config.ServerConfig` (or of a settings dataclass nested in it, such as
the clock or the limits) that an operator may set carries a :class:`Setting` in its metadata, made by
:func:`setting`: the command-line flag, the ``KUTNAHORA_*`` environment variable, the help sentence and how
text becomes the field's value. From that one declaration come

- the flags of ``kutnahora-server`` (:func:`add_arguments`), each with its variable and its default in
  ``--help``, and each taking its default from its variable when that is set (a flag wins over its
  variable);
- the configuration built from parsed flags (:func:`values_from_args`);
- the configuration reference table of the operations guide, ``deploy/README.md``
  (:func:`markdown_table`; ``python -m kutnahora.server.config_reference`` prints it, ``--write FILE`` puts
  it in place of the table already there).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

ENV_PREFIX = "KUTNAHORA_"
"""Every setting's environment variable starts with this."""

TABLE_HEADER = "| flag | variable | default | meaning |"
"""The first line of the configuration reference table in the operations guide."""


def show_value(value: Any) -> str:
    """A default as ``--help`` and the guide write it: ``true``/``false``, ``10`` for ``10.0``, ``none``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if value is None or value == "":
        return "none"
    return str(value)


@dataclass(frozen=True, slots=True)
class Setting:
    """How an operator sets one field: its flag, its variable, its help and how its text is read."""

    flag: str  # the command-line flag, "--db"
    env: str  # the variable without ENV_PREFIX, "DB"
    help: str  # one sentence for --help and the guide
    parse: Callable[[str], Any] = str  # text (from the flag or the variable) to the field's value
    show: Callable[[Any], str] = show_value  # the field's value as --help and the guide write it
    metavar: str = "VALUE"  # what --help calls the flag's value
    doc: str = ""  # more for the guide's table, after the help sentence
    default_doc: str = ""  # the guide's default column when show() is not enough (``(the packaged set)``)
    secret: bool = False  # --help never shows a value taken from the variable, only that one is set

    @property
    def variable(self) -> str:
        """The full environment variable, ``KUTNAHORA_DB``."""
        return ENV_PREFIX + self.env

    @property
    def dest(self) -> str:
        """The attribute of the parsed arguments that holds this setting (argparse's own choice)."""
        return self.flag.removeprefix("--").replace("-", "_")


def setting(
    default: Any,
    flag: str,
    env: str,
    help: str,
    *,
    parse: Callable[[str], Any] = str,
    show: Callable[[Any], str] = show_value,
    metavar: str = "VALUE",
    doc: str = "",
    default_doc: str = "",
    secret: bool = False,
) -> Any:
    """A dataclass field with ``default`` that an operator sets with ``flag`` or ``KUTNAHORA_<env>``; a
    ``secret`` one's value never appears in ``--help``."""
    declared = Setting(flag, env, help, parse, show, metavar, doc, default_doc, secret)
    return dataclasses.field(default=default, metadata={"setting": declared})


@dataclass(frozen=True, slots=True)
class Declared:
    """A setting where it sits: the path of field names to it and the default the dataclass gives it."""

    path: tuple[str, ...]  # ("clock", "decision_ms")
    setting: Setting
    default: Any


def declared(config_type: type[Any]) -> list[Declared]:
    """Every setting of a settings dataclass and of the settings dataclasses nested in it, in order."""
    return list(_walk(config_type, ()))


def _walk(config_type: type[Any], prefix: tuple[str, ...]) -> Iterator[Declared]:
    for item in dataclasses.fields(config_type):
        found = item.metadata.get("setting")
        if isinstance(found, Setting):
            yield Declared((*prefix, item.name), found, item.default)
        elif item.default_factory is not dataclasses.MISSING:
            nested = item.default_factory()
            if dataclasses.is_dataclass(nested) and not isinstance(nested, type):
                yield from _walk(type(nested), (*prefix, item.name))


def from_environment(item: Declared, environ: Mapping[str, str]) -> Any:
    """The setting's value from its variable, or its declared default where the variable is unset or empty.

    Raises SystemExit, with a sentence naming the variable, for a value that cannot be read.
    """
    text = environ.get(item.setting.variable, "")
    if text == "":
        return item.default
    try:
        return item.setting.parse(text)
    except (ValueError, argparse.ArgumentTypeError) as error:
        reason = f": {error}" if str(error) else ""
        raise SystemExit(
            f"environment variable {item.setting.variable}={text!r} is not valid{reason}"
        ) from None


def _argument_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` for argparse: its ValueError's sentence becomes argparse's message."""

    def read(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error) or f"invalid value: {text!r}") from None

    read.__name__ = getattr(parse, "__name__", "value")
    return read


def add_arguments(
    parser: argparse.ArgumentParser, config_type: type[Any], environ: Mapping[str, str] | None = None
) -> None:
    """Add a flag for every setting of ``config_type``; each default comes from its variable if set."""
    environ = os.environ if environ is None else environ
    for item in declared(config_type):
        default = from_environment(item, environ)
        shown = item.setting.show(default)
        if item.setting.secret and default != item.default:
            shown = f"set by {item.setting.variable}, not shown"
        text = f"{item.setting.help} (default: {shown}; env {item.setting.variable})"
        parser.add_argument(
            item.setting.flag,
            dest=item.setting.dest,
            type=_argument_type(item.setting.parse),
            default=default,
            metavar=item.setting.metavar,
            help=text.replace("%", "%%"),
        )


def values_from_args(config_type: type[Any], args: argparse.Namespace, **extra: Any) -> Any:
    """``config_type`` with every setting taken from ``args`` (nested dataclasses built alike).

    ``extra`` sets top-level fields that are not settings (such as a loaded component set).
    """
    return _build(config_type, args, (), extra)


def _build(config_type: type[Any], args: argparse.Namespace, prefix: tuple[str, ...], extra: Any) -> Any:
    values: dict[str, Any] = dict(extra)
    for item in dataclasses.fields(config_type):
        found = item.metadata.get("setting")
        if isinstance(found, Setting):
            values[item.name] = getattr(args, found.dest)
        elif item.default_factory is not dataclasses.MISSING:
            nested = item.default_factory()
            if dataclasses.is_dataclass(nested) and not isinstance(nested, type):
                values[item.name] = _build(type(nested), args, (*prefix, item.name), {})
    return config_type(**values)


def markdown_table(config_type: type[Any]) -> str:
    """The operations guide's configuration reference: a row per setting, with its declared default."""
    lines = [TABLE_HEADER, "| --- | --- | --- | --- |"]
    for item in declared(config_type):
        declared_setting = item.setting
        default = declared_setting.default_doc or f"`{declared_setting.show(item.default)}`"
        meaning = declared_setting.help + (f"; {declared_setting.doc}" if declared_setting.doc else "")
        lines.append(f"| `{declared_setting.flag}` | `{declared_setting.variable}` | {default} | {meaning} |")
    return "\n".join(lines) + "\n"


def replace_table(document: str, table: str) -> str:
    """``document`` with its configuration reference table (from its header to the next blank line)
    replaced by ``table``."""
    lines = document.splitlines(keepends=True)
    start = next((n for n, line in enumerate(lines) if line.startswith(TABLE_HEADER)), None)
    if start is None:
        raise ValueError(f"no table starting {TABLE_HEADER!r}")
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "".join(lines[:start]) + table + "".join(lines[end:])
