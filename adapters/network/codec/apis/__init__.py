"""One module per API: its request and response, each declared once as data.

Only the versions this codec supports are declared (``Message.valid``); ``flexible`` is
Kafka's own flexibleVersions for the API, recorded even where it lies above ``valid``.
"""
