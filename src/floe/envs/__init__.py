"""Environments on Iceberg branches: zero-copy dev and CI builds, audited, then published.

An environment ``NAME`` is a branch ``env_NAME`` on every table a build in it writes,
made lazily by the first write (Iceberg's write-audit-publish, ``spark.wap.branch``);
every other table is read from main. ``FLOE_ENV=NAME dbt build`` builds into it,
``floe env publish NAME`` fast-forwards main of every changed table to its branch.
The contract is ``docs/envs.md``.
"""

from floe.envs.core import (
    BRANCH_PREFIX,
    CREATED_PROPERTY,
    Env,
    EnvError,
    EnvExists,
    EnvNotFound,
    EnvStatus,
    MainMoved,
    PublishConflict,
    branch_of,
    create,
    drop,
    expire_abandoned,
    list_envs,
    load,
    publish,
    rebase,
    require_env,
    status,
    table_for_build,
    validate_name,
)

__all__ = [
    "BRANCH_PREFIX",
    "CREATED_PROPERTY",
    "Env",
    "EnvError",
    "EnvExists",
    "EnvNotFound",
    "EnvStatus",
    "MainMoved",
    "PublishConflict",
    "branch_of",
    "create",
    "drop",
    "expire_abandoned",
    "list_envs",
    "load",
    "publish",
    "rebase",
    "require_env",
    "status",
    "table_for_build",
    "validate_name",
]
