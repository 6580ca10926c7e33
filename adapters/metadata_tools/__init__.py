"""Kafka's tools for the metadata log, over our files and quorum (issue 25): ``kcontrol
dump-log --cluster-metadata-decoder`` (``dump_format``) and ``kcontrol metadata-shell``
(``shell_tree``, ``shell_commands``, ``image_source``, ``quorum_reader``, ``repl``). The
formatting, the tree and the commands are pure; reading files and sockets is at the edges."""
