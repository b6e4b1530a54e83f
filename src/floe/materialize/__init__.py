"""Python halves of floe's dbt materializations that are not SQL (seeds).

A room of its own (it imports no other floe room). The adapter plug-in
(:mod:`floe.adapter`) calls these from macros; each function takes the SparkSession
(and settings) it works on instead of looking them up.
"""
