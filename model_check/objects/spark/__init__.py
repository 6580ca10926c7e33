"""The object-world search on PySpark: ``engine.spark_bfs(kind, scenario, ...)`` returns the
same ``Result`` as ``objects.search.bfs``, level for level, with the Spark settings it ran
with; ``tasks`` is what the executors run."""
