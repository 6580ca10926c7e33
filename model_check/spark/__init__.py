"""The model checker on Spark: the local engine's breadth-first search, distributed.

``spark_bfs(scenario, checks, options, SparkOptions(master, partitions))`` (``engine``)
returns the same ``Result`` as ``model_check.search.bfs`` plus the Spark settings it ran
with; the executors run the world and the controller through ``search.expand``.
"""
