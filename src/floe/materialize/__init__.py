"""Python halves of floe's dbt materializations that are not SQL: seeds, microbatch, clone.

A room above :mod:`floe.runtime` (it imports only that). The adapter plug-in
(:mod:`floe.adapter`) calls these from macros; each function takes the SparkSession
(and settings) it works on instead of looking them up.
"""
