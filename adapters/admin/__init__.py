"""Admin commands on a kcontrol (or Kafka, ZooKeeper-mode) cluster: the znodes Kafka's tools write.

Each module is the logic of one family of commands, callable without click: ``topics`` (create,
delete, describe, add-partitions, list), ``reassign`` (plans and their status),
``reassign_generate`` (``--generate``'s proposal), ``elect`` (preferred replica election).
``assignment`` is Kafka's replica placement rule and ``describe`` the lines of
``kafka-topics --describe``, both pure.
``connection`` opens and closes the kazoo client. Every refusal raises ``AdminError`` (message for
people; nothing written); the click layer is ``adapters.cli.admin_cmd`` and ``reassign_cmd``.
"""
