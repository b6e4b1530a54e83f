"""Model config of floe's materializations, parsed and validated in one place.

A macro collects a model's raw options (``config.get``, ``floe_option``, ``var``) and
hands them to the adapter (:mod:`floe.adapter`, ``adapter.floe_*_config``), which builds
one of the frozen config objects below: each ``from_options`` checks every option and
raises :class:`ModelConfigError` naming the model and the option, and ``as_dict`` is
what the macro renders SQL from. So the macros only render SQL, and a bad option fails
the same way whichever macro reads it first (the pattern of dbt-databricks'
``relation_configs``).

Options and their meaning: docs/cdc.md (cdc), docs/scd2.md (scd2), docs/maintenance.md
(table properties and maintenance policy).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

WRITE_MODES = ("copy-on-write", "merge-on-read")
INCREMENTAL_STRATEGIES = ("append", "merge", "insert_overwrite", "cdc", "microbatch")
DELETE_DETECTION = ("auto", "absence", "status")

# Maintenance policy option -> Iceberg table property (stored on the table, so
# `floe maintain` needs no dbt project to find it).
MAINTENANCE_PROPERTIES = {
    "keep_snapshots": "history.expire.min-snapshots-to-keep",
    "max_snapshot_age_days": "history.expire.max-snapshot-age-ms",
    "compact_min_files": "floe.maintain.compact-min-files",
    "orphan_age_days": "floe.maintain.orphan-age-days",
}
_DAY_MS = 86_400_000
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


class ModelConfigError(ValueError):
    """A model's config is wrong; the message names the model and the option to fix."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _names(value: Any) -> list[str]:
    """A column list from one name or many."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _maintenance_value(model: str, key: str, value: Any) -> str:
    """A maintenance option as its table property: the counts whole numbers >= 1, the
    day options numbers >= 0 (``max_snapshot_age_days`` in milliseconds)."""
    count = key in ("keep_snapshots", "compact_min_files")
    try:
        number = None if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        number = None
    if (
        number is None
        or not math.isfinite(number)
        or number < (1 if count else 0)
        or (count and number != int(number))
    ):
        wanted = "a whole number of at least 1" if count else "a number of days (0 or more)"
        raise ModelConfigError(
            f"Model {model}: maintenance option '{key}' is {value!r}; use {wanted}"
        )
    if key == "max_snapshot_age_days":
        return str(int(number * _DAY_MS))
    return str(int(number)) if number == int(number) else str(number)


@dataclass(frozen=True)
class TableProperties:
    """Iceberg table properties of a model: floe's defaults, its options, its tblproperties.

    Defaults: format-version 2 (row-level deletes for MERGE/DELETE need it), the
    write mode (copy-on-write unless ``write_mode: merge-on-read``) for merge, update
    and delete, and ``write.wap.enabled`` (environments write branches); then ``target_file_size_bytes`` and the ``maintenance`` policy; the
    model's own ``tblproperties`` win.
    """

    properties: Mapping[str, Any]

    @classmethod
    def from_options(
        cls,
        model: str,
        write_mode: Any = None,
        target_file_size_bytes: Any = None,
        maintenance: Mapping[str, Any] | None = None,
        tblproperties: Mapping[str, Any] | None = None,
    ) -> TableProperties:
        mode = write_mode if write_mode is not None else "copy-on-write"
        if mode not in WRITE_MODES:
            raise ModelConfigError(
                f"Model {model}: write_mode '{mode}' is not copy-on-write or merge-on-read"
            )
        props: dict[str, Any] = {
            "format-version": "2",
            "write.merge.mode": mode,
            "write.update.mode": mode,
            "write.delete.mode": mode,
            # A build in an environment (FLOE_ENV, docs/envs.md) writes the table's
            # branch with no property commit at `floe env create`; without a
            # spark.wap.branch set, writes go to main as usual.
            "write.wap.enabled": "true",
        }
        if target_file_size_bytes:
            props["write.target-file-size-bytes"] = str(target_file_size_bytes)
        for key, value in (maintenance or {}).items():
            if key not in MAINTENANCE_PROPERTIES:
                raise ModelConfigError(
                    f"Model {model}: unknown maintenance option '{key}'; known: "
                    + ", ".join(MAINTENANCE_PROPERTIES)
                )
            props[MAINTENANCE_PROPERTIES[key]] = _maintenance_value(model, key, value)
        props.update(tblproperties or {})
        return cls(props)

    @property
    def merge_mode(self) -> str:
        return str(self.properties["write.merge.mode"])

    def as_dict(self) -> dict[str, Any]:
        return dict(self.properties)


@dataclass(frozen=True)
class IncrementalConfig:
    """An incremental model's strategy, checked before anything is written.

    The strategy is known, and ``insert_overwrite`` has a partition_by (without one it
    would replace the whole Iceberg table on every run). ``merge`` without a unique_key
    is dbt's contract for an append through MERGE and is allowed; ``cdc`` needs a key,
    its own or its feed's (checked by :class:`CdcConfig`, which knows the feed).
    """

    strategy: str
    partition_by: tuple[str, ...] = ()

    @classmethod
    def from_options(cls, model: str, strategy: Any, partition_by: Any) -> IncrementalConfig:
        if strategy not in INCREMENTAL_STRATEGIES:
            # dbt's own wording (dbt-spark's validate.sql), with the model named
            raise ModelConfigError(
                f"Invalid incremental strategy provided: {strategy} (model {model})\n"
                "    Expected one of: '" + "', '".join(INCREMENTAL_STRATEGIES) + "'"
            )
        if strategy == "insert_overwrite" and not partition_by:
            raise ModelConfigError(
                f"Model {model}: incremental_strategy 'insert_overwrite' without "
                "partition_by would replace the whole Iceberg table on every run. "
                "Set partition_by, or use 'merge' with a unique_key."
            )
        return cls(str(strategy), tuple(_names(partition_by)))


def check_unique_key(model: str, unique_key: Any, columns: Iterable[Any]) -> None:
    """The unique_key columns exist among ``columns`` (names, or objects with ``.name``).

    Case and backticks are ignored, as Spark resolves columns; a misspelled key fails
    the run that has it instead of passing while no rows arrive.
    """
    if not unique_key:
        return
    names = [str(getattr(col, "name", col)).lower() for col in columns]
    missing = [k for k in _names(unique_key) if k.replace("`", "").strip().lower() not in names]
    if missing:
        raise ModelConfigError(
            f"Model {model}: unique_key column{'s ' if len(missing) > 1 else ' '}"
            f"{', '.join(missing)} not in the model's columns ({', '.join(names)}). "
            "Fix unique_key in the model's config."
        )


@dataclass(frozen=True)
class Scd2Config:
    """An scd2 model's config (docs/scd2.md; every option in scd2.sql's header)."""

    key_cols: tuple[str, ...]
    loads: str
    tracked: Any
    sk: str
    valid_from: str
    valid_to: str
    sentinel: str
    initial_eff_date: str | None
    delete_detection: str
    full_extract_kinds: tuple[str, ...]
    run_date: Any

    @classmethod
    def from_options(cls, model: str, options: Mapping[str, Any]) -> Scd2Config:
        """``options``: the model's scd2 config keys, plus the vars ``run_date`` and
        ``scd2_initial_eff_date`` (the model's ``initial_eff_date`` wins over the var)."""

        def get(name: str, default: Any = None) -> Any:
            value = options.get(name)
            return default if value is None else value

        mode = get("delete_detection", "auto")
        if mode not in DELETE_DETECTION:
            raise ModelConfigError(
                f"Model {model}: delete_detection '{mode}' is not one of auto, absence, status"
            )
        dates = {
            "sentinel": get("sentinel", "9999-12-31"),
            "initial_eff_date": get("initial_eff_date") or get("scd2_initial_eff_date"),
            "run_date": get("run_date"),
        }
        for option, value in dates.items():
            if value is not None and not _DATE.match(str(value)):
                raise ModelConfigError(
                    f"Model {model}: scd2 {option} '{value}' is not a date written YYYY-MM-DD"
                )
        initial = dates["initial_eff_date"]
        return cls(
            key_cols=tuple(_names(options.get("unique_key"))),
            loads=options["scd2_loads"],
            tracked=get("tracked_columns"),
            sk=get("surrogate_key", "sk"),
            valid_from=get("valid_from", "valid_from"),
            valid_to=get("valid_to", "valid_to"),
            sentinel=str(dates["sentinel"]),
            initial_eff_date=str(initial) if initial else None,
            delete_detection=str(mode),
            full_extract_kinds=tuple(get("full_extract_kinds", ["full"])),
            run_date=dates["run_date"],
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "key_cols": list(self.key_cols),
            "loads": self.loads,
            "tracked": self.tracked,
            "sk": self.sk,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "sentinel": self.sentinel,
            "initial_eff_date": self.initial_eff_date,
            "delete_detection": self.delete_detection,
            "full_extract_kinds": list(self.full_extract_kinds),
            "run_date": self.run_date,
        }


@dataclass(frozen=True)
class CdcPreset:
    """How one change format marks its operations and orders its changes (docs/cdc.md)."""

    op_column: str
    delete_ops: tuple[str, ...]
    upsert_ops: tuple[str, ...]
    null_op: str  # 'upsert' (a full load carries no op) or 'fail'
    delete_condition: str | None
    order_by: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "op_column": self.op_column,
            "delete_ops": list(self.delete_ops),
            "upsert_ops": list(self.upsert_ops),
            "null_op": self.null_op,
            "delete_condition": self.delete_condition,
            "order_by": list(self.order_by),
        }


# Options of a cdc model beyond its preset's, with their defaults.
CDC_DEFAULTS: Mapping[str, Any] = {
    "exclude_columns": [],
    "watermark_column": "_load_seq",
    "split": False,
    "key_list_max": 1000,
    "buckets": None,
}


@dataclass(frozen=True)
class CdcConfig:
    """A cdc model's resolved options: its preset, overridden by its own ``cdc`` options,
    and its key and partitioning (its own, else its feed's declaration)."""

    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_options(
        cls,
        model: str,
        options: Mapping[str, Any],
        presets: Mapping[str, CdcPreset],
        *,
        unique_key: Any,
        partition_by: Any,
        feed: str | None = None,
        feed_preset: str | None = None,
    ) -> CdcConfig:
        """``options``: the model's ``cdc`` option dict; ``unique_key`` / ``partition_by``:
        the model's, else its feed's; ``feed_preset``: the preset its feed's kind implies."""
        preset_name = options.get("preset") or feed_preset or "dms"
        if preset_name not in presets:
            raise ModelConfigError(
                f"Model {model}: cdc preset '{preset_name}' is not one of " + ", ".join(presets)
            )
        cfg: dict[str, Any] = {**presets[preset_name].as_dict(), **CDC_DEFAULTS}
        cfg["exclude_columns"] = []  # a fresh list per model
        for key, value in options.items():
            if key == "preset":
                continue
            if key not in cfg:
                raise ModelConfigError(
                    f"Model {model}: unknown cdc option '{key}'; known: " + ", ".join(cfg)
                )
            cfg[key] = value
        buckets = cfg["buckets"]
        if buckets is not None and not (_is_number(buckets) and buckets > 0):
            raise ModelConfigError(
                f"Model {model}: cdc.buckets must be a positive number of buckets, "
                f"got '{buckets!s}'"
            )
        key_list_max = cfg["key_list_max"]
        if not (_is_number(key_list_max) and key_list_max >= 0):
            raise ModelConfigError(
                f"Model {model}: cdc.key_list_max must be a number >= 0 (0: never list keys), "
                f"got '{key_list_max!s}'"
            )
        if cfg["split"] not in (True, False):
            raise ModelConfigError(
                f"Model {model}: cdc.split must be true or false, got '{cfg['split']!s}'"
            )
        if not unique_key:
            raise ModelConfigError(
                f"Model {model}: incremental_strategy 'cdc' needs a unique_key: set it on "
                "the model, or declare `key` on the feed it replicates (meta.floe, docs/feeds.md)"
            )
        cfg.update(
            unique_key=_names(unique_key),
            partition_by=_names(partition_by) if partition_by else partition_by,
            feed=feed,
            preset=preset_name,
        )
        return cls(cfg)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.options)
